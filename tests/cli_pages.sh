#!/bin/sh
# cli_pages.sh: `run` of the paged decoder (contract section 11) on the
# command line: --page-policy re-tiers pages as they age, the JSON report's
# execution.pages validates against the schema and says per step how many
# pages each cache holds and in which declarations, the text report has
# one line per paged cache, and a policy the model cannot honour is a
# usage error (exit 2) with no report.
. "${top_srcdir:?}/tests/cli_lib.sh"
need_examples paged_decoder paged_decoder_dense

paged="$ex/paged_decoder.onnx"

# 40 steps: positions 0..39, pages 0..2 (16 positions each).  With
# 2:FP8_PAGE the oldest page (age 2) is FP8, the newest two IEEE half.
run_oac 0 run --steps 40 --page-policy 0:FP16_PAGE,2:FP8_PAGE --format=json "$paged"
"$PYTHON3" "$top_srcdir/tests/validate_report.py" "$out" || fail "paged run report does not validate"
expect_eq "one record per paged cache" \
    "$(json '[p["cache"] for p in r["execution"]["pages"]]' "$out")" '["cache_0", "cache_1"]'
# a page is [2, 2, 16, 8] = 512 elements: half 1024 bytes, FP8 512
expect_eq "last step" \
    "$(json '[(s["step"], s["pages"], s["bytes_by_quantization"]["FP16_PAGE"], s["bytes_by_quantization"]["FP8_PAGE"], s["bytes_by_quantization"]["INT4_PAGE"], s["total_bytes"]) for s in r["execution"]["pages"][0]["per_step"][-1:]]' "$out")" \
    "[[40, 3, 2048, 512, 0, 2560]]"
# the one re-encoding happened at step 33, when page 2 was created
expect_eq "re-encodings" \
    "$(json '[(s["step"], s["re_encoded_pages"], s["re_encoded_bytes"]) for s in r["execution"]["pages"][0]["per_step"] if s["re_encoded_pages"]]' "$out")" \
    "[[33, 1, 512]]"
expect_eq "steps kept" "$(json 'len(r["execution"]["pages"][1]["per_step"]) + r["execution"]["pages"][1]["per_step_omitted"]' "$out")" 40
expect_eq "peak matches plan" "$(json 'r["execution"]["peak_matches_plan"]' "$out")" true

# without a policy every page stays in the format it was created in
run_oac 0 run --steps 40 --format=json "$paged"
expect_eq "no policy: no re-encoding" \
    "$(json 'sum(s["re_encoded_pages"] for p in r["execution"]["pages"] for s in p["per_step"])' "$out")" 0
# a dense model has no pages record
run_oac 0 run --steps 2 --format=json "$ex/paged_decoder_dense.onnx"
expect_eq "dense: no pages" "$(json '"pages" in r["execution"]' "$out")" false

# text: one line per cache
run_oac 0 run --steps 40 --page-policy 0:FP16_PAGE,2:FP8_PAGE "$paged"
grep -q "^  pages of 'cache_0': 3 pages, 2560 bytes (FP16_PAGE 2048, FP8_PAGE 512), re-encoded 1 pages (512 bytes) in the steps kept\$" "$out" ||
    fail "text: no pages line: $(cat "$out")"

# usage errors: a malformed policy, a declaration the model lacks
run_oac 2 run --page-policy 2 "$paged"
grep -q "AGE:QUANT" "$err" || fail "malformed policy: $(cat "$err")"
run_oac 2 run --page-policy 2:FP9_PAGE "$paged"
grep -q "FP9_PAGE" "$err" || fail "unknown declaration: $(cat "$err")"
[ -s "$out" ] && fail "a refused policy wrote a report"
finish
