"""doc_annotations.py: doc/annotations.md agrees with the sources.

Run by tests/doc_annotations.sh (which passes the paths).  Checks:

 1. Every row of the doc's field table (| `Message` | `field` | number |)
    names a field (or enum value) of proto/onnx.proto with that number,
    and every field the contract adds (a field or enum value numbered
    from 1001) and every field of the contract's own messages is in the
    table.
 2. Every operator of lib/ops.def's section-6 rows (OAC_OPF_ALIAS_TABLE)
    and of the cache-update rows (OAC_OPF_CACHE_UPDATE) has a table row
    in the doc with its domain, and for rows that can alias, each of its
    pairs as "in->out".
 3. Every diagnostic code the doc names in backquotes is a code of
    include/oac_diag.def (no stale names).
 4. The examples are real: the ```python blocks, run in order, write the
    models named by "<!-- expect FILE: ... -->" lines, and each
    ```textproto block preceded by "<!-- expect: ... -->" is encoded with
    protoc over proto/onnx.proto; each model is checked by the tool and
    must report exactly the codes expected ("ok": none).

Usage: doc_annotations.py SRCDIR OAC PROTOC
"""
import json
import os
import re
import subprocess
import sys
import tempfile

srcdir, oac, protoc = sys.argv[1:4]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


doc = open(os.path.join(srcdir, "doc", "annotations.md")).read()
proto_path = os.path.join(srcdir, "proto", "onnx.proto")
proto = open(proto_path).read()
ops_def = open(os.path.join(srcdir, "lib", "ops.def")).read()
diag_def = open(os.path.join(srcdir, "include", "oac_diag.def")).read()

# ---- 1. field numbers ------------------------------------------------------
# A small reader of proto2 syntax: qualified message/enum name -> {name: number}.
text = re.sub(r"//[^\n]*", "", proto)
tokens = re.findall(r"[A-Za-z_][A-Za-z0-9_.]*|-?\d+|0x[0-9a-fA-F]+|[{};=<>,\[\]()]", text)
fields = {}
stack = []
i = 0
pending = None
while i < len(tokens):
    t = tokens[i]
    if t in ("message", "enum") and i + 2 < len(tokens) and tokens[i + 2] == "{":
        pending = tokens[i + 1]
        i += 2
        continue
    if t == "oneof" and i + 2 < len(tokens) and tokens[i + 2] == "{":
        pending = ""            # a oneof's fields belong to its message
        i += 2
        continue
    if t == "{":
        stack.append(pending)
        pending = None
    elif t == "}":
        stack.pop()
    elif t == "=" and stack and i + 1 < len(tokens) and i >= 1:
        scope = ".".join(s for s in stack if s)
        name = tokens[i - 1]
        num = tokens[i + 1]
        if re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", num) and name not in ("default",):
            fields.setdefault(scope, {})[name] = int(num, 0)
    i += 1
if len(fields.get("NodeProto", {})) < 10 or "ValueAliasProto.Kind" not in fields:
    fail("could not read %s (messages read: %s)" % (proto_path, sorted(fields)[:10]))

rows = re.findall(r"^\| `([A-Za-z.]+)` \| `([A-Za-z_]+)` \| (\d+) \|", doc, re.M)
if len(rows) < 40:
    fail("only %d field rows read from doc/annotations.md" % len(rows))
documented = set()
for msg, name, num in rows:
    documented.add((msg, name))
    got = fields.get(msg, {}).get(name)
    if got is None:
        fail("doc: %s.%s is not in proto/onnx.proto" % (msg, name))
    elif got != int(num):
        fail("doc: %s.%s is %s, proto/onnx.proto says %d" % (msg, name, num, got))
# The contract's additions and the contract's own messages, all documented.
contract_msgs = ["ValueAliasProto", "ValueAliasProto.Kind", "ValueInfoProto.Access",
                 "TypeProto.QuantizedTensor", "QuantizedTensorProto", "QuantizationProto",
                 "LinearUniformProto", "FloatingPointUniformProto"]
for msg, members in fields.items():
    for name, num in members.items():
        if (num >= 1001 or msg in contract_msgs) and (msg, name) not in documented:
            fail("doc/annotations.md's field table lacks %s.%s = %d" % (msg, name, num))

# ---- 2. operators ------------------------------------------------------------
op_rows = re.findall(r'^OAC_OP\(\w+,\s*"([^"]*)",\s*"(\w+)"(.*?)\)\s*$(?=\s*(?:OAC_OP|/\*|\Z))',
                     ops_def, re.M | re.S)
table_ops = [(d, op, body) for d, op, body in op_rows
             if "OAC_OPF_ALIAS_TABLE" in body or "OAC_OPF_CACHE_UPDATE" in body]
if len(table_ops) < 12:
    fail("only %d section-6 and cache-update rows read from lib/ops.def" % len(table_ops))
doc_rows = [l for l in doc.splitlines() if l.startswith("|")]
for domain, op, body in table_ops:
    dom = "`%s`" % domain if domain else "ONNX"
    mine = [l for l in doc_rows
            if "| `%s` |" % op in l and l.split("|")[1].strip().startswith(dom)]
    if not mine:
        fail("doc/annotations.md has no table row for %s %s (lib/ops.def)" % (dom, op))
        continue
    if "OAC_COND_NEVER" in body:
        continue
    for a, b in re.findall(r"\{\s*(\d+),\s*(\d+)\s*\}", body.split("OAC_PAIRS", 1)[-1].split(")")[0]):
        if "%s->%s" % (a, b) not in mine[0]:
            fail("doc: the row of %s %s lacks the pair %s->%s of lib/ops.def" % (dom, op, a, b))

# ---- 3. codes ------------------------------------------------------------------
codes = set(re.findall(r'^OAC_DIAG\(\w+,\s*"([a-z-]+)"', diag_def, re.M))
if len(codes) < 20:
    fail("only %d codes read from include/oac_diag.def" % len(codes))
for word in sorted(set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", doc))):
    looks_like_code = word.split("-")[0] in ("alias", "access", "type", "rank", "shape",
                                               "capacity", "branch", "page", "operand",
                                               "parse", "model", "external", "metadata")
    if looks_like_code and word not in codes:
        fail("doc names `%s`, which is no code of include/oac_diag.def" % word)

# ---- 4. the examples ---------------------------------------------------------------
def check_model(what, path, want, args=None):
    r = subprocess.run([oac, "--format=json"] + (args or []) + [path], capture_output=True,
                       text=True)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        fail("%s: no JSON report (exit %d): %s" % (what, r.returncode, r.stderr.strip()))
        return
    got = {d["code"] for d in rep["diagnostics"]}
    # With options, the example says they decide every rule: none unchecked.
    if args is not None and rep.get("unchecked"):
        got.add("unchecked")
    got = sorted(got)
    exp = [] if want == ["ok"] else sorted(want)
    if got != exp:
        fail("%s: the tool reports %s, the doc says %s" % (what, got or "ok", want))


tmp = tempfile.mkdtemp()
py = "\n".join(re.findall(r"^```python\n(.*?)^```", doc, re.M | re.S))
expects = re.findall(r"^<!-- expect ([\w.]+)(?: with ([^:]+))?: ([\w -]+?) -->", doc, re.M)
if not py or len(expects) < 2:
    fail("no python example or no expect FILE lines in doc/annotations.md")
else:
    r = subprocess.run([sys.executable, "-c", py], cwd=tmp, capture_output=True, text=True)
    if r.returncode != 0:
        fail("the python example fails:\n" + r.stderr)
    else:
        for name, args, want in expects:
            arg_list = [a if not a.startswith(tuple("-")) and "=" not in a else
                        re.sub(r"=(\w+\.pb)$", lambda m: "=" + os.path.join(tmp, m.group(1)), a)
                        for a in args.split()] if args else None
            check_model("python example %s %s" % (name, args or ""), os.path.join(tmp, name),
                        want.split(), arg_list)
blocks = re.findall(r"^<!-- expect: ([\w -]+?) -->\n```textproto\n(.*?)^```", doc, re.M | re.S)
if len(blocks) < 3:
    fail("only %d textproto examples with an expectation" % len(blocks))
for k, (want, body) in enumerate(blocks):
    path = os.path.join(tmp, "text%d.onnx" % k)
    with open(path, "wb") as f:
        r = subprocess.run([protoc, "--proto_path=" + os.path.dirname(proto_path),
                            "--encode=onnx.ModelProto", proto_path],
                           input=body.encode(), stdout=f, stderr=subprocess.PIPE)
    if r.returncode != 0:
        fail("textproto example %d does not encode: %s" % (k + 1, r.stderr.decode().strip()))
        continue
    check_model("textproto example %d" % (k + 1), path, want.split())

subprocess.run(["rm", "-rf", tmp])
sys.exit(1 if failures else 0)
