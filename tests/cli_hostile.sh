#!/bin/sh
# cli_hostile.sh: what a hostile file, a flag or a full disk can do to the
# command line (issue 12; contract sections 5 and 8), each reproducer
# beside its clean near-miss (tests/hostile_models writes them):
#
#  - structure check refuses (model-invalid, external-data-invalid) and
#    run therefore never meets: a node without op_type, unnamed and
#    duplicate names, payloads that are not their shape, external data of
#    another length or with a NUL in its location;
#  - kernels over tensors with a zero dimension;
#  - FIFOs as a model or an --input (never a hang);
#  - -o onto an input, --dump names, symlinks and failures;
#  - one status: whatever makes the exit non-zero is a diagnostic, and
#    status (text, json) or level (sarif) agrees with the exit status.
#
# Every command runs under a 10-second limit (timeout exits 124, which no
# expectation accepts).
. "${top_srcdir:?}/tests/cli_lib.sh"

hm="$tmp/hostile"
mkdir "$hm" || exit 99
"$top_builddir/tests/hostile_models" "$hm" || { echo "FAIL: hostile_models"; exit 1; }

# run_t STATUS ARGS...: run_oac under the time limit.
run_t() {
    want=$1
    shift
    timeout 10 "$OAC" "$@" > "$out" 2> "$err"
    got=$?
    if [ "$got" != "$want" ]; then
        fail "onnx-alias-check $* exited $got, expected $want"
        sed 's/^/  stdout: /' "$out" | head -20
        sed 's/^/  stderr: /' "$err" | head -20
    fi
}

codes() {
    json '[d["code"] for d in (r if isinstance(r, dict) else r[0])["diagnostics"]]' "$out"
}

# ---- model-invalid: check refuses, run executes nothing ------------------
# broken NAME CODE LOCATION VALUE-OR-NODE: `check` reports exactly one CODE
# at LOCATION naming VALUE-OR-NODE ("null": neither) (exit 1); `run`
# reports it too and runs no step (exit 1, no crash, no hang).
# near NAME: the near-miss checks and runs clean.
broken() {
    name=$1 code=$2 loc=$3 who=\"$4\"
    [ "$4" = null ] && who=null
    run_t 1 check --format=json "$hm/$name.onnx"
    expect_eq "$name: check" "$(json '[[d["code"], d["location"], d.get("value") or d.get("node")] for d in r["diagnostics"]]' "$out")" \
        "[[\"$code\", \"$loc\", $who]]"
    expect_eq "$name: status" "$(json 'r["status"]' "$out")" error
    run_t 1 run --format=json "$hm/$name.onnx"
    expect_eq "$name: run refuses" \
        "$(json '[[d["code"] for d in r["diagnostics"]], r["execution"]["steps_completed"]]' "$out")" \
        "[[\"$code\"], 0]"
}
near() {
    name=$1
    run_t 0 check --format=json "$hm/$name.onnx"
    expect_eq "$name: clean" "$(codes)" '[]'
    run_t 0 run --format=json "$hm/$name.onnx"
    expect_eq "$name: runs" "$(json '[r["status"], r["execution"]["steps_completed"]]' "$out")" '["ok", 1]'
}

# A node without op_type: main graph, If branch, Loop body, function.
broken noop_main model-invalid /graph/node/1 copy
near noop_main_near
broken noop_if model-invalid /graph/node/1/attribute/0/g/node/0 then_copy
near noop_if_near
broken noop_loop model-invalid /graph/node/0/attribute/0/g/node/1 body_neg
near noop_loop_near
broken noop_function model-invalid /functions/0/node/0 fneg
near noop_function_near
run_t 1 check "$hm/noop_main.onnx"
grep -q "node copy of 'main' has no op_type: set it to the operator" "$out" ||
    fail "noop_main: message: $(cat "$out")"

# Names: an unnamed graph input beside a cache (issue item 2: slots[-1]),
# two READ_WRITE inputs named cache (item 9), initializers, outputs,
# function inputs, a Loop body's input.
broken unnamed_input model-invalid /graph/input/3 null
near unnamed_input_near
broken dup_input model-invalid /graph/input/3 cache
near dup_input_near
broken unnamed_initializer model-invalid /graph/initializer/0 null
broken dup_initializer model-invalid /graph/initializer/1 w
broken unnamed_output model-invalid /graph/output/1 null
broken dup_output model-invalid /graph/output/1 y
broken dup_function_input model-invalid /functions/0/input/1 a
broken unnamed_body_input model-invalid /graph/node/0/attribute/0/g/input/2 null
# An initializer named like a graph input is its default, not a duplicate.
near initializer_default

# Payloads: raw_data 4 bytes short and long, float_data one value short,
# int64_data one value short, a Constant's value (main graph and body).
broken raw_short model-invalid /graph/initializer/0 w
broken raw_long model-invalid /graph/initializer/0 w
broken typed_short model-invalid /graph/initializer/0 w
broken varint_short model-invalid /graph/initializer/0 w
broken constant_short model-invalid /graph/node/0/attribute/0/t c
broken constant_short_body model-invalid /graph/node/0/attribute/0/g/node/1/attribute/0/t c
near raw_near
run_t 1 check "$hm/raw_short.onnx"
grep -q "initializer 'w' (FLOAT\[4\]) holds 12 bytes of data, but its 4 elements need 16" "$out" ||
    fail "raw_short: message does not give the sizes: $(cat "$out")"

# External data: `length` 4 bytes short (item 7), no length and a file 4
# bytes short, a location with a NUL byte (item 9: "ext_nul.bin\0.evil"
# must not be read as the valid "ext_nul.bin").
broken ext_short external-data-invalid /graph/initializer/0 w
broken ext_rest_short external-data-invalid /graph/initializer/0 w
broken ext_nul external-data-invalid /graph/initializer/0 w
grep -q "contains a NUL byte" "$out" || fail "ext_nul: message does not name the NUL"
near ext_near
near ext_rest_near

# ---- tensors with a zero dimension (item 3) ------------------------------
# Gather over [3,0], and every other kernel over empty tensors: no NULL
# reaches memcpy (the sanitizer build aborts on it), outputs have the
# empty shapes.
run_t 0 run --format=json "$hm/gather_zero.onnx"
expect_eq "gather over a zero dimension" "$(json '[r["status"], r["execution"]["steps_completed"]]' "$out")" '["ok", 1]'
run_t 0 run --format=json "$hm/zero_dims.onnx"
expect_eq "kernels over zero dimensions" "$(json '[r["status"], r["execution"]["steps_completed"]]' "$out")" '["ok", 1]'

finish
