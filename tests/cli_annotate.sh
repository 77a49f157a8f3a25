#!/bin/sh
# cli_annotate.sh: the `annotate` command line (contract, section 7;
# issue 10, acceptance 2 and the annotate half of 3): exit statuses
# 0/1/2 and the report's status, the JSON report against
# schemas/annotate.schema.json, the text report, annotated models that
# pass `check` with one alias class per pair, a second annotate that
# leaves the file byte-identical, -o that names the model or a link,
# config-invalid, and the real decoders of ../shared/real-models
# ($OAC_REAL_MODELS) when present.  The look-alikes come from tests/annotate_models (what each
# pair must become is asserted in detail by tests/check_annotate).
. "${top_srcdir:?}/tests/cli_lib.sh"

m="$tmp/m"
mkdir -p "$m" && "$top_builddir/tests/annotate_models" "$m" ||
    { echo "FAIL: tests/annotate_models could not write the look-alikes"; exit 1; }
reports=""

# annotate EXIT ARGS...: run annotate --format=json, keep the report for
# the schema check, and record a failure unless it exits EXIT.
annotate() {
    want=$1
    shift
    run_oac "$want" annotate --format=json "$@"
    n=$(echo "$reports" | wc -w)
    cp "$out" "$tmp/report$n.json"
    reports="$reports $tmp/report$n.json:$got"
}

# reasons FILE: the sorted distinct reasons of the pairs ("None" for none),
# each followed by "/CONFIG_REASON" when the config refuses it too.
reasons() {
    json '" ".join(sorted({str(p["reason"]) + ("/" + p["config_reason"] if p["config_reason"] else "") for p in r["pairs"]}))' "$1"
}

# checked OUT PAIRS: `check` passes OUT with 0 errors and PAIRS classes.
checked() {
    run_oac 0 --format=json "$1"
    expect_eq "$1: check errors" "$(json 'r["summary"]["errors"]' "$out")" 0
    expect_eq "$1: alias classes" "$(json 'len(r["alias_classes"])' "$out")" "$2"
}

# ---- look-alikes that annotate ----------------------------------------
for row in gqa scatter; do
    annotate 0 -o "$tmp/$row.out.onnx" "$m/$row.onnx"
    expect_eq "$row: verdicts" "$(json '" ".join(sorted({p["verdict"] for p in r["pairs"]}))' "$out")" annotated
    expect_eq "$row: written" "$(json 'r["output"]["written"]' "$out")" true
    expect_eq "$row: config" "$(json 'r["config"]' "$out")" "$m/$row.genai_config.json"
    checked "$tmp/$row.out.onnx" 4
    # Annotating the annotated model keeps every pair and the same bytes
    # (its config beside it, under its own stem).
    cp "$m/$row.genai_config.json" "$tmp/$row.out.genai_config.json"
    annotate 0 -o "$tmp/$row.again.onnx" "$tmp/$row.out.onnx"
    expect_eq "$row again: verdicts" "$(json '" ".join(sorted({p["verdict"] for p in r["pairs"]}))' "$out")" kept
    cmp -s "$tmp/$row.out.onnx" "$tmp/$row.again.onnx" ||
        fail "$row: a second annotate changed the file"
done

# ---- the annotated model is written in 1 MiB pieces (model/save.c,
# invariant 5): the 13 KB gpt2_share model in one write(), where stdio's
# default buffer made four; a file written 4 KiB at a time loads slower.
if ! command -v strace >/dev/null 2>&1; then
    echo "write sizes: skipped (no strace here)"
else
    mkdir -p "$tmp/w"
    strace -f -y -qq -e trace=write -o "$tmp/strace" \
        "$OAC" annotate -o "$tmp/w/gpt2_share.onnx" "$m/gpt2_share.onnx" >/dev/null 2>&1
    if ! grep -q 'write(' "$tmp/strace" 2>/dev/null; then
        echo "write sizes: skipped (strace cannot trace here)"
    else
        size=$(wc -c < "$tmp/w/gpt2_share.onnx")
        [ "$size" -gt 4096 ] || fail "gpt2_share: annotated model of $size bytes, too small to tell"
        expect_eq "gpt2_share: write() calls for the model" \
            "$(grep -c "^[0-9]* *write([0-9]*<$tmp/w/" "$tmp/strace")" 1
    fi
fi

# ---- refusals: exit 1, nothing written ----------------------------------
for case in gqa_beams:None/beam-search gqa_noshare:None/config-disabled \
            mha_no_past_len:growing-cache concat:growing-cache \
            constant_presents:constant-present not_derived:not-derived \
            delta:delta-output reshape_chain:unsupported-chain \
            update_chain:unsupported-chain; do
    row=${case%%:*}
    annotate 1 -o "$tmp/$row.out.onnx" "$m/$row.onnx"
    expect_eq "$row: reasons" "$(reasons "$out")" "${case#*:}"
    expect_eq "$row: status" "$(json 'r["status"]' "$out")" error
    [ -e "$tmp/$row.out.onnx" ] && fail "$row: a refused pair wrote $tmp/$row.out.onnx"
done
# An alias_of already in the file that names another value: that pair is
# refused, the other is fine, nothing is written and the file is kept.
cp "$m/scatter_conflict.onnx" "$tmp/conflict_before.onnx"
annotate 1 -o "$tmp/conflict.out.onnx" "$m/scatter_conflict.onnx"
expect_eq "scatter_conflict: reasons" "$(reasons "$out")" "None conflicting-annotation"
[ -e "$tmp/conflict.out.onnx" ] && fail "scatter_conflict: a refused pair wrote a file"
cmp -s "$m/scatter_conflict.onnx" "$tmp/conflict_before.onnx" ||
    fail "scatter_conflict: the model changed"
# Every pair holds, but the annotated model fails the check: exit 1,
# the check's finding in the report, nothing written.
annotate 1 -o "$tmp/stale.onnx" "$m/stale_reader.onnx"
expect_eq "stale reader: verdicts" "$(reasons "$out")" None
expect_eq "stale reader: finding" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["alias-hazard"]'
expect_eq "stale reader: written" "$(json 'r["output"]["written"]' "$out")" false
[ -e "$tmp/stale.onnx" ] && fail "a model that fails the check was written"
annotate 0 --ignore-config -o "$tmp/noshare.onnx" "$m/gqa_noshare.onnx"
annotate 1 --partial -o "$tmp/mixed.onnx" "$m/mixed.onnx"
expect_eq "--partial: written" "$(json 'r["output"]["written"]' "$out")" true
checked "$tmp/mixed.onnx" 1
annotate 0 --capacity 64 -o "$tmp/cap.onnx" "$m/identity_chain.onnx"
run_oac 0 --format=json "$tmp/cap.onnx"
expect_eq "--capacity: the class's shape" "$(json 'r["alias_classes"][0]["shape"]' "$out")" "[1, 2, 64, 16]"

# ---- the text report --------------------------------------------------------
run_oac 1 annotate -o "$tmp/t.onnx" "$m/mixed.onnx"
expect_eq "text lines" "$(wc -l < "$out" | tr -d ' ')" 3
grep -q "^$m/mixed.onnx: 'past_0' -> 'present_0': annotated: node 'update' (CacheUpdate) " "$out" ||
    fail "no annotated pair line: $(cat "$out")"
grep -q "^$m/mixed.onnx: 'past_1' -> 'present_1': refused \[growing-cache\]: .*'grow' (Concat)" "$out" ||
    fail "no refused pair line: $(cat "$out")"
expect_eq "text summary" "$(tail -n 1 "$out")" \
    "$m/mixed.onnx: 2 pairs: 1 annotated, 0 kept, 1 refused; nothing written (status: error)"

# ---- usage, unreadable model or config: exit 2 --------------------------------
cp "$m/scatter.onnx" "$tmp/keep.onnx"
run_oac 2 annotate -o "$m/scatter.onnx" "$m/scatter.onnx"
grep -q "is the model" "$err" || fail "-o = model: $(cat "$err")"
ln "$m/scatter.onnx" "$tmp/hard.onnx"
run_oac 2 annotate -o "$tmp/hard.onnx" "$m/scatter.onnx"
ln -s "$tmp/elsewhere.onnx" "$tmp/link.onnx"
run_oac 2 annotate -o "$tmp/link.onnx" "$m/scatter.onnx"
[ -e "$tmp/elsewhere.onnx" ] && fail "-o followed a symbolic link"
cmp -s "$m/scatter.onnx" "$tmp/keep.onnx" || fail "a refused -o changed the model"
[ -s "$out" ] && fail "a usage error wrote a report"
run_oac 2 annotate "$m/scatter.onnx"
run_oac 2 annotate --format=sarif -o "$tmp/x.onnx" "$m/scatter.onnx"
run_oac 2 annotate -o "$tmp/x.onnx" "$m/scatter.onnx" "$m/gqa.onnx"
run_oac 2 annotate --capacity 0 -o "$tmp/x.onnx" "$m/scatter.onnx"
# One configuration: a second --config is refused, not silently the one used.
printf '{}' > "$tmp/c1.json"
printf '{}' > "$tmp/c2.json"
run_oac 2 annotate --config "$tmp/c1.json" --config "$tmp/c2.json" -o "$tmp/x.onnx" "$m/scatter.onnx"
grep -q "config given twice" "$err" || fail "two --config: $(cat "$err")"
[ -e "$tmp/x.onnx" ] && fail "two --config wrote the output"
run_oac 2 --partial "$m/scatter.onnx"
printf '{"model": ' > "$tmp/bad.json"
annotate 2 --config "$tmp/bad.json" -o "$tmp/x.onnx" "$m/scatter.onnx"
expect_eq "bad config: code" "$(json 'r["diagnostics"][0]["code"]' "$out")" config-invalid
expect_eq "bad config: pairs" "$(json 'len(r["pairs"])' "$out")" 0
printf 'not a model' > "$tmp/garbage.onnx"
annotate 2 -o "$tmp/x.onnx" "$tmp/garbage.onnx"
expect_eq "unreadable: code" "$(json 'r["diagnostics"][0]["code"]' "$out")" parse-error
[ -e "$tmp/x.onnx" ] && fail "an unreadable model wrote $tmp/x.onnx"

# ---- failures of the call itself: in the report, status and exit agree ----------
annotate 1 -o "$tmp/no-such-folder/x.onnx" "$m/scatter.onnx"
expect_eq "unwritable -o: code" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" \
    '["output-write-failed"]'
expect_eq "unwritable -o: written" "$(json 'r["output"]["written"]' "$out")" false
run_oac 1 annotate -o "$tmp/no-such-folder/x.onnx" "$m/scatter.onnx"
tail -n 1 "$out" | grep -q "nothing written (status: error)\$" || fail "unwritable -o: $(tail -n 1 "$out")"
# OAC_FAIL_ALLOC_AFTER=N: out of memory at every 11th allocation is
# analysis-failed (exit 2) or no report at all, never a status that lies.
n=1
while [ $n -le 600 ]; do
    OAC_FAIL_ALLOC_AFTER=$n "$OAC" annotate --format=json -o "$tmp/oom.onnx" "$m/gqa.onnx" \
        > "$out" 2> "$err"
    got=$?
    st=$("$PYTHON3" -c 'import json, sys
try:
    r = json.load(open(sys.argv[1]))
    print(r["status"] + ("+failed" if any(d["code"] == "analysis-failed" for d in r["diagnostics"]) else ""))
except Exception:
    print("none")' "$out")
    case $got:$st in
    0:ok|2:error+failed|2:none) ;;
    *) fail "annotate with allocation $n failing: exit $got, status $st" ;;
    esac
    [ $got -eq 0 ] || [ ! -e "$tmp/oom.onnx" ] || fail "allocation $n failing: a model was written"
    [ $got -eq 0 ] && break
    n=$((n + 11))
done
[ $got -eq 0 ] || fail "annotate never succeeded with allocations failing late"

# ---- the real decoders (issue 10, acceptance 3) ---------------------------------
# The folder is $OAC_REAL_MODELS, else ../shared/real-models beside the
# source tree (as for tests/real_models_check.sh).
real=${OAC_REAL_MODELS:-$top_srcdir/../shared/real-models}
if [ ! -f "$real/static-scatter-decoder.onnx" ]; then
    echo "real models: skipped (none in $real; set OAC_REAL_MODELS)"
else
    for row in static-scatter-decoder tiny-qwen35-gqa-decoder; do
        annotate 0 -o "$tmp/$row.onnx" "$real/$row.onnx"
        expect_eq "$row: annotated" "$(json 'sum(p["verdict"] == "annotated" for p in r["pairs"])' "$out")" 4
        checked "$tmp/$row.onnx" 4
    done
    annotate 1 -o "$tmp/gpt2.onnx" "$real/tiny-gpt2-attention-past.onnx"
    expect_eq "gpt2: reasons" "$(reasons "$out")" growing-cache
    expect_eq "gpt2: pairs" "$(json 'len(r["pairs"])' "$out")" 5
fi

# ---- every JSON report against the schema -------------------------------------
"$PYTHON3" "$top_srcdir/tests/validate_annotate.py" $reports
case $? in
0|77) ;;
*) fail "annotate reports do not validate (above)" ;;
esac
finish
