#!/bin/sh
# real_models_check.sh: the check half of issue 10's acceptance 3 on the
# real decoders of ../shared/real-models (README there), when present.
#
# Contract section 6: the stock TensorScatter decoder (opset 24) and the
# stock GroupQueryAttention decoder each get one alias-implied per K/V
# pair (2 layers x 2 pairs), naming the present output and suggesting
# `onnx-alias-check annotate`, and no error (exit 0).  The GPT-2 whose
# com.microsoft Attention has no past_present_share_buffer grows its
# present: nothing can share storage, so nothing is implied (0 findings,
# exit 0).
#
# The folder is $OAC_REAL_MODELS, else ../shared/real-models beside the
# source tree; without it the test says "skipped" (exit 77).
: "${top_srcdir:?}" "${OAC:?}" "${PYTHON3:?}"
dir=${OAC_REAL_MODELS:-$top_srcdir/../shared/real-models}
if [ ! -f "$dir/tiny-qwen35-gqa-decoder.onnx" ]; then
    echo "skipped: no real models in $dir (set OAC_REAL_MODELS)"
    exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect MODEL EXIT N_IMPLIED N_OTHER PRESENT...: the check of MODEL exits
# EXIT with N_IMPLIED alias-implied warnings, one per PRESENT (each names
# it as its value and suggests annotate), and N_OTHER other findings.
expect() {
    model=$1 want_rc=$2 n_implied=$3 n_other=$4
    shift 4
    "$OAC" --format=json "$dir/$model" > "$tmp/r.json"
    rc=$?
    if [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL: $model: exit $rc, expected $want_rc"
        fail=1
    fi
    "$PYTHON3" - "$tmp/r.json" "$n_implied" "$n_other" "$@" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
n_implied, n_other, presents = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
d = r["diagnostics"]
implied = [x for x in d if x["code"] == "alias-implied"]
other = [x for x in d if x["code"] != "alias-implied"]
bad = []
if len(implied) != n_implied:
    bad.append("%d alias-implied, expected %d" % (len(implied), n_implied))
if len(other) != n_other:
    bad.append("other findings: %s" % [x["code"] for x in other])
values = sorted(x.get("value", "") for x in implied)
if values != sorted(presents):
    bad.append("alias-implied on %s, expected %s" % (values, sorted(presents)))
for x in implied:
    if "onnx-alias-check annotate" not in x["message"] or x["severity"] != "warning":
        bad.append("message without annotate: " + x["message"])
if r["status"] != "ok":
    bad.append("status " + r["status"])
for b in bad:
    print("FAIL: %s: %s" % (r["model"]["path"], b))
sys.exit(1 if bad else 0)
PY
}

expect static-scatter-decoder.onnx 0 4 0 \
    updated_key_cache.0 updated_value_cache.0 updated_key_cache.1 updated_value_cache.1
expect tiny-qwen35-gqa-decoder.onnx 0 4 0 \
    present.0.key present.0.value present.1.key present.1.value
expect tiny-gpt2-attention-past.onnx 0 0 0

[ $fail -eq 0 ] && echo "ok: stock real decoders: one alias-implied per pair, GPT-2 clean"
exit $fail
