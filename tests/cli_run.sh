#!/bin/sh
# cli_run.sh: the `run` command line (contract, section 5): it checks
# first and executes nothing after an error, reports `execution` (JSON)
# and its one-screen summary (text), turns runtime refusals into exit 1
# and usage problems into exit 2, and its JSON validates against the
# schema.
. "${top_srcdir:?}/tests/cli_lib.sh"
need_examples toy_decoder dense_cache dense_cache_broken dense_cache_implied \
    if_branches loop_cache function_cache

toy="$ex/toy_decoder.onnx"
dense="$ex/dense_cache.onnx"
dims="--dim batch=1 --dim heads=2 --dim max_length=8 --dim head_size=4 --dim new_length=1"

# ---- a clean run, JSON ---------------------------------------------------
run_oac 0 run --steps 3 --format=json "$toy"
cp "$out" "$tmp/toy.json"
"$PYTHON3" "$top_srcdir/tests/validate_report.py" "$tmp/toy.json" || fail "run report does not validate"
expect_eq "steps" "$(json '[r["execution"]["steps_requested"], r["execution"]["steps_completed"], len(r["execution"]["per_step"])]' "$out")" "[3, 3, 3]"
expect_eq "pointer identity held" \
    "$(json 'r["execution"]["pointer_identity"]["checked"] > 0 and r["execution"]["pointer_identity"]["held"] == r["execution"]["pointer_identity"]["checked"]' "$out")" true
expect_eq "no second cache" "$(json 'r["execution"]["second_cache_bytes"]' "$out")" 0
expect_eq "steps numbered in order" \
    "$(json '[s["step"] - r["execution"]["per_step"][0]["step"] for s in r["execution"]["per_step"]]' "$out")" "[0, 1, 2]"

# ---- the text summary ----------------------------------------------------
run_oac 0 run --steps 2 "$toy"
grep -q "^  run: 2 of 2 steps completed\$" "$out" || fail "text: no steps line: $(cat "$out")"
grep -q "^  pointer identity: \([0-9]*\)/\1 held\$" "$out" || fail "text: no pointer identity n/n"
grep -q "^  cache bytes bound once: [1-9]" "$out" || fail "text: no cache bytes line"
grep -q "^  second-cache bytes: 0\$" "$out" || fail "text: no second-cache line"
grep -q "^  peak bytes: measured [0-9]*, planned" "$out" || fail "text: no peak line"
tail -n 1 "$out" | grep -q "^$toy: 0 errors, 0 warnings, [0-9]* notes\{0,1\} (status: ok)\$" || fail "text: summary line"

# ---- dims: a dimension left unknown is a usage error ----------------------
run_oac 2 run "$dense"
[ -s "$out" ] && fail "run with unknown dims wrote a report"
# shellcheck disable=SC2086
run_oac 0 run $dims --format=json "$dense"
expect_eq "dense run completed" "$(json 'r["execution"]["steps_completed"]' "$out")" 1

# ---- control flow and local functions ----------------------------------------
# If, Loop and a call of a local function run like any node: every aliased
# output at its input's address, and the measured peak is the plan's.
for name in if_branches loop_cache function_cache; do
    # shellcheck disable=SC2086
    run_oac 0 run --steps 3 $dims --format=json "$ex/$name.onnx"
    expect_eq "$name: status" "$(json 'r["status"]' "$out")" ok
    expect_eq "$name: steps" \
        "$(json '[r["execution"]["steps_completed"], len(r["execution"]["per_step"])]' "$out")" "[3, 3]"
    expect_eq "$name: pointer identity n/n" \
        "$(json 'r["execution"]["pointer_identity"]["checked"] >= 3 and r["execution"]["pointer_identity"]["held"] == r["execution"]["pointer_identity"]["checked"]' "$out")" true
    expect_eq "$name: measured peak is the plan's" \
        "$(json 'r["execution"]["peak_matches_plan"] and r["execution"]["measured_peak_bytes"] == r["execution"]["planned_peak_bytes"]' "$out")" true
    "$PYTHON3" "$top_srcdir/tests/validate_report.py" "$out" || fail "$name: run report does not validate"
done

# ---- check first: nothing runs after an error -----------------------------
# shellcheck disable=SC2086
run_oac 1 run $dims --format=json "$ex/dense_cache_broken.onnx"
expect_eq "no step runs after a check error" \
    "$(json '[r["execution"]["steps_requested"], r["execution"]["steps_completed"], r["execution"]["per_step"], r["execution"]["pointer_identity"]["checked"]]' "$out")" \
    "[1, 0, [], 0]"
expect_eq "the check's error is reported" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["alias-mismatch"]'
"$PYTHON3" "$top_srcdir/tests/validate_report.py" "$out" || fail "run report after a check error does not validate"
expect_eq "check error reported" "$(json 'r["diagnostics"][0]["code"]' "$out")" alias-mismatch

# ---- every format, to stdout and to -o: the same findings, whole files ------
# run writes its one report as check writes each model's (cmd_check.c,
# cli_write_report): SARIF and GitLab carry the check's error, text its
# line, and -o holds exactly what stdout would.
for fmt in text json sarif gitlab; do
    # shellcheck disable=SC2086
    run_oac 1 run $dims --format=$fmt "$ex/dense_cache_broken.onnx"
    cp "$out" "$tmp/run_broken.$fmt"
    rm -f "$tmp/run_o.$fmt"
    # shellcheck disable=SC2086
    run_oac 1 run $dims --format=$fmt -o "$tmp/run_o.$fmt" "$ex/dense_cache_broken.onnx"
    [ -s "$out" ] && fail "$fmt -o: stdout not empty: $(head -3 "$out")"
    cmp -s "$tmp/run_o.$fmt" "$tmp/run_broken.$fmt" || fail "$fmt: -o differs from stdout"
done
grep -q "alias-mismatch" "$tmp/run_broken.text" || fail "run text: no alias-mismatch"
expect_eq "run sarif: the check's error" \
    "$(json '[x["ruleId"] for x in r["runs"][0]["results"]]' "$tmp/run_broken.sarif")" '["alias-mismatch"]'
expect_eq "run gitlab: the check's error" \
    "$(json '[x["check_name"] for x in r]' "$tmp/run_broken.gitlab")" '["alias-mismatch"]'

# ---- an update without output_alias: a second cache, a warning ------------
# shellcheck disable=SC2086
run_oac 0 run $dims --format=json "$ex/dense_cache_implied.onnx"
expect_eq "second cache measured" "$(json 'r["execution"]["second_cache_bytes"] > 0' "$out")" true
# shellcheck disable=SC2086
run_oac 1 run --werror $dims "$ex/dense_cache_implied.onnx"

# ---- runtime refusals are diagnostics, exit 1 -----------------------------
# shellcheck disable=SC2086
run_oac 1 run $dims --readonly cache --format=json "$dense"
expect_eq "readonly binding refused" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["binding-readonly"]'
# shellcheck disable=SC2086
run_oac 1 run $dims --sessions 3 --format=json "$dense"
expect_eq "busy sessions" "$(json 'sum(d["code"] == "binding-busy" for d in r["diagnostics"])' "$out")" 2
# Position 0, 1, 2 with capacity 2: the third step overflows.
run_oac 1 run --steps 3 --dim batch=1 --dim heads=2 --dim max_length=2 --dim head_size=4 \
    --dim new_length=1 --format=json "$dense"
expect_eq "run-time capacity overflow" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["capacity-overflow"]'
expect_eq "steps before the overflow" "$(json 'r["execution"]["steps_completed"]' "$out")" 2

# ---- --dump writes the cache after the last step --------------------------
# shellcheck disable=SC2086
run_oac 0 run $dims --dump "$tmp/dump" "$dense"
ls "$tmp/dump" 2>/dev/null | grep -q "updated_cache\|^cache" || fail "--dump wrote no cache file"
[ -s "$out" ] || fail "--dump: no report"

# ---- the generation loop, stock against annotated (contract 8) -------------
need_examples toy_decoder_concat
twin="$ex/toy_decoder_concat.onnx"
# The twin needs no --dim: its past starts empty, its length the loop's.
run_oac 0 run --steps 3 "$twin"
grep -q "^  copied bytes: [1-9][0-9]* (per step: [1-9][0-9]* [1-9][0-9]* [1-9][0-9]*)\$" "$out" ||
    fail "text: the twin's copied bytes per step: $(cat "$out")"
run_oac 0 run --steps 3 "$toy"
grep -q "^  copied bytes: 0 (per step: 0 0 0)\$" "$out" || fail "text: in place copies nothing"
run_oac 0 run --steps 3 --tokens 4,9 --format=json "$twin"
expect_eq "twin: past length, copied bytes growing" \
    "$(json '[[s["past_length"] for s in r["execution"]["per_step"]], [s["copied_bytes"] for s in r["execution"]["per_step"]] == sorted(set(s["copied_bytes"] for s in r["execution"]["per_step"]))]' "$out")" \
    '[[0, 1, 2], true]'
# The toy's capacity is 16: step 17 is refused at the first update.
run_oac 1 run --steps 17 --format=json "$toy"
expect_eq "past the capacity" "$(json '[r["execution"]["steps_completed"], [[d["code"], d["node"]] for d in r["diagnostics"]]]' "$out")" \
    '[16, [["capacity-overflow", "l0_key_update"]]]'
# Usage: a --dim on a symbol the loop binds, a prompt the static
# input_ids [1, 1] cannot take, malformed options.
run_oac 2 run --dim past_len=3 "$twin"
grep -q "binds 'past_len' from its generation loop" "$err" || fail "--dim past_len: reason: $(cat "$err")"
run_oac 2 run --prompt-length 2 "$toy"
grep -q "static sequence dimension 1" "$err" || fail "--prompt-length 2: reason: $(cat "$err")"
run_oac 2 run --prompt-length 0 "$toy"
run_oac 2 run --tokens 1,,2 "$toy"
run_oac 2 run --tokens -1 "$toy"
# A genai_config.json beside the model that cannot be read: config-invalid
# in the report, exit 2, nothing run.
mkdir "$tmp/cfg" && cp "$toy" "$tmp/cfg/m.onnx" && echo '{"model": []}' > "$tmp/cfg/genai_config.json" ||
    fail "cannot set up the config folder"
run_oac 2 run --format=json "$tmp/cfg/m.onnx"
expect_eq "run with a broken config" "$(json '[r["status"], [d["code"] for d in r["diagnostics"]]]' "$out")" \
    '["error", ["config-invalid"]]'
# Near miss: --ignore-config reads no config beside the model; it runs.
run_oac 0 run --ignore-config --format=json "$tmp/cfg/m.onnx"
expect_eq "run --ignore-config beside a broken config" \
    "$(json '[r["status"], r["execution"]["steps_completed"], [d["code"] for d in r["diagnostics"]]]' "$out")" \
    '["ok", 1, []]'

# The config beside the model pairs as it does for annotate and
# check --config: sout = Identity(sin) is a pair only by its names;
# --ignore-config: no pair.
mkdir "$tmp/cm" "$tmp/idc" && "$top_builddir/tests/cli_models" "$tmp/cm" &&
    cp "$tmp/cm/identity_unpaired.onnx" "$tmp/idc/model.onnx" &&
    printf '%s\n' '{"model": {"decoder": {"inputs": {"past_key_names": "sin"}, "outputs": {"present_key_names": "sout"}}}, "search": {"past_present_share_buffer": true}}' \
        > "$tmp/idc/genai_config.json" || fail "cannot set up the identity folder"
kv='[[k["past"], k["present"], k["found_by"], k["verdict"]] for k in r["kv_caches"]]'
run_oac 0 run --format=json "$tmp/idc/model.onnx"
expect_eq "run: the pair of the config beside it" "$(json "$kv" "$out")" \
    '[["sin", "sout", ["config"], "implied"]]'
codes='[d["code"] for d in r["diagnostics"]]'
cp "$out" "$tmp/idc/run.json"
run_oac 0 check --config "$tmp/idc/genai_config.json" --format=json "$tmp/idc/model.onnx"
expect_eq "run and check --config: the same pairs and codes" \
    "$(json "[$kv, $codes]" "$tmp/idc/run.json")" "$(json "[$kv, $codes]" "$out")"
run_oac 0 run --ignore-config --format=json "$tmp/idc/model.onnx"
expect_eq "run --ignore-config: no pair" "$(json "[$kv, $codes]" "$out")" '[[], []]'
# A config that turns sharing off: the pair still, but config-no-sharing
# is check --config's alone.
printf '%s\n' '{"model": {"decoder": {"inputs": {"past_key_names": "sin"}, "outputs": {"present_key_names": "sout"}}}}' \
    > "$tmp/idc/model.genai_config.json" || fail "cannot write the stem's config"
run_oac 0 run --format=json "$tmp/idc/model.onnx"
expect_eq "run: the stem's config, not checked" "$(json "[$kv, $codes]" "$out")" \
    '[[["sin", "sout", ["config"], "implied"]], ["alias-implied"]]'
run_oac 0 check --config "$tmp/idc/model.genai_config.json" --format=json "$tmp/idc/model.onnx"
expect_eq "check --config: config-no-sharing" "$(json "sorted(set($codes))" "$out")" \
    '["alias-implied", "config-no-sharing"]'

# A growing cache the loop runs: its capacity is the past's symbol, as
# check says, not the past length of 0 the loop binds at the first step.
cat="$top_builddir/examples/toy_decoder_concat.onnx"
caps='[k["capacity"] for k in r["kv_caches"]]'
run_oac 0 run --format=json --steps 2 "$cat"
cp "$out" "$tmp/cat_run.json"
run_oac 0 check --format=json "$cat"
expect_eq "run and check: the same capacities" "$(json "$caps" "$tmp/cat_run.json")" \
    "$(json "$caps" "$out")"
expect_eq "run: no capacity of 0" "$(json "[c for c in $caps if c == 0]" "$tmp/cat_run.json")" '[]'

# ---- usage -----------------------------------------------------------------
run_oac 2 run "$toy" "$toy"
run_oac 2 run --steps 0 "$toy"
run_oac 2 run --sessions x "$toy"
run_oac 2 run --dim no_such_dim=1 "$toy"
run_oac 2 --steps 2 "$toy"
run_oac 2 run "$tmp/missing.onnx"
grep -q "\[parse-error\]" "$out" || fail "run of a missing file has no parse-error report"

# ---- what the run decides is not "unchecked" in its report ---------------
# check cannot know the toy decoder's position (a graph input), so its
# capacity rules are unchecked; run drives the position and checks every
# update before each step, so its report lists none of them, and at step
# 17 says capacity-overflow without a "not checked" line beside it.
run_oac 0 --format=json "$toy"
expect_eq "check: capacity unchecked" "$(json 'sorted({u["rule"] for u in r["unchecked"]})' "$out")" '["capacity"]'
run_oac 0 run --steps 2 --format=json "$toy"
expect_eq "run: nothing unchecked" "$(json 'r["unchecked"]' "$out")" "[]"
run_oac 1 run --steps 17 "$toy"
grep -q 'capacity-overflow\]$' "$out" || fail "step 17: no capacity-overflow: $(cat "$out")"
grep -q 'not checked\|unchecked' "$out" && fail "run says a rule it checks is not checked: $(cat "$out")"
# A run that executes nothing (its check has an error) decided nothing.
run_oac 1 run --steps 2 --format=json $dims "$ex/dense_cache_broken.onnx"
expect_eq "run with a check error keeps them" "$(json 'len(r["unchecked"]) > 0' "$out")" true

finish
