#!/bin/sh
# kv_testdata.sh: no false alarm from the verdicts of every cache on ONNX's
# conformance models (Debian's libonnx-testdata): `check` of the whole
# folder, one model at a time, finds 0 errors; a cache-copied only where
# kv_caches has a copied pair (one per such pair); kv_caches [] for a
# model without a pair; and every report has kv_caches.
#
# The data folder is $OAC_ONNX_TESTDATA, else libonnx-testdata's; without
# it the test says "skipped" (exit 77).
: "${OAC:?}" "${PYTHON3:?}"
dir=${OAC_ONNX_TESTDATA:-}
if [ -z "$dir" ]; then
    dir=$(dpkg -L libonnx-testdata 2>/dev/null | sed -n 's#/node/[^/]*/model.onnx$##p' | head -1)
    dir=${dir%/node}
fi
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "skipped: no ONNX test data (install libonnx-testdata or set OAC_ONNX_TESTDATA)"
    exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$OAC" --format=json "$dir" > "$tmp/r.json"
rc=$?
[ $rc -le 1 ] || { echo "FAIL: check of $dir exited $rc"; exit 1; }
n=$(find "$dir" -name '*.onnx' | wc -l)
"$PYTHON3" - "$tmp/r.json" "$n" <<'PY'
import json, sys
reports = json.load(open(sys.argv[1]))
if isinstance(reports, dict):
    reports = [reports]
bad = []
pairs = copied = 0
for r in reports:
    path = r["model"]["path"]
    if r["summary"]["errors"]:
        bad.append("%s: %d errors: %s" % (path, r["summary"]["errors"],
                   sorted({d["code"] for d in r["diagnostics"] if d["severity"] == "error"})))
    if "kv_caches" not in r:
        bad.append("%s: no kv_caches" % path)
        continue
    kv = r["kv_caches"]
    n_copied = sum(k["verdict"] == "copied" for k in kv)
    n_diag = sum(d["code"] == "cache-copied" for d in r["diagnostics"])
    if n_diag > n_copied:
        bad.append("%s: %d cache-copied for %d copied pairs" % (path, n_diag, n_copied))
    pairs += len(kv)
    copied += n_copied
for b in bad:
    print("FAIL: " + b)
print("%d models, 0 errors, %d pairs (%d copied), %d problems" %
      (len(reports), pairs, copied, len(bad)))
if len(reports) != int(sys.argv[2]):
    print("FAIL: %d reports for %s models" % (len(reports), sys.argv[2]))
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
