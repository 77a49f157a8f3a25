#!/bin/sh
# real_models_check.sh: the check half of issue 10's acceptance 3 on the
# real decoders of ../shared/real-models (README there), when present.
#
# Contract section 6: the stock TensorScatter decoder (opset 24) and the
# stock GroupQueryAttention decoder each get one alias-implied per K/V
# pair (2 layers x 2 pairs), naming the present output and suggesting
# `onnx-alias-check annotate`, and no error (exit 0).  The GPT-2 whose
# com.microsoft Attention has no past_present_share_buffer grows its
# present: nothing can share storage, so nothing is implied, and each of
# its five caches is cache-copied (exit 0).  Then the verdicts of every
# pair (kv_caches), check --config, and annotate with and without config.
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
expect tiny-gpt2-attention-past.onnx 0 0 5

# kv MODEL WANT [OPTION...]: the check of MODEL (with OPTIONs) has the
# kv_caches verdicts WANT ("verdict/reason" per pair, in order) and the
# codes of its diagnostics are CODES (sorted, distinct; $codes).
kv() {
    model=$1 want=$2
    shift 2
    "$OAC" --format=json "$@" "$model" > "$tmp/r.json"
    got=$("$PYTHON3" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join("%s/%s" % (k["verdict"], k["reason"]) for k in r["kv_caches"]),
      "|", ",".join(sorted({d["code"] for d in r["diagnostics"]})))' "$tmp/r.json")
    if [ "$got" != "$want" ]; then
        echo "FAIL: $model $*: got '$got', expected '$want'"
        fail=1
    fi
}
copied="copied/growing-cache copied/growing-cache copied/growing-cache copied/growing-cache copied/growing-cache"
implied4="implied/None implied/None implied/None implied/None"
inplace4="in-place/None in-place/None in-place/None in-place/None"
# The GPT-2: five cache-copied (growing-cache) at its Attention nodes, and
# with --werror a failing check.
kv "$dir/tiny-gpt2-attention-past.onnx" "$copied | cache-copied"
"$PYTHON3" -c 'import json, sys
r = json.load(open(sys.argv[1]))
bad = [d for d in r["diagnostics"] if d["code"] == "cache-copied" and
       (not d["node"].startswith("GptAttention_") or d["op_type"] != "Attention" or
        "growing-cache" not in d["message"] or "bytes" not in d["message"])]
sys.exit(1 if bad or r["status"] != "ok" else 0)' "$tmp/r.json" ||
    { echo "FAIL: GPT-2: cache-copied without node, reason or bytes"; fail=1; }
"$OAC" --werror -q "$dir/tiny-gpt2-attention-past.onnx" >/dev/null
[ $? -eq 1 ] || { echo "FAIL: GPT-2 --werror: not exit 1"; fail=1; }
# The GQA decoder: four implied; with its config (sharing on) nothing
# more; with sharing switched off in a copy, config-no-sharing.
kv "$dir/tiny-qwen35-gqa-decoder.onnx" "$implied4 | alias-implied"
kv "$dir/tiny-qwen35-gqa-decoder.onnx" "$implied4 | alias-implied" \
    --config "$dir/tiny-qwen35-gqa-decoder.genai_config.json"
sed 's/"past_present_share_buffer": *true/"past_present_share_buffer": false/' \
    "$dir/tiny-qwen35-gqa-decoder.genai_config.json" > "$tmp/noshare.json"
kv "$dir/tiny-qwen35-gqa-decoder.onnx" "$implied4 | alias-implied,config-no-sharing" \
    --config "$tmp/noshare.json"
# Sharing on for the GPT-2's copied caches: config-mismatch, exit 1.
printf '%s\n' '{"model": {"decoder": {"inputs": {"past_names": "past_%d"},' \
    '"outputs": {"present_names": "present_%d"}}}, "search": {"past_present_share_buffer": true}}' \
    > "$tmp/gpt2_share.json"
kv "$dir/tiny-gpt2-attention-past.onnx" "$copied | cache-copied,config-mismatch" \
    --config "$tmp/gpt2_share.json"
# Annotated: the GQA decoder's four pairs in place; the TensorScatter
# decoder annotated with its config and without one (found by structure).
"$OAC" annotate -o "$tmp/gqa.onnx" "$dir/tiny-qwen35-gqa-decoder.onnx" >/dev/null ||
    { echo "FAIL: annotate of the GQA decoder"; fail=1; }
kv "$tmp/gqa.onnx" "$inplace4 | "
cp "$dir/static-scatter-decoder.onnx" "$tmp/ss_stock.onnx"
"$OAC" annotate -o "$tmp/ss.onnx" "$tmp/ss_stock.onnx" >/dev/null ||
    { echo "FAIL: annotate of the TensorScatter decoder without its config"; fail=1; }
kv "$tmp/ss.onnx" "$inplace4 | "
"$OAC" annotate -o "$tmp/ss_cfg.onnx" "$dir/static-scatter-decoder.onnx" >/dev/null ||
    { echo "FAIL: annotate of the TensorScatter decoder with its config"; fail=1; }
kv "$tmp/ss_cfg.onnx" "$inplace4 | " --config "$dir/static-scatter-decoder.genai_config.json"

[ $fail -eq 0 ] && echo "ok: real decoders: one alias-implied per pair, GPT-2 five cache-copied, verdicts, config and annotate"
exit $fail
