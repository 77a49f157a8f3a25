#!/bin/sh
# real_models_run.sh: `run` on the real decoders of ../shared/real-models
# ($OAC_REAL_MODELS, else beside the source tree; issue 11, acceptance 1
# and 2, the runtime's half; skipped without them).
#
#  - annotated (by `annotate`), the TensorScatter decoder and the FLOAT16
#    GroupQueryAttention decoder run 8 decode steps driven as a generation
#    loop (no --dim but the GQA decoder's capacity): pointer identity n/n,
#    second_cache_bytes 0, copied_bytes 0, measured peak equal to the plan;
#  - past their capacity they stop with capacity-overflow on the update
#    node at the step that overflows, and --dump of the refused run holds
#    what the last step left: every file equal to a run that stopped one
#    step earlier;
#  - the stock files run too (their presents fed back by copy) and report
#    copied_bytes > 0 every step.
# A runtime without the kernels these exports use (unsupported-operator)
# says so and skips: the kernels are other work of issue 11.
. "${top_srcdir:?}/tests/cli_lib.sh"

real=""
for d in ${OAC_REAL_MODELS:+"$OAC_REAL_MODELS"} "$top_srcdir/../shared/real-models" \
         "$top_srcdir/../../shared/real-models"; do
    [ -f "$d/static-scatter-decoder.onnx" ] && [ -f "$d/tiny-qwen35-gqa-decoder.onnx" ] &&
        { real=$d; break; }
done
[ -n "$real" ] || { echo "real models: skipped (no ../shared/real-models)"; exit 77; }

ss="$tmp/ss.onnx"
gqa="$tmp/gqa.onnx"
run_oac 0 annotate -o "$ss" "$real/static-scatter-decoder.onnx"
# Without the config beside it, the capacity is the symbol kv_capacity
# (bound below with --dim); with it, the config's context_length (128).
cp "$real/tiny-qwen35-gqa-decoder.onnx" "$tmp/gqa_stock.onnx"
run_oac 0 annotate -o "$gqa" "$tmp/gqa_stock.onnx"
[ -f "$ss" ] && [ -f "$gqa" ] || { echo "annotate wrote nothing"; finish; }
run_oac 0 annotate -o "$tmp/gqa128.onnx" "$real/tiny-qwen35-gqa-decoder.onnx"
run_oac 0 --format=json "$tmp/gqa128.onnx"
expect_eq "gqa with its config: capacity and verdicts" \
    "$(json '[sorted({k["capacity"] for k in r["kv_caches"]}), sorted({k["verdict"] for k in r["kv_caches"]})]' "$out")" \
    '[[128], ["in-place"]]'

# The kernels: a first run says whether the runtime has them.
"$OAC" run --format=json "$ss" > "$out" 2> "$err"
if [ "$(json '"unsupported-operator" in [d["code"] for d in r["diagnostics"]]' "$out")" = true ]; then
    echo "real models run: skipped (the runtime has no kernel for:" \
        "$(json 'sorted({d["op_type"] for d in r["diagnostics"] if d["code"] == "unsupported-operator"})' "$out"))"
    exit 77
fi

# ---- annotated: 8 steps in place (acceptance 1) ---------------------------------
# name model capacity-dims
for row in "ss $ss" "gqa $gqa --dim kv_capacity=16"; do
    # shellcheck disable=SC2086
    set -- $row
    name=$1 model=$2
    shift 2
    run_oac 0 run --steps 8 --format=json "$@" "$model"
    "$PYTHON3" "$top_srcdir/tests/validate_report.py" "$out" || fail "$name: report does not validate"
    expect_eq "$name: annotated run" "$(json '[r["status"], r["execution"]["steps_completed"],
        r["execution"]["pointer_identity"]["checked"] > 0,
        r["execution"]["pointer_identity"]["held"] == r["execution"]["pointer_identity"]["checked"],
        r["execution"]["second_cache_bytes"], r["execution"]["copied_bytes"],
        [s["copied_bytes"] for s in r["execution"]["per_step"]] == [0] * 8,
        [s["past_length"] for s in r["execution"]["per_step"]],
        r["execution"]["peak_matches_plan"]]' "$out")" \
        '["ok", 8, true, true, 0, 0, true, [0, 1, 2, 3, 4, 5, 6, 7], true]'
done

# ---- annotated, past the capacity (acceptance 2) --------------------------------
# name model capacity first-update-node capacity-dims
for row in "ss $ss 16 model/layers.0/self_attn/TensorScatter_node_36" \
           "gqa $gqa 8 GQA_0 --dim kv_capacity=8"; do
    # shellcheck disable=SC2086
    set -- $row
    name=$1 model=$2 cap=$3 node=$4
    shift 4
    run_oac 0 run --steps "$cap" --dump "$tmp/$name.full" --format=json "$@" "$model"
    run_oac 1 run --steps $((cap + 1)) --dump "$tmp/$name.over" --format=json "$@" "$model"
    expect_eq "$name: past the capacity" "$(json '[r["execution"]["steps_completed"],
        [[d["code"], d["node"]] for d in r["diagnostics"]]]' "$out")" \
        "[$cap, [[\"capacity-overflow\", \"$node\"]]]"
    n=0
    for f in "$tmp/$name.full"/*.pb; do
        n=$((n + 1))
        cmp -s "$f" "$tmp/$name.over/${f##*/}" ||
            fail "$name: ${f##*/} after the refused step differs from the last step's"
    done
    [ "$n" -ge 5 ] || fail "$name: only $n files dumped"
done

# ---- stock: presents fed back by copy (acceptance 1) ----------------------------
for name in static-scatter-decoder tiny-qwen35-gqa-decoder; do
    run_oac 0 run --steps 8 --format=json "$real/$name.onnx"
    expect_eq "$name: stock run" "$(json '[r["status"], r["execution"]["steps_completed"],
        all(s["copied_bytes"] > 0 for s in r["execution"]["per_step"]),
        r["execution"]["copied_bytes"] == sum(s["copied_bytes"] for s in r["execution"]["per_step"])]' "$out")" \
        '["ok", 8, true, true]'
done
# GroupQueryAttention without a shared buffer: the cache grows, and so
# does what is copied.
expect_eq "stock GQA grows" "$(json '[b > a for a, b in zip([s["copied_bytes"] for s in r["execution"]["per_step"]], [s["copied_bytes"] for s in r["execution"]["per_step"]][1:])]' "$out")" \
    '[true, true, true, true, true, true, true]'
finish
