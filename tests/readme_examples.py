"""readme_examples.py: every output README.md shows is what the command
prints today, as curl and jq test their manuals' examples.

An example is an indented block (4 spaces) of README.md whose lines
start with "$ ": each "$ COMMAND" line is run with sh, from a folder
laid out as the build folder the README speaks from (src/, examples/,
bench/ of the build, linked), and its standard output must be the lines
that follow it, up to the next "$ " line or the block's end, exactly.
Continuation lines of a command end in a backslash.

A benchmark's numbers are its machine's: for a command that starts with
"bench/", decimals (times, ratios, with the spaces that pad them) and the verdicts that depend on them
("met", "MISSED", "NOT met", "yes", "NO") are compared as placeholders; every other
character (the columns, the capacities, the bytes) must match.

Usage: readme_examples.py README BUILDDIR [--print]
  --print: print each example's command and what it prints now (to
  update the README by hand), compare nothing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

readme, build = sys.argv[1], os.path.abspath(sys.argv[2])
show = "--print" in sys.argv[3:]
failures = []


def examples(text):
    """(line number, command, expected lines) of every "$ " example."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^( {4,})\$ (.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, cmd, start = m.group(1), m.group(2), i + 1
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        want = []
        i += 1
        while i < len(lines) and lines[i].startswith(indent) and \
                not lines[i].startswith(indent + "$ "):
            want.append(lines[i][len(indent):])
            i += 1
        while want and not want[-1].strip():
            want.pop()
        # A blank line inside a block ends it unless the block goes on.
        out.append((start, cmd, want))
        while i < len(lines) and not lines[i].strip():
            i += 1
    return out


def masked(cmd, lines):
    if not cmd.startswith("bench/"):
        return lines
    return [re.sub(r"\b(?:NOT met|MISSED|met|yes|NO)\b", "<verdict>",
                   re.sub(r" *\d+\.\d+", " <n.n>", l)) for l in lines]


work = tempfile.mkdtemp(prefix="readme_examples.")
try:
    for d in ("src", "examples", "bench"):
        if os.path.isdir(os.path.join(build, d)):
            os.symlink(os.path.join(build, d), os.path.join(work, d))
    # As the README runs them: no ONNX Runtime for bench_decode to find.
    env = {k: v for k, v in os.environ.items() if k != "ORT_NODE_PATH"}
    found = examples(open(readme).read())
    if len(found) < 4:
        failures.append("only %d examples in %s" % (len(found), readme))
    for line, cmd, want in found:
        p = subprocess.run(["sh", "-c", cmd], cwd=work, stdout=subprocess.PIPE, env=env,
                           stderr=subprocess.PIPE, text=True, timeout=600)
        got = p.stdout.rstrip("\n").split("\n") if p.stdout.strip() else []
        if show:
            print("$ " + cmd + "\n" + "\n".join(got) + "\n")
            continue
        if masked(cmd, got) != masked(cmd, want):
            failures.append("README.md:%d: `%s` (exit %d) prints\n%s\nthe README shows\n%s%s"
                            % (line, cmd, p.returncode, "\n".join("    " + l for l in got),
                               "\n".join("    " + l for l in want),
                               "\n  its stderr: " + p.stderr.strip() if p.stderr.strip() else ""))
finally:
    shutil.rmtree(work)

for f in failures:
    print("FAIL: " + f)
if not show:
    print("readme_examples: %d example(s), %d failure(s)" % (len(found), len(failures)))
sys.exit(1 if failures else 0)
