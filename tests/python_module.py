"""python_module.py: the Python module (python/onnx_alias_check) with
Debian's python3 and python3-onnx (issue 13, item 8; acceptance 4).

A decoder is built in Python with onnx.helper, as an export script would
build or hold it, and checked without writing a file: the report is the
dict the command line prints as JSON for the same bytes; dims and werror
are honoured; a broken model is a report with its diagnostics, a usage
error an exception; annotate in memory returns bytes that onnx still
reads and that check clean with werror.  Run by python_module.sh with
ONNX_ALIAS_CHECK_LIBRARY pointing to the build tree's shared library.
"""
import json
import os
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

import onnx_alias_check as oac

OAC = os.environ["OAC"]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def codes(report):
    return [d["code"] for d in report["diagnostics"]]


def gqa_decoder(layers=1):
    """A stock GroupQueryAttention decoder, as GenAI's exports are: pasts
    in, presents out, nothing saying they share storage."""
    kv = ["batch", 2, "past_seq_len", 16]
    present = ["batch", 2, "total_seq_len", 16]
    inputs = [helper.make_tensor_value_info("q", TensorProto.FLOAT, ["batch", "seq", 64]),
              helper.make_tensor_value_info("k", TensorProto.FLOAT, ["batch", "seq", 32]),
              helper.make_tensor_value_info("v", TensorProto.FLOAT, ["batch", "seq", 32])]
    outputs, nodes = [], []
    for l in range(layers):
        for s in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(
                "past_key_values.%d.%s" % (l, s), TensorProto.FLOAT, kv))
    inputs += [helper.make_tensor_value_info("seqlens_k", TensorProto.INT32, ["batch"]),
               helper.make_tensor_value_info("total_sequence_length", TensorProto.INT32, [])]
    for l in range(layers):
        nodes.append(helper.make_node(
            "GroupQueryAttention",
            ["q", "k", "v", "past_key_values.%d.key" % l, "past_key_values.%d.value" % l,
             "seqlens_k", "total_sequence_length"],
            ["attn_%d" % l, "present.%d.key" % l, "present.%d.value" % l],
            name="GQA_%d" % l, domain="com.microsoft", num_heads=4, kv_num_heads=2))
        outputs += [helper.make_tensor_value_info("attn_%d" % l, TensorProto.FLOAT,
                                                  ["batch", "seq", 64]),
                    helper.make_tensor_value_info("present.%d.key" % l, TensorProto.FLOAT, present),
                    helper.make_tensor_value_info("present.%d.value" % l, TensorProto.FLOAT,
                                                  present)]
    graph = helper.make_graph(nodes, "decoder", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("com.microsoft", 1)])


def cli_report(data, *args):
    """The command line's JSON report of the same bytes (a scratch file)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as f:
            f.write(data)
        p = subprocess.run([OAC, "check", "--format=json", *args, path],
                           stdout=subprocess.PIPE, check=False)
        return json.loads(p.stdout), path


model = gqa_decoder()
data = model.SerializeToString()

# 1. In memory, from the ModelProto itself and from its bytes.
r = oac.check(model)
expect(isinstance(r, dict) and r["tool"]["name"] == "onnx-alias-check", "check returns the report")
expect(r["model"]["path"] == "<buffer>", "an in-memory model is <buffer>")
expect(oac.check(data) == r and oac.check(bytearray(data)) == r, "ModelProto, bytes, bytearray agree")

# 2. The command line's verdict on the same bytes.
want, path = cli_report(data)
r = oac.check(data, name=path)
expect(r == want, "the report is the command line's: %s" % (set(codes(r)) ^ set(codes(want))))
# The stock decoder's caches are only implied: warnings, not errors.
expect(r["summary"]["errors"] == 0 and r["summary"]["warnings"] >= 1, "stock decoder: warnings")
expect(r["status"] == "ok", "warnings alone: status ok")

# 3. werror turns those warnings into the verdict.
rw = oac.check(model, werror=True)
expect(rw["status"] == "error", "werror: status error")
expect(rw["diagnostics"] == r["diagnostics"], "werror changes the verdict, not the findings")

# 4. dims bind: the command line's --dim gives the same report.
dims = {"batch": 1, "seq": 1, "past_seq_len": 7, "total_seq_len": 8}
want, path = cli_report(data, *[a for k, v in dims.items() for a in ("--dim", "%s=%d" % (k, v))])
rd = oac.check(data, dims=dims, name=path)
expect(rd == want, "dims: the report is the command line's with --dim")
# Planned outputs at those dims, float32: attn [1,1,64] and two presents
# [1,2,8,16]; unknown without them.
expect(rd["memory_plan"]["planned_output_bytes"] == 4 * (1 * 1 * 64 + 2 * (1 * 2 * 8 * 16)),
       "dims: planned_output_bytes %s" % rd["memory_plan"]["planned_output_bytes"])
expect(oac.check(data)["memory_plan"]["planned_output_bytes"] is None, "no dims: unknown")
try:
    oac.check(model, dims={"no_such_dim": 3})
    expect(False, "an unknown dim raises")
except ValueError as e:
    expect("dims['no_such_dim']" in str(e) and "--dim" not in str(e),
           "the ValueError names the dim as the argument it came in: %s" % e)

for bad_dims, exc in (({"batch": -1}, ValueError), ({"batch": 2 ** 64}, ValueError),
                      ({"batch": 0}, ValueError), ({"batch": "1"}, TypeError)):
    try:
        oac.check(model, dims=bad_dims)
        expect(False, "dims %r raise %s" % (bad_dims, exc.__name__))
    except exc:
        pass
# capacity as the command line's --capacity: 1 .. 2**63-1, never truncated
# (2**64 + 5 is not 5), a usage error a ValueError, not a report.
for bad_cap, exc in ((2 ** 64 + 5, ValueError), (-1, ValueError), (0, ValueError),
                     (2 ** 63, ValueError), ("8", TypeError)):
    try:
        oac.annotate(model, capacity=bad_cap)
        expect(False, "capacity %r raises %s" % (bad_cap, exc.__name__))
    except exc:
        pass

# 5. Broken models: their diagnostics, not an exception.
r = oac.check(data[: len(data) // 2])
expect(r["status"] == "error" and "parse-error" in codes(r), "truncated bytes: parse-error")
bad = gqa_decoder()
bad.graph.node[0].input[0] = "nowhere"          # a value nothing produces
r = oac.check(bad)
want, _ = cli_report(bad.SerializeToString())
expect(r["status"] == "error", "a dangling input is an error")
expect(codes(r) == codes(want), "the dangling input: the command line's codes %s" % codes(want))
r = oac.check("/nonexistent/model.onnx")
expect("parse-error" in codes(r), "a missing path: parse-error")

# 6. annotate in memory: bytes that onnx reads and that check clean.
ann, rep = oac.annotate(model)
expect(rep["status"] == "ok" and ann is not None, "annotate: status ok, bytes")
expect(rep["output"] == {"path": None, "written": True}, "annotate: written in memory")
expect([p["verdict"] for p in rep["pairs"]] == ["annotated", "annotated"], "both pairs annotated")
if ann is not None:
    back = onnx.load_model_from_string(ann)
    expect([n.op_type for n in back.graph.node] == ["GroupQueryAttention"], "onnx reads it back")
    r = oac.check(ann, werror=True)
    expect(r["status"] == "ok" and r["summary"]["warnings"] == 0,
           "the annotated model checks clean with werror: %s" % codes(r))
    again, rep2 = oac.annotate(ann)
    expect(again == ann and [p["verdict"] for p in rep2["pairs"]] == ["kept", "kept"],
           "annotating twice changes nothing")

# Without ONNX_ALIAS_CHECK_LIBRARY, and an install recorded where nothing
# is (make install DESTDIR=... leaves the libdir empty), the module falls
# back to the soname, which LD_LIBRARY_PATH finds.
lib = os.environ.get("ONNX_ALIAS_CHECK_LIBRARY")
if lib:
    pkg = tempfile.mkdtemp()
    try:
        mod = os.path.join(pkg, "onnx_alias_check")
        os.makedirs(mod)
        src = os.path.join(os.path.dirname(oac.__file__), "__init__.py")
        with open(src) as f, open(os.path.join(mod, "__init__.py"), "w") as g:
            g.write(f.read())
        with open(os.path.join(mod, "_paths.py"), "w") as g:
            g.write("LIBDIR = %r\nLIBNAME = %r\n" % (os.path.join(pkg, "no-such-libdir"),
                                                     os.path.basename(lib)))
        env = {k: v for k, v in os.environ.items() if k != "ONNX_ALIAS_CHECK_LIBRARY"}
        code = ("import onnx_alias_check as o, sys; "
                "r = o.check(sys.argv[1]); print('loaded', r['status'])")
        example = os.path.join(pkg, "m.onnx")
        with open(example, "wb") as g:
            g.write(model.SerializeToString())
        for ld, want in ((os.path.dirname(lib), "loaded"), (None, "OSError")):
            e2 = dict(env, PYTHONPATH=pkg)
            if ld:
                e2["LD_LIBRARY_PATH"] = ld
            else:
                e2.pop("LD_LIBRARY_PATH", None)
            p = subprocess.run([sys.executable, "-c", code, example], env=e2,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            got = p.stdout.strip() if p.returncode == 0 else p.stderr.strip()
            expect(want in got and (ld or "LD_LIBRARY_PATH" in got),
                   "soname fallback (LD_LIBRARY_PATH=%s): %s" % (ld, got[-300:]))
    finally:
        subprocess.run(["rm", "-rf", pkg])

print("python module: %d failure(s), library %s" % (len(failures), oac.library_path()))
sys.exit(1 if failures else 0)
