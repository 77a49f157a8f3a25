#!/bin/sh
# cli_bounded.sh: bounded reports (contract section 12).  At most 1,000
# diagnostics of one code are listed per model; summary.omitted counts
# the rest per code ({} when none), SARIF and GitLab carry the count, the
# text summary says it, and status and exit status count them as if
# listed.  Two reproducers of issue 18: a model of 3,000 empty nodes (F7:
# one model-invalid each; the million-node case is measured by
# bench/bench_bounded.sh) and 2,500 bad pages through --input (F16), each
# beside a near miss of 999 (nothing omitted).  Every command runs under
# a 20-second limit.
. "${top_srcdir:?}/tests/cli_lib.sh"
need_examples paged_cache dense_cache dense_cache_broken toy_decoder_concat

"$PYTHON3" - "$tmp" <<'EOF' || { echo "FAIL: cannot write the models"; exit 1; }
import sys
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
def ld(f, b): return varint(f << 3 | 2) + varint(len(b)) + b
def vi(f, v): return varint(f << 3) + varint(v)
for name, n in (("empty3000", 3000), ("empty999", 999)):
    graph = ld(1, b"") * n + ld(2, b"g")
    model = vi(1, 8) + ld(7, graph) + ld(8, vi(2, 17))
    open(sys.argv[1] + "/" + name + ".onnx", "wb").write(model)
page = b"".join(vi(1, d) for d in (2, 2, 16, 4)) + ld(2, bytes(128)) + vi(3, 100) + vi(4, 0)
for name, n in (("pages2500", 2500), ("pages999", 999)):
    seq = ld(1, b"cache") + vi(2, 1001) + ld(1001, page) * n
    open(sys.argv[1] + "/" + name + ".pb", "wb").write(seq)
EOF

run_t() {
    want=$1
    shift
    timeout 20 "$OAC" "$@" > "$out" 2> "$err"
    got=$?
    [ "$got" = "$want" ] || { fail "onnx-alias-check $* exited $got, expected $want"; head -5 "$err"; }
}

# validate WHAT: the JSON report in $out against the schema and the rules
# of tests/validate_report.py (omitted only past 1,000 listed).
validate() {
    "$PYTHON3" "$top_srcdir/tests/validate_report.py" "$out" > "$tmp/v.log" 2>&1 ||
        { fail "$1: the report does not validate"; head -5 "$tmp/v.log"; }
}

# F7: 3,000 findings of one code, 1,000 listed, 2,000 omitted, status error.
m="$tmp/empty3000.onnx"
run_t 1 --format=json "$m"
validate "F7 json"
expect_eq "F7 listed" "$(json 'len(r["diagnostics"])' "$out")" 1000
expect_eq "F7 omitted" "$(json 'r["summary"]["omitted"]' "$out")" '{"model-invalid": 2000}'
expect_eq "F7 status" "$(json 'r["status"]' "$out")" error
run_t 1 "$m"
grep -q ': 1000 errors, 0 warnings, 0 notes, 2000 more model-invalid omitted (status: error)$' \
    "$out" || fail "F7 text: no summary line with the omitted count"
run_t 1 --format=sarif "$m"
expect_eq "F7 sarif results" "$(json 'len(r["runs"][0]["results"])' "$out")" 1000
expect_eq "F7 sarif omitted" \
    "$(json '[(n["associatedRule"]["id"], n["properties"]["omitted"]) for n in r["runs"][0]["invocations"][0]["toolExecutionNotifications"]]' "$out")" \
    '[["model-invalid", 2000]]'
run_t 1 --format=gitlab "$m"
expect_eq "F7 gitlab issues" "$(json 'len(r)' "$out")" 1001
json 'r[-1]["description"]' "$out" | grep -q '^2000 more model-invalid findings omitted' ||
    fail "F7 gitlab: no issue counting the omitted findings"
# --ignore removes the omitted ones with the listed ones: status ok.
run_t 0 --format=json --ignore model-invalid "$m"
expect_eq "F7 ignored" "$(json 'r["summary"]["ignored"]' "$out")" 3000
expect_eq "F7 ignored omitted" "$(json 'r["summary"]["omitted"]' "$out")" '{}'
# Near miss: 999, all listed, {} omitted.
run_t 1 --format=json "$tmp/empty999.onnx"
expect_eq "F7 near listed" "$(json 'len(r["diagnostics"])' "$out")" 999
expect_eq "F7 near omitted" "$(json 'r["summary"]["omitted"]' "$out")" '{}'

# F16: 2,500 bad pages through --input.
run_t 1 --format=json --input cache="$tmp/pages2500.pb" "$ex/paged_cache.onnx"
validate "F16 json"
expect_eq "F16 omitted" "$(json 'r["summary"]["omitted"]' "$out")" '{"page-type-invalid": 1500}'
run_t 1 --format=json --input cache="$tmp/pages999.pb" "$ex/paged_cache.onnx"
expect_eq "F16 near omitted" "$(json 'r["summary"]["omitted"]' "$out")" '{}'
expect_eq "F16 near listed" "$(json 'len(r["diagnostics"])' "$out")" 999

# F6: a load failure is that model's report, never the end of the others.
mkdir "$tmp/many" || exit 99
i=0
while [ $i -lt 40 ]; do
    cp "$ex/dense_cache.onnx" "$tmp/many/m$(printf %02d $i).onnx"
    i=$((i + 1))
done
echo garbage > "$tmp/many/m20-garbage.onnx"
for fmt in json sarif gitlab text; do
    run_t 2 --format=$fmt -o "$tmp/many.$fmt" "$tmp/many"
done
expect_eq "F6 reports" "$(json 'len(r)' "$tmp/many.json")" 41
expect_eq "F6 order" "$(json '[x["model"]["path"].rsplit("/", 1)[1] for x in r] == sorted(x["model"]["path"].rsplit("/", 1)[1] for x in r)' "$tmp/many.json")" true
expect_eq "F6 statuses" "$(json '[x["status"] for x in r].count("ok")' "$tmp/many.json")" 40
expect_eq "F6 unreadable" "$(json '[x["diagnostics"][0]["code"] for x in r if x["status"] == "error"]' "$tmp/many.json")" '["parse-error"]'
expect_eq "F6 sarif artifacts" "$(json 'len(r["runs"][0]["artifacts"])' "$tmp/many.sarif")" 41
expect_eq "F6 text summaries" "$(grep -c '(status: ' "$tmp/many.text")" 41
cp "$tmp/many.json" "$tmp/one.json"
"$PYTHON3" "$top_srcdir/tests/validate_report.py" "$tmp/many.json" > "$tmp/v.log" 2>&1 ||
    { fail "F6: the array does not validate"; head -5 "$tmp/v.log"; }

# F6b: SARIF and GitLab are written model by model (nothing but the paths
# kept), and the documents are the ones the library builds whole: jansson's
# layout (the text is its own re-dump), each model's findings as results
# at its artifact index in order, one artifact per model, the tool's
# failure on the unreadable one.
mkdir "$tmp/mixed" || exit 99
cp "$ex/toy_decoder_concat.onnx" "$tmp/mixed/a.onnx"
cp "$ex/dense_cache_broken.onnx" "$tmp/mixed/b.onnx"
echo garbage > "$tmp/mixed/c.onnx"
cp "$ex/dense_cache.onnx" "$tmp/mixed/d.onnx"
cp "$ex/dense_cache_broken.onnx" "$tmp/mixed/e.onnx"
for fmt in json sarif gitlab; do
    run_t 2 --format=$fmt -o "$tmp/mixed.$fmt" "$tmp/mixed"
done
relayout='import json, sys
t = open(sys.argv[1]).read()
print(json.dumps(json.loads(t), indent=2, ensure_ascii=False) + "\n" == t)'
for fmt in sarif gitlab; do
    expect_eq "F6b $fmt layout" "$("$PYTHON3" -c "$relayout" "$tmp/mixed.$fmt")" True
done
want=$(json '[[d["code"], i] for i, x in enumerate(r) for d in x["diagnostics"]]' "$tmp/mixed.json")
expect_eq "F6b sarif results" "$(json '[[x["ruleId"], x["locations"][0]["physicalLocation"]["artifactLocation"]["index"]] for x in r["runs"][0]["results"]]' "$tmp/mixed.sarif")" "$want"
expect_eq "F6b sarif artifacts" "$(json '[a["location"]["uri"].rsplit("/", 1)[1] for a in r["runs"][0]["artifacts"]]' "$tmp/mixed.sarif")" '["a.onnx", "b.onnx", "c.onnx", "d.onnx", "e.onnx"]'
expect_eq "F6b sarif failure" "$(json 'r["runs"][0]["invocations"][0]["executionSuccessful"]' "$tmp/mixed.sarif")" false
expect_eq "F6b gitlab issues" "$(json '[x["check_name"] for x in r]' "$tmp/mixed.gitlab")" \
    "$(json '[d["code"] for x in r for d in x["diagnostics"]]' "$tmp/mixed.json")"
expect_eq "F6b some results" "$(json 'len(r["runs"][0]["results"]) > 5' "$tmp/mixed.sarif")" true

finish
