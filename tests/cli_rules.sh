#!/bin/sh
# cli_rules.sh: the rules' documentation and the reports CI systems read
# (issue 13, items 1-3 and --format=gitlab of 7):
#  - --explain and --list-rules: exit statuses, unknown codes (usage error
#    with a suggestion); their agreement with the table, the man page and
#    SARIF is tests/consistency.sh's;
#  - --select/--ignore with --werror: status and exit status agree, an
#    ignored finding is counted (summary.ignored, "N ignored"), a failure
#    of the tool cannot be ignored;
#  - text: help: after each error and warning, note: for a related party,
#    unchecked entries apart from notes (as JSON counts them), each naming
#    the option that decides it, -q; `unchecked` in --select, --ignore,
#    --explain and --list-rules;
#  - JSON: help on every error, the table's; related parties;
#  - SARIF: %SRCROOT%-relative and file:// URIs, fingerprints stable
#    across runs and unique, relatedLocations, the official schema
#    (tests/sarif_check.py) on every log written here;
#  - GitLab Code Quality: keys, severities, paths, fingerprints.
. "${top_srcdir:?}/tests/cli_lib.sh"
need_examples dense_cache dense_cache_broken dense_cache_implied if_branches_broken \
    chained_updates_broken

ok="$ex/dense_cache.onnx"
broken="$ex/dense_cache_broken.onnx"
warn="$ex/dense_cache_implied.onnx"
branch="$ex/if_branches_broken.onnx"
missing="$tmp/no-such-file.onnx"
sarif_ok=$("$PYTHON3" -c 'import jsonschema' 2>/dev/null && echo yes)
sarif_check() {   # sarif_check FILE WHAT: the official schema and GitHub's needs
    [ -n "$sarif_ok" ] || return 0
    "$PYTHON3" "$top_srcdir/tests/sarif_check.py" "$1" || fail "$2: SARIF check failed"
}

# ---- a section-6 finding end to end -----------------------------------------
# A Concat declared in place (doc/annotations.md's example): alias-unsupported
# at the node and value in JSON, with the table's help, and as a SARIF
# result.  Its near miss, the same graph without output_alias, has no error.
concat_model() {   # concat_model FILE EXTRA: encoded with protoc-c
    "${PROTOC_C:-protoc-c}" --encode=onnx.ModelProto --proto_path="$top_srcdir/proto" \
        "$top_srcdir/proto/onnx.proto" > "$1" <<EOF
ir_version: 10
opset_import { domain: "" version: 21 }
graph {
  name: "main"
  node { name: "grow" op_type: "Concat" input: "past" input: "new" output: "present"
         attribute { name: "axis" type: INT i: 1 } $2 }
  input { name: "past" access: READ_WRITE type { tensor_type { elem_type: 1 shape {
    dim { dim_value: 1 } dim { dim_param: "past_len" } dim { dim_value: 8 } } } } }
  input { name: "new" type { tensor_type { elem_type: 1 shape {
    dim { dim_value: 1 } dim { dim_value: 1 } dim { dim_value: 8 } } } } }
  output { name: "present" type { tensor_type { elem_type: 1 shape {
    dim { dim_value: 1 } dim { dim_param: "total_len" } dim { dim_value: 8 } } } } }
}
EOF
}
if command -v "${PROTOC_C:-protoc-c}" > /dev/null 2>&1; then
    concat_model "$tmp/concat_in_place.onnx" \
        'output_alias { output_index: 0 input_index: 0 kind: MUST_ALIAS }' ||
        fail "protoc-c could not encode the Concat model"
    run_oac 1 check --format=json "$tmp/concat_in_place.onnx"
    expect_eq "Concat in place" \
        "$(json '[[d["code"], d["node"], d["value"]] for d in r["diagnostics"] if d["severity"] == "error"]' "$out")" \
        '[["alias-unsupported", "grow", "present"]]'
    "$OAC" --explain alias-unsupported --format=json > "$tmp/au_rule.json" ||
        fail "--explain alias-unsupported failed"
    expect_eq "Concat in place: help" "$(json '[d["help"] for d in r["diagnostics"]]' "$out")" \
        "$(json '[r["help"]]' "$tmp/au_rule.json")"
    run_oac 1 check --format=sarif "$tmp/concat_in_place.onnx"
    expect_eq "Concat in place: SARIF" \
        "$(json '[x["ruleId"] for x in r["runs"][0]["results"]]' "$out")" '["alias-unsupported"]'
    sarif_check "$out" "Concat in place"
    concat_model "$tmp/concat_stock.onnx" "" || fail "protoc-c could not encode the stock Concat"
    run_oac 0 check --format=json "$tmp/concat_stock.onnx"
    expect_eq "Concat stock" \
        "$(json '[d["code"] for d in r["diagnostics"] if d["severity"] == "error"]' "$out")" '[]'
else
    echo "SKIP: Concat in place (no protoc-c)"
fi

# ---- --explain, --list-rules ----------------------------------------------
run_oac 0 --explain alias-hazard
head -n 1 "$out" | grep -q '^alias-hazard (error): ' || fail "--explain: first line $(head -n 1 "$out")"
grep -q '^How to fix: ' "$out" || fail "--explain: no 'How to fix'"
grep -q '^Wrong:$' "$out" && grep -q '^Right:$' "$out" || fail "--explain: no examples"
run_oac 2 --explain alias-hazrd
grep -q "did you mean 'alias-hazard'" "$err" || fail "--explain typo: no suggestion: $(cat "$err")"
[ -s "$out" ] && fail "--explain typo wrote a report"
run_oac 2 --explain no-such-thing-at-all
run_oac 0 --explain capacity-overflow --format=json
expect_eq "--explain json code" "$(json 'r["code"]' "$out")" capacity-overflow
run_oac 2 --list-rules "$ok"
run_oac 2 --list-rules --format=sarif
run_oac 0 --list-rules --format=json
expect_eq "--list-rules: failures" "$(json '[x["code"] for x in r if x["failure"]]' "$out")" \
    '["parse-error", "output-write-failed", "analysis-failed"]'

# ---- --select / --ignore --------------------------------------------------
run_oac 1 --werror "$warn"
run_oac 0 --werror --ignore alias-implied "$warn"
tail -n 1 "$out" | grep -q ', 1 ignored (status: ok)$' || fail "--ignore: summary $(tail -n 1 "$out")"
grep -q 'alias-implied\]$' "$out" && fail "--ignore: the ignored warning is printed"
run_oac 0 --werror --ignore alias-implied --format=json "$warn"
expect_eq "--ignore json" "$(json '[r["status"], r["summary"]["ignored"], r["summary"]["warnings"], len(r["diagnostics"])]' "$out")" \
    '["ok", 1, 0, 0]'
# --select keeps the codes named, counts the others.
run_oac 1 --werror --select alias-implied,alias-cycle --format=json "$warn"
expect_eq "--select keeps" "$(json '[r["status"], r["summary"]["ignored"], [d["code"] for d in r["diagnostics"]]]' "$out")" \
    '["error", 0, ["alias-implied"]]'
run_oac 0 --werror --select alias-cycle --format=json "$warn"
expect_eq "--select drops" "$(json '[r["status"], r["summary"]["ignored"]]' "$out")" '["ok", 1]'
# Selected and ignored: ignored, in either order.
run_oac 0 --werror --ignore alias-implied --select alias-implied "$warn"
run_oac 0 --werror --select alias-implied --ignore alias-implied "$warn"
# Errors too: status and exit status follow what is reported.
run_oac 0 --ignore alias-mismatch --format=json "$broken"
expect_eq "--ignore an error" "$(json '[r["status"], r["summary"]["errors"], r["summary"]["ignored"]]' "$out")" \
    '["ok", 0, 1]'
run_oac 0 --ignore alias-mismatch --format=sarif "$broken"
expect_eq "--ignore in SARIF" "$(json 'len(r["runs"][0]["results"])' "$out")" 0
# Unknown codes, failures, misplaced.
run_oac 2 --ignore alias-implid "$warn"
grep -q "did you mean 'alias-implied'" "$err" || fail "--ignore typo: no suggestion: $(cat "$err")"
[ -s "$out" ] && fail "--ignore typo wrote a report"
run_oac 2 --select alias-implied, "$warn"
run_oac 2 --ignore parse-error "$warn"
run_oac 2 run --ignore alias-implied "$warn"
# An unreadable model is reported whatever is selected.
run_oac 2 --select alias-cycle --format=json "$missing"
expect_eq "--select keeps parse-error" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["parse-error"]'

# ---- text: help, related notes, unchecked notes, -q ------------------------
run_oac 1 "$broken"
sed -n 2p "$out" | grep -q '^  help: .' || fail "no help: line after the error: $(sed -n 1,2p "$out")"
run_oac 0 --list-rules --format=json
help=$(json '[x["help"] for x in r if x["code"] == "alias-mismatch"][0]' "$out")
run_oac 1 --format=json "$broken"
expect_eq "JSON help is the table's" "$(json '[d.get("help") for d in r["diagnostics"]][0]' "$out")" "$help"
expect_eq "every error has help" "$(json 'all(d.get("help") for d in r["diagnostics"] if d["severity"] == "error")' "$out")" true
unchecked=$(json 'len(r["unchecked"])' "$out")
notes=$(json 'r["summary"]["notes"]' "$out")
[ "$unchecked" -ge 1 ] || fail "$broken: expected an unchecked entry to show"
run_oac 1 "$broken"
expect_eq "unchecked lines" "$(grep -c ': unchecked: .* \[unchecked\]$' "$out")" "$unchecked"
grep -q ': note: .*\[unchecked\]' "$out" && fail "an unchecked entry printed as a note: $(cat "$out")"
# Text and JSON agree on what a note is; the unchecked entries are counted apart.
tail -n 1 "$out" | grep -q ", $notes notes\{0,1\}, $unchecked unchecked (status: error)\$" ||
    fail "summary: notes as in JSON ($notes), then $unchecked unchecked: $(tail -n 1 "$out")"
# Each says what would decide it: the position is a graph input here.
grep -q ": unchecked: capacity not checked at node 'update' for 'cache': position is not known; --input position=FILE.pb gives its value \[unchecked\]$" "$out" ||
    fail "the unchecked line names no option: $(grep unchecked: "$out")"
run_oac 1 -q "$broken"
grep -q 'note:\|unchecked:' "$out" && fail "-q printed a note: $(cat "$out")"
tail -n 1 "$out" | grep -q ", $unchecked unchecked (status: error)\$" || fail "-q: unchecked not counted: $(tail -n 1 "$out")"
# `unchecked` is a word --select, --ignore, --explain and --list-rules know.
run_oac 1 --ignore unchecked "$broken"
grep -q 'unchecked' "$out" && fail "--ignore unchecked: still listed: $(cat "$out")"
run_oac 1 --ignore unchecked --format=json "$broken"
expect_eq "--ignore unchecked: JSON" "$(json 'len(r["unchecked"])' "$out")" 0
run_oac 1 --select alias-mismatch "$broken"
grep -q 'unchecked' "$out" && fail "--select without unchecked: still listed: $(cat "$out")"
run_oac 1 --select alias-mismatch,unchecked "$broken"
expect_eq "--select alias-mismatch,unchecked" "$(grep -c ': unchecked: ' "$out")" "$unchecked"
run_oac 0 --select unchecked "$broken"
expect_eq "--select unchecked alone" "$(grep -c 'error: \|: unchecked: ' "$out")" "$unchecked"
run_oac 1 --ignore alias-implied "$broken"
expect_eq "--ignore of another code keeps them" "$(grep -c ': unchecked: ' "$out")" "$unchecked"
run_oac 0 --explain unchecked
head -n 1 "$out" | grep -q '^unchecked (no severity: no diagnostic): A rule ' || fail "--explain unchecked: $(head -n 1 "$out")"
grep -q '^How to fix: .*--input NAME=FILE.pb' "$out" || fail "--explain unchecked: no option to decide it"
run_oac 0 --explain unchecked --format=json
expect_eq "--explain unchecked json" "$(json '[r["code"], r["severity"], r["failure"]]' "$out")" '["unchecked", null, false]'
run_oac 0 --list-rules
tail -n 1 "$out" | grep -q '^unchecked  *-  ' || fail "--list-rules: no unchecked row: $(tail -n 1 "$out")"
run_oac 2 --explain uncheked
# A name spelt in capitals or with '_' gets the code as suggestion.
run_oac 2 --explain ALIAS-MISMATCH
grep -q "did you mean 'alias-mismatch'" "$err" || fail "--explain ALIAS-MISMATCH: no suggestion: $(cat "$err")"
run_oac 2 --ignore Alias_Implied "$broken"
grep -q "did you mean 'alias-implied'" "$err" || fail "--ignore Alias_Implied: no suggestion: $(cat "$err")"
# A field name keeps its spelling at the start of a sentence.
run_oac 0 --explain alias-cycle
grep -q 'Output_alias\|Alias_of' "$out" && fail "--explain capitalises a field name: $(grep 'Output_alias\|Alias_of' "$out")"
# If's other branch is the related party of branch-mismatch.
run_oac 1 "$branch"
grep -q "^  note: the else_branch output that differs: value 'else_cache'" "$out" ||
    fail "no related note on branch-mismatch: $(cat "$out")"
run_oac 1 --format=json "$branch"
expect_eq "related in JSON" "$(json '[d["related"][0]["location"] for d in r["diagnostics"] if d["code"] == "branch-mismatch"][0]' "$out")" \
    /graph/node/0/attribute/1/g/output/0

# ---- SARIF: paths, fingerprints, related locations -------------------------
cd "$top_builddir" || exit 99
rel="examples/$(basename "$broken")"
run_oac 1 --format=sarif "$rel" "examples/if_branches_broken.onnx"
cp "$out" "$tmp/a.sarif"
sarif_check "$tmp/a.sarif" "two relative models"
expect_eq "relative uri" "$(json '[r["runs"][0]["artifacts"][0]["location"][k] for k in ("uri", "uriBaseId")]' "$out")" \
    "[\"$rel\", \"%SRCROOT%\"]"
expect_eq "SRCROOT" "$(json 'r["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]' "$out")" "file://$(pwd -P)/"
expect_eq "relatedLocations" "$(json '[x["relatedLocations"][0]["message"]["text"] for x in r["runs"][0]["results"] if x["ruleId"] == "branch-mismatch"]' "$out")" \
    '["the else_branch output that differs"]'
run_oac 1 --format=sarif "$(pwd -P)/$rel" "./examples/if_branches_broken.onnx"
expect_eq "fingerprints stable across runs and spellings" \
    "$(json '[x["partialFingerprints"] for x in r["runs"][0]["results"]]' "$out")" \
    "$(json '[x["partialFingerprints"] for x in r["runs"][0]["results"]]' "$tmp/a.sarif")"
# A model outside the working directory: an absolute file:// URI.
cp "$broken" "$tmp/outside model.onnx"
run_oac 1 --format=sarif "$tmp/outside model.onnx"
cp "$out" "$tmp/b.sarif"
sarif_check "$tmp/b.sarif" "a model outside the working directory"
expect_eq "absolute uri" "$(json 'r["runs"][0]["artifacts"][0]["location"]' "$out")" \
    "{\"uri\": \"file://$(echo "$tmp" | sed 's/ /%20/g')/outside%20model.onnx\"}"
# Every example at once: fingerprints unique, schema valid.
run_oac 2 --format=sarif examples/*.onnx "$missing"
cp "$out" "$tmp/all.sarif"
sarif_check "$tmp/all.sarif" "every example"

# ---- GitLab Code Quality ---------------------------------------------------
run_oac 2 --format=gitlab examples/*.onnx "$missing"
cp "$out" "$tmp/gl1"
"$PYTHON3" - "$tmp/gl1" "$missing" <<'PY' || fail "GitLab report: see above"
import json, sys
r = json.load(open(sys.argv[1]))
bad = 0
def no(msg):
    global bad
    print("FAIL: " + msg)
    bad = 1
if not isinstance(r, list) or not r:
    no("not a non-empty array")
    sys.exit(1)
sev = {"error": "major", "warning": "minor", "note": "info"}
for i in r:
    if set(i) != {"description", "check_name", "fingerprint", "severity", "location"}:
        no("keys %s" % sorted(i))
    if set(i["location"]) != {"path", "lines"} or i["location"]["lines"] != {"begin": 1}:
        no("location %r" % i["location"])
    if i["severity"] not in ("info", "minor", "major", "critical", "blocker"):
        no("severity %r" % i["severity"])
    if i["check_name"] == "parse-error":
        if i["severity"] != "blocker" or i["location"]["path"] != sys.argv[2]:
            no("parse-error: %r" % i)
    elif not i["location"]["path"].startswith("examples/"):
        no("path not relative to the working directory: %r" % i["location"]["path"])
checks = {(i["check_name"], i["severity"]) for i in r}
for want in (("alias-implied", "minor"), ("alias-mismatch", "major")):
    if want not in checks:
        no("no %s with severity %s" % want)
fps = [i["fingerprint"] for i in r]
if len(set(fps)) != len(fps) or not all(len(f) == 32 for f in fps):
    no("fingerprints not unique 32-hex strings")
sys.exit(bad)
PY
run_oac 2 --format=gitlab examples/*.onnx "$missing"
cmp -s "$out" "$tmp/gl1" || fail "GitLab report differs between two runs"
run_oac 1 --werror --format=gitlab "$warn"
expect_eq "--werror keeps GitLab severities" "$(json '[i["severity"] for i in r]' "$out")" '["minor"]'
run_oac 2 annotate --format=gitlab -o "$tmp/x.onnx" "$warn"

finish
