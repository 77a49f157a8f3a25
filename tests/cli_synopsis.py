"""cli_synopsis.py: the synopses and per-command help agree with the
options table (src/cli_opts.def) everywhere a user reads them.

From the table (and the command rows of src/cli_opts.c: head, required
option, tail), each command's synopsis is computed here, independently
of the tool: its options in table order, "[SPELLING]" each ("..." when
CLI_REPEAT, or CLI_REPEAT_CHECK on check's line), actions (CLI_MODE) on lines of their own.  Then:

 1. `help COMMAND` opens with that synopsis (and the command's actions),
    and its Options section lists exactly the table's options of that
    command: `help run` shows no annotate-only option, nor a word of
    another command's help (sarif, "annotated model").
 2. `--help` opens with every synopsis, then the action lines.
 3. The man page's SYNOPSIS section, roff made plain, is the same lines.
 4. README.md's "Using it" block is the same lines.

Usage: cli_synopsis.py SRCDIR OAC
"""
import re
import subprocess
import sys

srcdir, oac = sys.argv[1:3]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def norm(s):
    return " ".join(s.split())


opts_def = open(srcdir + "/src/cli_opts.def").read()
rows = re.findall(r'^CLI_OPT\((\w+),\s*"([a-z-]+)",\s*(\'.\'|0),\s*("[^"]*"|NULL),\s*([^,]+),',
                  opts_def, re.M)
if len(rows) < 20:
    fail("only %d rows read from src/cli_opts.def" % len(rows))
opts = []
for oid, lng, shrt, arg, cmds in rows:
    opts.append({"id": oid, "long": lng, "short": shrt[1] if shrt != "0" else None,
                 "arg": None if arg == "NULL" else arg.strip('"'),
                 "cmds": {c.strip() for c in cmds.split("|")}})

cli_c = open(srcdir + "/src/cli_opts.c").read()
cmd_rows = re.findall(r'\{ "(\w+)", CLI_CMD_\w+, (CLI_FOR_\w+), "([^"]*)", (-1|CLI_OPT_\w+),\s*'
                      r'"([^"]*)"', cli_c)
if [c[0] for c in cmd_rows] != ["check", "run", "annotate"]:
    fail("command rows of src/cli_opts.c not read: %s" % [c[0] for c in cmd_rows])


def spelling(o, arg=None, long_form=False):
    a = arg or o["arg"]
    if o["short"] and not long_form:
        return "-%s%s" % (o["short"], " " + a if a else "")
    return "--%s%s" % (o["long"], "" if not a else (" " if "=" in a else "=") + a)


def is_mode(o):
    return "CLI_MODE" in o["cmds"]


synopses = {}
for name, bit, head, required, tail in cmd_rows:
    words = [head]
    for o in opts:
        if bit in o["cmds"] and not is_mode(o) and "CLI_OPT_" + o["id"] != required:
            again = "CLI_REPEAT" in o["cmds"] or (
                "CLI_REPEAT_CHECK" in o["cmds"] and bit == "CLI_FOR_CHECK")
            words.append("[%s]%s" % (spelling(o), "..." if again else ""))
    if required != "-1":
        words.append(spelling([o for o in opts if "CLI_OPT_" + o["id"] == required][0],
                              "OUT.onnx"))
    words.append(tail)
    synopses[name] = "onnx-alias-check " + " ".join(words)
fmt = spelling([o for o in opts if o["id"] == "FORMAT"][0])
all_cmds = {"CLI_FOR_CHECK", "CLI_FOR_RUN", "CLI_FOR_ANNOTATE"}


def modes(bit):
    """The action lines of one command (bit) or of all (None)."""
    out = []
    for o in opts:
        if not is_mode(o) or (bit and bit not in o["cmds"]):
            continue
        if all_cmds <= o["cmds"]:
            continue
        out.append("onnx-alias-check %s [%s]" % (spelling(o, long_form=True), fmt))
    if bit is None:
        out.append("onnx-alias-check " + " | ".join(
            spelling(o, long_form=True) for o in opts if is_mode(o) and all_cmds <= o["cmds"]))
    return out


every = [synopses[c[0]] for c in cmd_rows] + ["onnx-alias-check help [COMMAND]"] + modes(None)


def usage_lines(text):
    """The Usage block of a help text: its lines up to the first blank
    one, continuation lines joined, as normalized lines."""
    block = text.split("\n\n", 1)[0]
    block = re.sub(r"^Usage: ", "", block)
    out = []
    for line in block.split("\n"):
        if line.startswith(" " * 20) and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return [norm(l) for l in out]


def run(*args):
    return subprocess.run([oac] + list(args), stdout=subprocess.PIPE, text=True).stdout


# ---- 1. help COMMAND -----------------------------------------------------
for name, bit, head, required, tail in cmd_rows:
    text = run("help", name)
    want = [synopses[name]] + modes(bit)
    if usage_lines(text) != want:
        fail("help %s: the synopsis is\n  %s\nthe table gives\n  %s"
             % (name, "\n  ".join(usage_lines(text)), "\n  ".join(want)))
    listed = re.findall(r"^  (?:-\w, |    )--([a-z-]+)", text.split("\nOptions:\n", 1)[-1], re.M)
    mine = [o["long"] for o in opts if bit in o["cmds"]]
    if listed != mine:
        fail("help %s lists the options %s; the table's for %s are %s" % (name, listed, name, mine))
    if text != run(name, "--help"):
        fail("help %s and %s --help differ" % (name, name))
    others = {"run": ["annotated model", "several models", "genai_config"],
              "annotate": ["sarif", "gitlab", "--werror", "--steps"],
              "check": ["annotated model", "--steps"]}[name]
    for word in others:
        if word in text:
            fail("help %s speaks of %r, which is another command's" % (name, word))

# ---- 2. --help -----------------------------------------------------------
got = usage_lines(run("--help"))
if got != every:
    fail("--help: the synopses are\n  %s\nthe table gives\n  %s"
         % ("\n  ".join(got), "\n  ".join(every)))

# ---- 3. the man page -----------------------------------------------------
man = open(srcdir + "/man/onnx-alias-check.1").read()
sec = man.split("\n.SH SYNOPSIS\n", 1)[-1].split("\n.SH ", 1)[0]
man_lines = []
for para in sec.split("\n.PP\n"):
    words = []
    for line in para.strip().split("\n"):
        if re.match(r"^\.(nh|hy)$", line):
            continue
        line = re.sub(r"^\.B ", "", line)
        line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\ ", " ")
        words.append(line)
    man_lines.append(norm(" ".join(words)))
if man_lines != every:
    fail("man page SYNOPSIS is\n  %s\nthe table gives\n  %s"
         % ("\n  ".join(man_lines), "\n  ".join(every)))

# ---- 4. README -----------------------------------------------------------
readme = open(srcdir + "/README.md").read()
block = readme.split("\n## Using it\n", 1)[-1].lstrip("\n").split("\n\n", 1)[0]
readme_lines = []
for line in block.split("\n"):
    if line.startswith("    onnx-alias-check"):
        readme_lines.append(line.strip())
    elif readme_lines and line.strip():
        readme_lines[-1] += " " + line.strip()
readme_lines = [norm(l) for l in readme_lines]
if readme_lines != every:
    fail("README's \"Using it\" synopses are\n  %s\nthe table gives\n  %s"
         % ("\n  ".join(readme_lines), "\n  ".join(every)))

print("cli_synopsis: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
