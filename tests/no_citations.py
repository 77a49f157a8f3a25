"""no_citations.py: no user-facing text cites a document the user does not
have: "contract section 4", "section 6's table", "issue 13", "contract 8".
What such a citation points to belongs in the shipped documentation
(doc/annotations.md, the man page) or nowhere.

User-facing text, as read here:
 - the string literals of the library and the tool (lib/, src/,
   include/*.def: messages, help, --explain, --list-rules), of the
   benchmarks (bench/*.c) and of the Python module (its docstrings too:
   help() shows them); comments are the developers' and may cite;
 - the man page (its roff comments aside), README.md, doc/*.md;
 - every string of the JSON Schemas (schemas/*.json: descriptions);
 - what the bench and user scripts print (bench/*.sh, scripts/*.sh: the
   lines that are not comments), the CI examples and the pre-commit
   hook (examples/ci/*.yml, .pre-commit-hooks.yaml, comments included:
   a user copies them).
The output of --help, help COMMAND, --list-rules and every --explain is
read too, as the tool prints it.

Usage: no_citations.py SRCDIR OAC
"""
import glob
import json
import os
import re
import subprocess
import sys
import tokenize

srcdir, oac = sys.argv[1:3]
CITE = re.compile(r"\b(?:contract|issue|section)s?\b,?\s*(?:section\s*)?#?\d+|§\s*\d+", re.I)
found = []


def scan(where, text):
    for lineno, line in enumerate(text.split("\n"), 1):
        for m in CITE.finditer(line):
            found.append("%s:%d: %s  (%s)" % (where, lineno, m.group(0), line.strip()[:120]))


def c_strings(text):
    """The string literals of C source, comments removed; each literal
    at the line it starts on, the others blank (so line numbers hold)."""
    out, i, n = [], 0, len(text)
    lines = [""] * (text.count("\n") + 1)
    line = 0
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            lines[line] += text[i + 1:j] + " "
            line += text.count("\n", i, j)
            i = j + 1
        else:
            line += c == "\n"
            i += 1
    return "\n".join(lines)


def rel(p):
    return os.path.relpath(p, srcdir)


for pat in ("lib/**/*.c", "lib/**/*.h", "lib/**/*.def", "src/*.c", "src/*.h", "src/*.def",
            "include/*.def", "include/*.h", "bench/*.c"):
    for p in sorted(glob.glob(os.path.join(srcdir, pat), recursive=True)):
        scan(rel(p), c_strings(open(p, errors="replace").read()))

for p in sorted(glob.glob(os.path.join(srcdir, "python", "**", "*.py"), recursive=True)):
    with open(p, "rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type == tokenize.STRING:
                scan("%s:%d" % (rel(p), tok.start[0]), tok.string)

man = os.path.join(srcdir, "man", "onnx-alias-check.1")
scan(rel(man), "\n".join("" if l.startswith('.\\"') else l.replace("\\-", "-")
                         for l in open(man).read().split("\n")))
for p in [os.path.join(srcdir, "README.md")] + sorted(glob.glob(os.path.join(srcdir, "doc", "*.md"))):
    scan(rel(p), open(p).read())


def json_strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from json_strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from json_strings(x)


for p in sorted(glob.glob(os.path.join(srcdir, "schemas", "*.json"))):
    for s in json_strings(json.load(open(p))):
        scan(rel(p), s)

for p in sorted(glob.glob(os.path.join(srcdir, "bench", "*.sh")) +
                glob.glob(os.path.join(srcdir, "scripts", "*.sh"))):
    scan(rel(p), "\n".join("" if l.lstrip().startswith("#") else l
                           for l in open(p).read().split("\n")))
for p in sorted(glob.glob(os.path.join(srcdir, "examples", "ci", "*.yml")) +
                [os.path.join(srcdir, ".pre-commit-hooks.yaml")]):
    scan(rel(p), open(p).read())


def tool(*args):
    return subprocess.run([oac] + list(args), stdout=subprocess.PIPE, text=True).stdout


outputs = {"--help": tool("--help"), "--list-rules": tool("--list-rules"),
           "--list-rules --format=json": tool("--list-rules", "--format=json")}
for cmd in ("check", "run", "annotate"):
    outputs["help " + cmd] = tool("help", cmd)
codes = [l.split()[0] for l in outputs["--list-rules"].splitlines() if l.strip()]
if len(codes) < 20:
    found.append("--list-rules lists only %d codes" % len(codes))
for c in codes:
    outputs["--explain " + c] = tool("--explain", c)
for what, text in outputs.items():
    scan("`onnx-alias-check %s`" % what, text)

for f in found:
    print("FAIL: a citation in user-facing text: " + f)
print("no_citations: %d citation(s)" % len(found))
sys.exit(1 if found else 0)
