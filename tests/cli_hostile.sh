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
# broken NAME CODE LOCATION VALUE-OR-NODE [LOCATION2 VALUE2]: `check`
# reports exactly one CODE at LOCATION naming VALUE-OR-NODE ("null":
# neither) (and, given, a second one at LOCATION2: a name a broken
# declaration leaves undefined) (exit 1); `run` reports them too and runs
# no step (exit 1, no crash, no hang).
# near NAME: the near-miss checks and runs clean.
broken() {
    name=$1 code=$2 loc=$3 who=\"$4\"
    [ "$4" = null ] && who=null
    found="[\"$code\", \"$loc\", $who]" found_codes="\"$code\""
    if [ $# -ge 6 ]; then
        found="$found, [\"$code\", \"$5\", \"$6\"]" found_codes="$found_codes, \"$code\""
    fi
    run_t 1 check --format=json "$hm/$name.onnx"
    expect_eq "$name: check" "$(json '[[d["code"], d["location"], d.get("value") or d.get("node")] for d in r["diagnostics"]]' "$out")" \
        "[$found]"
    expect_eq "$name: status" "$(json 'r["status"]' "$out")" error
    run_t 1 run --format=json "$hm/$name.onnx"
    expect_eq "$name: run refuses" \
        "$(json '[[d["code"] for d in r["diagnostics"]], r["execution"]["steps_completed"]]' "$out")" \
        "[[$found_codes], 0]"
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
broken dup_function_input model-invalid /functions/0/input/1 a \
    /functions/0/node/0/input/1 b
broken unnamed_body_input model-invalid /graph/node/0/attribute/0/g/input/2 null \
    /graph/node/0/attribute/0/g/node/1/input/0 x_in
# An initializer named like a graph input is its default, not a duplicate.
near initializer_default
# An If branch returning a name nothing defines (item 8): check refuses
# it, so run never meets it (formerly unsupported-operator mid-run).
broken branch_unproduced model-invalid /graph/node/1/attribute/0/g/output/0 tz
near branch_unproduced_near

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
# A node input "x\0NUL": not the graph input "x" its C string reads.
broken nul_input model-invalid /graph/node/0/input/0 x
grep -q "holds a NUL byte" "$out" || fail "nul_input: message does not name the NUL"
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

# ---- one status (contract 8) ------------------------------------------------
# agree EXIT CODE COMMAND ARGS...: in text, json and sarif the call exits EXIT,
# reports CODE as an error, and says so: text's last summary line
# "(status: error)", json's "status": "error" (of every model, in order),
# sarif's result at level "error" and executionSuccessful false (the tool
# could not do its job: every path here).
agree() {
    want=$1 code=$2 cmd=$3
    shift 3
    run_t "$want" "$cmd" --format=json "$@"
    expect_eq "json status ($*)" \
        "$(json '[m["status"] for m in (r if isinstance(r, list) else [r]) if any(d["code"] == "'"$code"'" for d in m["diagnostics"])][:1]' "$out")" '["error"]'
    run_t "$want" "$cmd" "$@"
    grep -q "\[$code\]\$" "$out" || fail "text: no [$code] ($*)"
    grep -q "(status: error)\$" "$out" || fail "text: no status error ($*)"
    run_t "$want" "$cmd" --format=sarif "$@"
    expect_eq "sarif ($*)" \
        "$(json '[[x["level"] for x in r["runs"][0]["results"] if x["ruleId"] == "'"$code"'"][:1], r["runs"][0]["invocations"][0]["executionSuccessful"]]' "$out")" \
        '[["error"], false]'
}

# ---- FIFOs: never a hang (item 4) -------------------------------------------
# A FIFO as the model: not a regular file, at once; with several models
# every one still gets its report, in order.
mkfifo "$tmp/fifo.onnx" "$tmp/fifo.pb" || exit 99
agree 2 parse-error check "$tmp/fifo.onnx" "$hm/raw_near.onnx"
run_t 2 check --format=json "$tmp/fifo.onnx" "$hm/raw_near.onnx"
expect_eq "fifo: every model reported" "$(json '[[m["status"], [d["code"] for d in m["diagnostics"]]] for m in r]' "$out")" \
    '[["error", ["parse-error"]], ["ok", []]]'
grep -q "not a regular file" "$out" || fail "fifo: reason not given"
agree 2 parse-error run "$tmp/fifo.onnx"
# A FIFO, a missing file, a folder as an --input: parse-error naming the
# input, for check and run (which runs nothing).
for f in "$tmp/fifo.pb" "$tmp/missing.pb" "$tmp"; do
    agree 2 parse-error check --input x="$f" "$hm/raw_near.onnx"
    agree 2 parse-error run --input x="$f" "$hm/raw_near.onnx"
    run_t 2 run --format=json --input x="$f" "$hm/raw_near.onnx"
    expect_eq "--input x=$f" "$(json '[[d["code"], d["value"], d["location"]] for d in r["diagnostics"]] + [r["execution"]["steps_completed"]]' "$out")" \
        '[["parse-error", "x", "/graph/input/0"], 0]'
done
# Several models sharing the input name: each says it.
run_t 2 check --format=json --input x="$tmp/fifo.pb" "$hm/raw_near.onnx" "$hm/noop_main_near.onnx"
expect_eq "--input fifo, two models" "$(json '[[d["code"] for d in m["diagnostics"]] for m in r]' "$out")" \
    '[["parse-error"], ["parse-error"]]'

# ---- a malformed --input file (item 7: a short --input) -------------------
# x4_short.pb holds 12 bytes for FLOAT[4]: run used to exit 2 with "ok".
agree 2 parse-error check --input x="$hm/x4_short.pb" "$hm/raw_near.onnx"
agree 2 parse-error run --input x="$hm/x4_short.pb" "$hm/raw_near.onnx"
grep -q "x4_short.pb is unreadable: tensor 'x' (FLOAT\[4\]) holds 12 bytes" "$out" ||
    { run_t 2 run --input x="$hm/x4_short.pb" "$hm/raw_near.onnx"
      grep -q "x4_short.pb is unreadable: tensor 'x' (FLOAT\[4\]) holds 12 bytes" "$out" ||
          fail "short --input: message: $(cat "$out")"; }
run_t 0 run --format=json --input x="$hm/x4.pb" "$hm/raw_near.onnx"
expect_eq "a whole --input runs" "$(json '[r["status"], r["execution"]["steps_completed"]]' "$out")" '["ok", 1]'

# ---- -o never names an input (item 5) --------------------------------------
cp "$hm/raw_near.onnx" "$tmp/m1.onnx" && cp "$hm/raw_short.onnx" "$tmp/m2.onnx" &&
    cp "$hm/x4.pb" "$tmp/in.pb" && ln "$tmp/m1.onnx" "$tmp/hard.onnx" &&
    ln -s m1.onnx "$tmp/link.onnx" || exit 99
cksum "$tmp/m1.onnx" "$tmp/m2.onnx" "$tmp/in.pb" > "$tmp/sums"
# -o naming one of several models, a hard link of a model, an --input
# file, a symlink: usage errors before anything is written.
run_t 2 check -o "$tmp/m2.onnx" "$tmp/m1.onnx" "$tmp/m2.onnx"
grep -q "is the model" "$err" || fail "-o model: reason: $(cat "$err")"
run_t 2 check --format=json -o "$tmp/hard.onnx" "$tmp/m1.onnx"
run_t 2 run -o "$tmp/in.pb" --input x="$tmp/in.pb" "$tmp/m1.onnx"
grep -q "is the --input file" "$err" || fail "-o --input: reason: $(cat "$err")"
# A model that does not exist is still an input: -o naming it is a usage
# error, not a parse-error report, for check and annotate alike.
run_t 2 check -o "$tmp/missing.onnx" "$tmp/missing.onnx"
grep -q "is the model" "$err" || fail "check -o missing model: reason: $(cat "$err")"
run_t 2 annotate -o "$tmp/missing.onnx" "$tmp/missing.onnx"
grep -q "is the model" "$err" || fail "annotate -o missing model: reason: $(cat "$err")"
[ -s "$out" ] && fail "annotate -o missing model: a report was written: $(cat "$out")"
[ -e "$tmp/missing.onnx" ] && fail "annotate -o missing model: the file was made"
run_t 2 check -o "$tmp/link.onnx" "$hm/raw_near.onnx"
grep -q "symbolic link" "$err" || fail "-o symlink: reason: $(cat "$err")"
[ -s "$out" ] && fail "-o refused, yet a report was written"
cksum "$tmp/m1.onnx" "$tmp/m2.onnx" "$tmp/in.pb" | cmp -s - "$tmp/sums" ||
    fail "-o changed an input"
[ -L "$tmp/link.onnx" ] || fail "-o replaced the symlink"
# A new file and an existing one: the report, whole, and nothing left
# beside it.
run_t 1 check --format=json -o "$tmp/report.json" "$tmp/m1.onnx" "$tmp/m2.onnx"
expect_eq "-o report" "$(json '[m["status"] for m in r]' "$tmp/report.json")" '["ok", "error"]'
run_t 0 check --format=json -o "$tmp/report.json" "$tmp/m1.onnx"
expect_eq "-o replaced" "$(json 'r["status"]' "$tmp/report.json")" ok
ls -a "$tmp" | grep -q oac-tmp && fail "-o left a temporary file"
run_t 2 check -o "$tmp/no/such/report.json" "$tmp/m1.onnx"

# ---- --dump: one file per name, no symlink followed, failures reported -----
# 'a/b', 'a_b', '.hidden' and '%2F' are four files (percent-encoding), and
# a dump reads back through --input.
run_t 0 run --input in/x="$hm/x4.pb" --dump "$tmp/d1" "$hm/dump_names.onnx"
expect_eq "--dump names" "$(ls -a "$tmp/d1" | grep -v '^\.*$' | tr '\n' ' ')" \
    "%252F.pb %2Ehidden.pb a%2Fb.pb a_b.pb "
"$PYTHON3" -c 'import sys, onnx
from onnx import numpy_helper
d = sys.argv[1]
for f, name, v in (("a%2Fb", "a/b", -1), ("a_b", "a_b", 1), ("%2Ehidden", ".hidden", 1), ("%252F", "%2F", -1)):
    t = onnx.load_tensor(d + "/" + f + ".pb")
    assert t.name == name, (f, t.name)
    assert list(numpy_helper.to_array(t)) == [v * k for k in (1, 2, 3, 4)], (f, numpy_helper.to_array(t))
' "$tmp/d1" || fail "--dump files do not hold their values under their names"
run_t 0 run --input in/x="$tmp/d1/a%2Fb.pb" --dump "$tmp/d2" "$hm/dump_names.onnx"
"$PYTHON3" -c 'import sys, onnx
from onnx import numpy_helper
assert list(numpy_helper.to_array(onnx.load_tensor(sys.argv[1]))) == [-1, -2, -3, -4]
' "$tmp/d2/a_b.pb" || fail "a dump read back through --input"
# A symlink planted in the folder is not followed: its target unchanged,
# the value an output-write-failed error, the other values written.
mkdir "$tmp/d3" && echo target > "$tmp/target" && ln -s ../target "$tmp/d3/a_b.pb" || exit 99
agree 1 output-write-failed run --input in/x="$hm/x4.pb" --dump "$tmp/d3" "$hm/dump_names.onnx"
run_t 1 run --format=json --input in/x="$hm/x4.pb" --dump "$tmp/d3" "$hm/dump_names.onnx"
expect_eq "--dump symlink" "$(json '[[d["code"], d["value"]] for d in r["diagnostics"]]' "$out")" \
    '[["output-write-failed", "a_b"]]'
expect_eq "symlink target" "$(cat "$tmp/target")" target
[ -L "$tmp/d3/a_b.pb" ] || fail "--dump replaced the symlink"
[ -f "$tmp/d3/a%2Fb.pb" ] || fail "--dump gave up the other values"
# A name too long for the file system: an error, not "ok".
agree 1 output-write-failed run --dump "$tmp/d4" "$hm/dump_long_name.onnx"
run_t 1 run --format=json --dump "$tmp/d4" "$hm/dump_long_name.onnx"
expect_eq "--dump long name" "$(json '[[d["code"], len(d["value"])] for d in r["diagnostics"]]' "$out")" \
    '[["output-write-failed", 300]]'
[ -f "$tmp/d4/short.pb" ] || fail "--dump: the short name was not written"
# A folder that cannot be made: every value is an error, the report says
# so.
agree 1 output-write-failed run --dump "$tmp/no/such" "$hm/dump_names.onnx"
ls -a "$tmp/d1" "$tmp/d3" "$tmp/d4" | grep -q oac-tmp && fail "--dump left a temporary file"

# An input default is read as that input's data: a --dim contradicting
# it is shape-mismatch before anything runs; without one it runs.
run_t 1 run --format=json --dim N=2 "$hm/default_symbolic.onnx"
expect_eq "default vs --dim" "$(json '[[d["code"] for d in r["diagnostics"]], r["execution"]["steps_completed"]]' "$out")" \
    '[["shape-mismatch"], 0]'
run_t 0 run "$hm/default_symbolic.onnx"

# ---- memory: a budget, bounded records (item 6) -------------------------------
# plan_128g (a few hundred bytes) plans eight 16 GiB outputs: refused
# before anything is allocated, at once, naming the budget and the need,
# under the default budget (half the physical memory: below 128 GiB on
# any machine this runs on) and an explicit one.
[ "$(wc -c < "$hm/plan_128g.onnx")" -lt 512 ] || fail "plan_128g is not a small file"
mem_kb=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo 2>/dev/null)
if [ -n "$mem_kb" ] && [ "$mem_kb" -lt 268435456 ]; then
    # A finding, not the tool failing: SARIF's run still succeeded.
    run_t 1 run "$hm/plan_128g.onnx"
    grep -q "\[memory-budget\]\$" "$out" && grep -q "(status: error)\$" "$out" ||
        fail "plan_128g: text: $(cat "$out")"
    run_t 1 run --format=sarif "$hm/plan_128g.onnx"
    expect_eq "plan_128g: sarif" \
        "$(json '[[x["ruleId"], x["level"]] for x in r["runs"][0]["results"]] + [r["runs"][0]["invocations"][0]["executionSuccessful"]]' "$out")" \
        '[["memory-budget", "error"], true]'
    run_t 1 run --format=json "$hm/plan_128g.onnx"
    half=$(( mem_kb * 1024 / 2 ))
    page=$(getconf PAGESIZE 2>/dev/null || echo 4096)
    expect_eq "plan_128g: default budget" \
        "$(json '[[d["code"], d["node"], "above the memory budget of" in d["message"]] for d in r["diagnostics"]] + [r["execution"]["steps_completed"], r["execution"]["memory_peak_bytes"]]' "$out")" \
        '[["memory-budget", "y7", true], 0, 0]'
    # The budget named is half of MemTotal (to the page: the kernel keeps
    # some pages out of MemTotal, sysconf counts the same ones).
    got=$(json 'int(r["diagnostics"][0]["message"].split("memory budget of ")[1].split(" ")[0])' "$out")
    [ $(( got - half )) -le "$page" ] && [ $(( half - got )) -le "$page" ] ||
        fail "plan_128g: default budget $got, half of MemTotal is $half"
fi
run_t 1 run --format=json --max-memory 1G "$hm/plan_128g.onnx"
expect_eq "plan_128g: --max-memory 1G" \
    "$(json '[["154618822656 bytes" in d["message"], "budget of 1073741824 bytes" in d["message"]] for d in r["diagnostics"]]' "$out")" \
    '[[true, true]]'
# huge_input (3.2 GB in, 3.2 GB out): the largest part named.
run_t 1 run --format=json --max-memory 4G "$hm/huge_input.onnx"
expect_eq "huge_input: 4G" "$(json '[[d["code"], d.get("value")] for d in r["diagnostics"]]' "$out")" \
    '[["memory-budget", "x"]]'
# --max-memory takes bytes with a binary suffix; anything else is bad
# usage.  tiny_neg holds 32 bytes: its input's copy and Neg's output.
run_t 0 run --max-memory 32 "$hm/tiny_neg.onnx"
run_t 1 run --max-memory 31 "$hm/tiny_neg.onnx"
run_t 0 run --max-memory 1KiB "$hm/tiny_neg.onnx"
run_t 0 run --max-memory 0 "$hm/tiny_neg.onnx"
for bad in "" -1 12X 1.5G 99999999999999999999 20000000T; do
    run_t 2 run --max-memory "$bad" "$hm/tiny_neg.onnx"
    grep -q "max-memory" "$err" || fail "--max-memory '$bad': no reason on stderr"
done
run_t 2 check --max-memory 1G "$hm/tiny_neg.onnx"
# A million steps without a cache: small in memory and in the report,
# which keeps the first and last 8 steps and counts the rest.
rm -f "$tmp/rss"
if command -v /usr/bin/time > /dev/null 2>&1; then
    /usr/bin/time -f %M -o "$tmp/rss" timeout 120 "$OAC" run --format=json --steps 1000000 \
        "$hm/tiny_neg.onnx" > "$out" 2> "$err" || fail "a million steps: exit $?"
else
    timeout 120 "$OAC" run --format=json --steps 1000000 "$hm/tiny_neg.onnx" > "$out" 2> "$err" ||
        fail "a million steps: exit $?"
fi
[ "$(wc -c < "$out")" -lt 1048576 ] || fail "a million steps: the report is $(wc -c < "$out") bytes"
expect_eq "a million steps" \
    "$(json '[r["execution"]["steps_completed"], [s["step"] for s in r["execution"]["per_step"]], r["execution"]["per_step_omitted"]]' "$out")" \
    '[1000000, [1, 2, 3, 4, 5, 6, 7, 8, 999993, 999994, 999995, 999996, 999997, 999998, 999999, 1000000], 999984]'
# Resident size means nothing under ASan (its quarantine keeps up to 256 MB
# of freed memory): the normal build asserts it.
if [ -n "${OAC_SANITIZERS:-}" ]; then
    echo "a million steps: resident size not asserted in the sanitizer build"
elif [ -s "$tmp/rss" ] && [ "$(tail -1 "$tmp/rss")" -ge 65536 ]; then
    fail "a million steps: $(tail -1 "$tmp/rss") KiB resident"
fi

# ---- out of memory: a report that says so, or none ---------------------------
# OAC_FAIL_ALLOC_AFTER=N fails the library's Nth allocation and all after:
# at every N, the exit status and the report agree (no report at all only
# when even the diagnostic list could not be made).  analysis-failed is
# the report's word for it.
OAC_FAIL_ALLOC_AFTER=40 agree 2 analysis-failed run "$hm/raw_near.onnx"
for cmd in check run; do
    n=1
    while [ $n -le 400 ]; do
        OAC_FAIL_ALLOC_AFTER=$n timeout 10 "$OAC" $cmd --format=json "$ex/toy_decoder.onnx" > "$out" 2> "$err"
        got=$?
        st=$("$PYTHON3" -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))["status"])
except Exception:
    print("none")' "$out")
        case $got:$st in
        0:ok|1:error|2:error|2:none) ;;
        *) fail "$cmd with allocation $n failing: exit $got, status $st" ;;
        esac
        # Out of memory is the tool failing (analysis-failed), never a
        # finding about the model (item 8).
        if grep -q '"unsupported-operator"' "$out"; then
            fail "$cmd with allocation $n failing: unsupported-operator"
        fi
        n=$((n + 7))
    done
done

finish
