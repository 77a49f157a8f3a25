#!/bin/sh
# real_gpt2_run.sh: the stock GPT-2 export of ../shared/real-models
# ($OAC_REAL_MODELS, else beside the source tree; skipped without it) and
# its shared-buffer form.
#
#  - stock: 8 decode steps driven as a generation loop; its presents grow
#    and are fed back by copy: copied_bytes > 0 every step and growing
#    (tests/ort_diff.sh compares every output of every step with ONNX
#    Runtime 1.30);
#  - shared: tests/gpt2_shared.py gives every com.microsoft Attention
#    past_present_share_buffer = 1 and past_sequence_length (computed in
#    the graph) over buffers of 16 positions; `annotate` pairs all 5
#    caches; 8 steps run in place (pointer identity n/n, 0 copied, the
#    measured peak the plan) and every step's logits equal the stock
#    run's within 1e-5 of their scale (ONNX Runtime's CPU kernel has no
#    shared buffer of its own to compare with: its Attention ignores
#    input 6);
#  - past the buffer (step 17) it stops with capacity-overflow before the
#    step.
. "${top_srcdir:?}/tests/cli_lib.sh"

real=""
for d in ${OAC_REAL_MODELS:+"$OAC_REAL_MODELS"} "$top_srcdir/../shared/real-models" \
         "$top_srcdir/../../shared/real-models"; do
    [ -f "$d/tiny-gpt2-attention-past.onnx" ] && { real=$d; break; }
done
[ -n "$real" ] || { echo "real GPT-2: skipped (no ../shared/real-models)"; exit 77; }
"$PYTHON3" -c 'import onnx, numpy' 2>/dev/null ||
    { echo "real GPT-2: skipped ($PYTHON3 lacks onnx or numpy)"; exit 77; }
stock="$real/tiny-gpt2-attention-past.onnx"
shared="$tmp/gpt2_shared.onnx"
ann="$tmp/gpt2_annotated.onnx"

run_oac 0 run --steps 8 --format=json "$stock"
expect_eq "stock: 8 steps, copies growing" "$(json '[r["status"], r["execution"]["steps_completed"],
    all(s["copied_bytes"] > 0 for s in r["execution"]["per_step"]),
    [s["past_length"] for s in r["execution"]["per_step"]]]' "$out")" \
    '["ok", 8, true, [0, 1, 2, 3, 4, 5, 6, 7]]'

"$PYTHON3" "$top_srcdir/tests/gpt2_shared.py" "$stock" "$shared" 16 || fail "gpt2_shared.py failed"
run_oac 0 annotate --format=json -o "$ann" "$shared"
expect_eq "shared: annotated" "$(json '[p["verdict"] for p in r["pairs"]]' "$out")" \
    '["annotated", "annotated", "annotated", "annotated", "annotated"]'
run_oac 0 run --steps 8 --format=json "$ann"
expect_eq "shared: in place" "$(json '[r["status"], r["execution"]["steps_completed"],
    r["execution"]["pointer_identity"]["checked"],
    r["execution"]["pointer_identity"]["held"] == r["execution"]["pointer_identity"]["checked"],
    r["execution"]["copied_bytes"], r["execution"]["second_cache_bytes"],
    r["execution"]["peak_matches_plan"]]' "$out")" '["ok", 8, 40, true, 0, 0, true]'

# Step by step: the logits of the shared run are the stock run's.
k=1
while [ $k -le 8 ]; do
    run_oac 0 run --steps $k --dump "$tmp/stock$k" "$stock"
    run_oac 0 run --steps $k --dump "$tmp/shared$k" "$ann"
    err=$("$PYTHON3" - "$tmp/stock$k/logits.pb" "$tmp/shared$k/logits.pb" <<'PY'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
a, b = (numpy_helper.to_array(onnx.load_tensor(p)).astype(np.float64) for p in sys.argv[1:3])
print("shape" if a.shape != b.shape else "%.3g" % (np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1.0)))
PY
)
    echo "real GPT-2 step $k: shared-buffer logits against stock: largest error $err (of scale)"
    expect_eq "step $k: shared logits within 1e-5 of stock ($err)" \
        "$("$PYTHON3" -c "import sys; print('$err' != 'shape' and float('$err') <= 1e-5)")" True
    k=$((k + 1))
done

# Past the buffer of 16: step 17 is refused before it runs.
run_oac 1 run --steps 17 --format=json "$ann"
expect_eq "shared: step 17 overflows" "$(json '[r["execution"]["steps_completed"],
    [d["code"] for d in r["diagnostics"] if d["severity"] == "error"][:1]]' "$out")" \
    '[16, ["capacity-overflow"]]'
finish
