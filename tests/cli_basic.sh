#!/bin/sh
# cli_basic.sh: the `check` command line (contract, section 5): exit
# statuses 0/1/2, --werror, several models in argument order with an
# unreadable one, -o, --help/--version, usage errors, --dim errors.
# Uses the examples the build writes (examples/models.c says what each
# one must report).
. "${top_srcdir:?}/tests/cli_lib.sh"
need_examples dense_cache dense_cache_broken dense_cache_implied

ok="$ex/dense_cache.onnx"
broken="$ex/dense_cache_broken.onnx"
warn="$ex/dense_cache_implied.onnx"
garbage="$tmp/garbage.onnx"
printf '\377\377\377\377not a model' > "$garbage"
missing="$tmp/no-such-file.onnx"

# ---- exit statuses and the text format ---------------------------------
run_oac 0 "$ok"
# Its one note is a capacity rule it could not decide (`unchecked`).
expect_eq "clean text report" "$(tail -n 1 "$out")" "$ok: 0 errors, 0 warnings, 1 note (status: ok)"
# Its pair's verdict line (KV caches) is no finding.
grep -v '^  \|\[unchecked\]$\|^KV caches: 1 in place, 0 implied, 0 copied, 0 not a cache$' "$out" |
    grep -qv "^$ok: 0 errors" && fail "clean report has findings: $(cat "$out")"
[ -s "$err" ] && fail "a clean check wrote to stderr: $(cat "$err")"
run_oac 0 check "$ok"

run_oac 1 "$broken"
grep -q "^$broken: error: .* \[alias-mismatch\]\$" "$out" ||
    fail "no GCC-style alias-mismatch line: $(cat "$out")"
tail -n 1 "$out" | grep -q "^$broken: [1-9][0-9]* errors\{0,1\}, 0 warnings, [0-9]* notes\{0,1\} (status: error)\$" ||
    fail "bad summary line: $(tail -n 1 "$out")"

# Warnings pass unless --werror; --werror keeps the severity.
run_oac 0 "$warn"
grep -q "^$warn: warning: .* \[alias-implied\]\$" "$out" || fail "no alias-implied warning line"
run_oac 1 --werror "$warn"
grep -q "^$warn: warning: .* \[alias-implied\]\$" "$out" || fail "--werror changed the severity"
tail -n 1 "$out" | grep -q "(status: error)\$" || fail "--werror: status not error"
run_oac 0 --format=json "$warn"
expect_eq "status without --werror" "$(json 'r["status"]' "$out")" ok
run_oac 1 --format=json --werror "$warn"
expect_eq "status with --werror" "$(json 'r["status"]' "$out")" error
expect_eq "--werror warning count" "$(json 'r["summary"]["warnings"] >= 1 and r["summary"]["errors"] == 0' "$out")" true

# Unreadable input: a report all the same, exit 2.
run_oac 2 "$garbage"
grep -q "^$garbage: error: .* \[parse-error\]\$" "$out" || fail "no parse-error line for garbage"
[ -s "$err" ] && fail "a parse-error report also wrote to stderr: $(cat "$err")"
run_oac 2 --format=json "$missing"
expect_eq "missing file code" "$(json 'r["diagnostics"][0]["code"]' "$out")" parse-error
expect_eq "missing file model" "$(json 'r["model"]' "$out")" \
    "{\"path\": \"$missing\", \"ir_version\": null, \"opset_import\": []}"

# ---- several models: highest status, reports in argument order ---------
run_oac 2 --format=json "$warn" "$garbage" "$broken" "$ok"
expect_eq "array of paths" "$(json '[m["model"]["path"] for m in r]' "$out")" \
    "[\"$warn\", \"$garbage\", \"$broken\", \"$ok\"]"
expect_eq "statuses" "$(json '[m["status"] for m in r]' "$out")" '["ok", "error", "error", "ok"]'
run_oac 1 "$ok" "$broken" "$warn"
expect_eq "text summary lines in order" \
    "$(grep -c "(status: " "$out") $(grep "(status: " "$out" | cut -d: -f1 | tr '\n' ' ')" \
    "3 $ok $broken $warn "
run_oac 1 --format=sarif "$broken" "$ok"
# Paths under the working directory are relative to it (%SRCROOT%).
relpath() { "$PYTHON3" -c 'import os, sys; print(os.path.relpath(sys.argv[1]))' "$1"; }
rbroken=$(relpath "$broken")
rok=$(relpath "$ok")
expect_eq "sarif runs" "$(json 'len(r["runs"])' "$out")" 1
expect_eq "sarif artifacts" "$(json '[a["location"]["uri"] for a in r["runs"][0]["artifacts"]]' "$out")" \
    "[\"$rbroken\", \"$rok\"]"
expect_eq "sarif results name the broken model" \
    "$(json 'sorted({x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in r["runs"][0]["results"]})' "$out")" \
    "[\"$rbroken\"]"

# ---- -o FILE --------------------------------------------------------------
run_oac 1 --format=json -o "$tmp/r.json" "$broken"
[ -s "$out" ] && fail "-o: the report also went to stdout"
expect_eq "-o report" "$(json 'r["diagnostics"][0]["code"]' "$tmp/r.json")" alias-mismatch
run_oac 0 "$ok" --output "$tmp/r.txt"
grep -q "^$ok: 0 errors" "$tmp/r.txt" || fail "--output text report missing"
run_oac 2 -o "$tmp/no/such/dir/r.json" "$ok"

# ---- help and version -----------------------------------------------------
run_oac 0 --help
grep -q "^Usage: onnx-alias-check" "$out" || fail "--help has no usage line"
run_oac 0 -h
run_oac 0 --version
expect_eq "--version" "$(cat "$out")" "onnx-alias-check 0.1.0"

# ---- usage errors: exit 2, nothing on stdout, the reason on stderr ------
usage() {
    run_oac 2 "$@"
    [ -s "$out" ] && fail "usage error $* wrote a report"
    [ -s "$err" ] || fail "usage error $* said nothing on stderr"
}
usage --bogus "$ok"
usage -x "$ok"
usage --format=xml "$ok"
usage --format
usage --werror=yes "$ok"
usage
usage --steps 2 "$ok"
usage check --dump "$tmp" "$ok"
usage --dim batch "$ok"
usage --dim =1 "$ok"
usage --dim batch=zero "$ok"
usage --dim batch=0 "$ok"
usage --dim batch=1 --dim batch=2 "$ok"
usage --dim no_such_dim=4 "$ok"
grep -q no_such_dim "$err" || fail "stderr does not name the unknown --dim"
usage --input no_such_input="$tmp/x.pb" "$ok"

# --dim names need only occur in one of the models.
run_oac 0 --dim batch=1 --dim batch=1 "$ok"
run_oac 1 --dim max_length=16 --format=json "$ok" "$broken" "$warn"
run_oac 2 --dim no_such_dim=4 "$ok" "$broken"
# Nothing readable: the parse-error report is the answer, not a usage error.
run_oac 2 --dim no_such_dim=4 "$garbage"
grep -q "\[parse-error\]\$" "$out" || fail "--dim with only an unreadable model: no report"

# ---- --input: a known position decides the capacity rule -----------------
"$PYTHON3" -c '
import sys, numpy as np
from onnx import numpy_helper
t = numpy_helper.from_array(np.array(15, dtype=np.int64), "position")
open(sys.argv[1], "wb").write(t.SerializeToString())' "$tmp/pos15.pb" ||
    fail "cannot write a TensorProto with $PYTHON3"
run_oac 1 --dim max_length=16 --dim new_length=2 --input position="$tmp/pos15.pb" "$ok"
grep -q "\[capacity-overflow\]\$" "$out" || fail "--input position 15 + 2 > 16 not reported"
run_oac 0 --dim max_length=16 --dim new_length=1 --input position="$tmp/pos15.pb" "$ok"
run_oac 2 --input position="$tmp/missing.pb" "$ok"
run_oac 2 --input position="$garbage" "$ok"

finish
