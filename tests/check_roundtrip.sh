#!/bin/sh
# check_roundtrip.sh: load + save keeps every field (contract 1 and 5).
#
# Every model of Debian's libonnx-testdata (when installed) and the
# builder's models (tests/roundtrip --gen, with the contract's fields,
# large payloads left in the mapping, subgraphs and functions) are loaded
# and saved by the library; then Debian's python + onnx, an independent
# parser, compares each pair: equal messages and equal SerializeToString
# (which normalises field order, so a payload written back after the
# tensor's other fields still compares equal).  Unknown fields (the
# contract's, to onnx) take part in both comparisons.
set -eu
: "${top_builddir:=.}"
: "${PYTHON3:=/usr/bin/python3}"
RT="$top_builddir/tests/roundtrip"
TESTDATA=/usr/share/libonnx-testdata/data

if ! "$PYTHON3" -c 'import onnx' 2>/dev/null; then
    echo "SKIP: $PYTHON3 has no onnx module"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/gen" "$tmp/out"
"$RT" --gen "$tmp/gen"
ls "$tmp"/gen/*.onnx > "$tmp/list"
if [ -d "$TESTDATA" ]; then
    find "$TESTDATA" -name model.onnx | sort >> "$tmp/list"
fi
# Examples written by the build, when present.
ls "$top_builddir"/examples/*.onnx >> "$tmp/list" 2>/dev/null || true
n=$(wc -l < "$tmp/list")
echo "round trip of $n models"
"$RT" "$tmp/out" < "$tmp/list"

"$PYTHON3" - "$tmp/list" "$tmp/out" <<'PY'
import sys
import onnx
paths = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
bad = 0
same_bytes = 0
for i, p in enumerate(paths):
    a_bytes = open(p, "rb").read()
    b_bytes = open("%s/%d.onnx" % (sys.argv[2], i), "rb").read()
    a = onnx.load_from_string(a_bytes)
    b = onnx.load_from_string(b_bytes)
    if a_bytes == b_bytes:
        same_bytes += 1
    if a != b or a.SerializeToString() != b.SerializeToString():
        print("DIFFERS:", p)
        bad += 1
print("%d models, %d byte-identical, %d differ" % (len(paths), same_bytes, bad))
sys.exit(1 if bad else 0)
PY

[ -d "$TESTDATA" ] || exit 0
mkdir "$tmp/tensors"
# The tensors among the .pb files: input_i / output_i whose graph input or
# output i has a tensor type (others are sequences, maps, optionals).
"$PYTHON3" - "$TESTDATA" > "$tmp/pblist" <<'PY'
import glob, os, sys
import onnx
for model in sorted(glob.glob(sys.argv[1] + "/**/model.onnx", recursive=True)):
    m = onnx.load(model)
    inits = {t.name for t in m.graph.initializer}
    ports = {"input": [v for v in m.graph.input if v.name not in inits],
             "output": list(m.graph.output)}
    for ds in sorted(glob.glob(os.path.dirname(model) + "/test_data_set_*")):
        for kind, vals in ports.items():
            for i, v in enumerate(vals):
                f = "%s/%s_%d.pb" % (ds, kind, i)
                if os.path.exists(f) and v.type.HasField("tensor_type"):
                    print(f)
PY
"$RT" --tensors "$tmp/tensors" < "$tmp/pblist"
"$PYTHON3" - "$tmp/pblist" "$tmp/tensors" <<'PY'
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper, TensorProto
paths = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()]
bad = checked = skipped = 0
for i, p in enumerate(paths):
    t = TensorProto()
    try:
        t.ParseFromString(open(p, "rb").read())
        ref = numpy_helper.to_array(t)
    except Exception:
        ref = None
    base = "%s/%d" % (sys.argv[2], i)
    if os.path.exists(base + ".skip"):
        skipped += 1
        continue
    got = open(base + ".bin", "rb").read()
    if ref is None:
        print("DIFFERS (onnx cannot decode):", p); bad += 1; continue
    if t.data_type == TensorProto.BFLOAT16:     # onnx 1.12 widens to float32
        ref = (np.asarray(ref, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    want = np.ascontiguousarray(ref).astype(ref.dtype.newbyteorder("<")).tobytes()
    checked += 1
    if got != want:
        print("DIFFERS:", p, TensorProto.DataType.Name(t.data_type), len(got), len(want))
        bad += 1
print("%d tensors decoded equal, %d skipped (no fixed size), %d differ" % (checked - bad, skipped, bad))
sys.exit(1 if bad else 0)
PY
