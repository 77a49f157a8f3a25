#!/bin/sh
# cli_contract.sh: black-box conformance of the command line to the
# contract, sections 3 ("Details the rules rely on"), 4 (report) and 5
# (command line): exact keys, types and values of JSON reports of check
# and run, text and SARIF details, stdout/stderr separation, exit
# statuses, --dim/--input/--readonly/--sessions/--dump, and the detail
# rules one crafted model each (tests/cli_models.c writes them).
. "${top_srcdir:?}/tests/cli_lib.sh"
need_examples dense_cache dense_cache_broken dense_cache_implied metadata_alias \
    chained_updates chained_updates_broken loop_cache_broken
cm="$tmp/models"
mkdir "$cm" && "$top_builddir/tests/cli_models" "$cm" || { echo "cli_models failed"; exit 99; }

dense="$ex/dense_cache.onnx"
broken="$ex/dense_cache_broken.onnx"
implied="$ex/dense_cache_implied.onnx"
garbage="$tmp/garbage.onnx"
printf '\012\377\377\377\377\017 not ONNX' > "$garbage"
missing="$tmp/no-such-file.onnx"
dims="--dim batch=1 --dim heads=2 --dim max_length=8 --dim head_size=4 --dim new_length=1"

# codes MODEL: the diagnostics' codes, sorted, as a JSON list.
codes() {
    json 'sorted(d["code"] for d in r["diagnostics"])' "$out"
}

# ---- 4: every required key with its type, check -----------------------------
keys='[sorted(r), sorted(r["tool"]), sorted(r["model"]), sorted(r["summary"]), sorted(r["memory_plan"])]'
want_keys='[["alias_classes", "diagnostics", "kv_caches", "memory_plan", "model", "status", "summary", "tool", "unchecked"], ["name", "version"], ["ir_version", "opset_import", "path"], ["errors", "notes", "omitted", "warnings"], ["peak_bytes", "persistent_cache_bytes", "planned_output_bytes", "second_cache_bytes", "workspace_bytes"]]'
run_oac 1 --format=json "$broken"
expect_eq "check report keys" "$(json "$keys" "$out")" "$want_keys"
expect_eq "tool" "$(json 'r["tool"]' "$out")" '{"name": "onnx-alias-check", "version": "0.1.0"}'
expect_eq "model" "$(json 'r["model"]' "$out")" \
    "{\"path\": \"$broken\", \"ir_version\": 10, \"opset_import\": [{\"domain\": \"\", \"version\": 21}, {\"domain\": \"onnx_alias\", \"version\": 1}]}"
expect_eq "status/summary" "$(json '[r["status"], r["summary"]]' "$out")" \
    '["error", {"errors": 1, "warnings": 0, "notes": 0, "omitted": {}}]'
expect_eq "diagnostic" "$(json 'r["diagnostics"][0]' "$out" | "$PYTHON3" -c 'import json,sys; d=json.load(sys.stdin); d.pop("message"); d.pop("help"); print(json.dumps(d, sort_keys=True))')" \
    '{"code": "alias-mismatch", "graph": "main", "location": "/graph/output/0", "node": "update", "op_type": "CacheUpdate", "severity": "error", "value": "updated_cache"}'
expect_eq "message is a non-empty string" "$(json 'isinstance(r["diagnostics"][0]["message"], str) and len(r["diagnostics"][0]["message"]) > 0' "$out")" true
expect_eq "alias class" "$(json 'r["alias_classes"]' "$out")" \
    '[{"root": "cache", "members": ["cache", "updated_cache"], "elem_type": "FLOAT16", "shape": [2, "batch", "heads", "max_length", "head_size"], "bytes": null}]'
expect_eq "memory plan with unknown dims" "$(json 'r["memory_plan"]' "$out")" \
    '{"persistent_cache_bytes": null, "planned_output_bytes": 0, "workspace_bytes": 0, "peak_bytes": 0, "second_cache_bytes": 0}'
[ -s "$err" ] && fail "a report with errors wrote to stderr: $(cat "$err")"

# ---- 4: run adds execution ----------------------------------------------------
# shellcheck disable=SC2086
run_oac 0 run --steps 2 $dims --format=json "$dense"
expect_eq "run report keys" "$(json 'sorted(k for k in r if k != "execution") == sorted(["alias_classes", "diagnostics", "kv_caches", "memory_plan", "model", "status", "summary", "tool", "unchecked"])' "$out")" true
# The contract's keys, and the additions copied_bytes (contract 8, issue 11),
# cache_bytes_bound, per_step_omitted and memory_peak_bytes (issue 12).
expect_eq "execution keys" "$(json 'sorted(set(r["execution"]) - {"cache_bytes_bound", "per_step_omitted", "memory_peak_bytes"})' "$out")" \
    '["copied_bytes", "measured_peak_bytes", "peak_matches_plan", "per_step", "planned_peak_bytes", "pointer_identity", "second_cache_bytes", "steps_completed", "steps_requested"]'
expect_eq "execution values" "$(json '[r["execution"][k] for k in ("steps_requested", "steps_completed", "pointer_identity", "second_cache_bytes", "measured_peak_bytes", "planned_peak_bytes", "peak_matches_plan")]' "$out")" \
    '[2, 2, {"checked": 2, "held": 2}, 0, 0, 0, true]'
expect_eq "per_step" "$(json 'r["execution"]["per_step"]' "$out")" \
    '[{"step": 1, "alloc_calls": 0, "alloc_bytes": 0, "pointer_identity": {"checked": 1, "held": 1}, "copied_bytes": 0, "past_length": null}, {"step": 2, "alloc_calls": 0, "alloc_bytes": 0, "pointer_identity": {"checked": 1, "held": 1}, "copied_bytes": 0, "past_length": null}]'
expect_eq "run alias class at the run's dims" "$(json 'r["alias_classes"]' "$out")" \
    '[{"root": "cache", "members": ["cache", "updated_cache"], "elem_type": "FLOAT16", "shape": [2, 1, 2, 8, 4], "bytes": 256}]'
expect_eq "run memory plan" "$(json 'r["memory_plan"]' "$out")" \
    '{"persistent_cache_bytes": 256, "planned_output_bytes": 0, "workspace_bytes": 0, "peak_bytes": 0, "second_cache_bytes": 0}'
[ -s "$err" ] && fail "a clean run wrote to stderr: $(cat "$err")"

# ---- 4/5: unreadable models, the array form -----------------------------------
for bad in "$garbage" "$missing"; do
    run_oac 2 --format=json "$bad"
    expect_eq "unreadable keys" "$(json "$keys" "$out")" "$want_keys"
    expect_eq "unreadable report" "$(json '[r["model"], r["status"], r["summary"], [d["code"] for d in r["diagnostics"]], r["alias_classes"], r["memory_plan"]]' "$out")" \
        "[{\"path\": \"$bad\", \"ir_version\": null, \"opset_import\": []}, \"error\", {\"errors\": 1, \"warnings\": 0, \"notes\": 0, \"omitted\": {}}, [\"parse-error\"], [], {\"persistent_cache_bytes\": null, \"planned_output_bytes\": null, \"workspace_bytes\": null, \"peak_bytes\": null, \"second_cache_bytes\": null}]"
    run_oac 2 "$bad"
    grep -q "^$bad: error: .* \[parse-error\]\$" "$out" || fail "text: no parse-error line for $bad"
    tail -n 1 "$out" | grep -q "^$bad: 1 error, 0 warnings, 0 notes (status: error)\$" ||
        fail "text: summary of $bad: $(tail -n 1 "$out")"
done
# A folder is searched for *.onnx files (tests/cli_usage.sh); one with
# none is a usage error: exit 2, no report, the reason on stderr.
mkdir "$tmp/no-models"
run_oac 2 --format=json "$tmp/no-models"
[ -s "$out" ] && fail "a folder without models wrote a report"
grep -q "no \*\.onnx model" "$err" || fail "a folder without models: $(cat "$err")"

run_oac 2 --format=json "$implied" "$missing" "$broken" "$dense"
expect_eq "array: paths in argument order" "$(json '[m["model"]["path"] for m in r]' "$out")" \
    "[\"$implied\", \"$missing\", \"$broken\", \"$dense\"]"
expect_eq "array: own statuses and summaries" "$(json '[[m["status"], m["summary"]["errors"], m["summary"]["warnings"]] for m in r]' "$out")" \
    '[["ok", 0, 1], ["error", 1, 0], ["error", 1, 0], ["ok", 0, 0]]'
expect_eq "array: every report keeps every key" "$(json 'all(sorted(m) == ["alias_classes", "diagnostics", "kv_caches", "memory_plan", "model", "status", "summary", "tool", "unchecked"] for m in r)' "$out")" true
run_oac 1 --format=json "$dense" "$broken" "$implied"
expect_eq "array: highest status 1" "$(json 'len(r)' "$out")" 3
run_oac 0 --format=json "$dense" "$implied"
expect_eq "array of two" "$(json '[m["status"] for m in r]' "$out")" '["ok", "ok"]'
run_oac 1 --werror --format=json "$dense" "$implied"
expect_eq "array --werror" "$(json '[m["status"] for m in r]' "$out")" '["ok", "error"]'
run_oac 0 --format=json "$dense"
expect_eq "one model: an object" "$(json 'type(r).__name__' "$out")" dict

# summary counts equal the diagnostics (warnings)
run_oac 0 --format=json "$ex/metadata_alias.onnx"
expect_eq "metadata_alias codes" "$(codes)" '["alias-implied", "metadata-alias", "metadata-alias"]'
expect_eq "metadata_alias summary" "$(json 'r["summary"]' "$out")" '{"errors": 0, "warnings": 3, "notes": 0, "omitted": {}}'
expect_eq "metadata_alias severities" "$(json 'sorted({d["severity"] for d in r["diagnostics"]})' "$out")" '["warning"]'
run_oac 1 --werror --format=json "$ex/metadata_alias.onnx"
expect_eq "--werror keeps severities" "$(json '[r["status"], r["summary"], sorted({d["severity"] for d in r["diagnostics"]})]' "$out")" \
    '["error", {"errors": 0, "warnings": 3, "notes": 0, "omitted": {}}, ["warning"]]'

# ---- 4: locations, unnamed nodes, absent kind ---------------------------------
run_oac 1 --format=json "$cm/kind_absent.onnx"
expect_eq "absent kind is UNDEFINED, unnamed node #1" \
    "$(json '[[d["node"], d["op_type"], d["location"]] for d in r["diagnostics"] if d["code"] == "alias-kind-undefined"]' "$out")" \
    '[["#1", "CacheUpdate", "/graph/node/1/output_alias/0"]]'
run_oac 1 --format=json "$cm/loop_body_unnamed.onnx"
expect_eq "inside a Loop body" \
    "$(json '[[d["graph"], d["node"], d["location"]] for d in r["diagnostics"] if d["code"] == "alias-kind-undefined"]' "$out")" \
    '[["step", "#1", "/graph/node/0/attribute/0/g/node/1/output_alias/0"]]'
run_oac 1 --format=json "$cm/if_else_unnamed.onnx"
expect_eq "inside an If else branch" \
    "$(json '[[d["graph"], d["node"], d["location"]] for d in r["diagnostics"] if d["code"] == "alias-kind-undefined"]' "$out")" \
    '[["else_g", "#1", "/graph/node/0/attribute/1/g/node/1/output_alias/0"]]'
run_oac 1 --format=json "$cm/function_bad_port.onnx"
expect_eq "inside a local function" \
    "$(json '[[d["graph"], d["node"], d["location"]] for d in r["diagnostics"] if d["code"] == "alias-index-out-of-range"]' "$out")" \
    '[["UpdateCache", "#0", "/functions/0/node/0/output_alias/0"]]'
run_oac 1 --format=json "$ex/loop_cache_broken.onnx"
expect_eq "Loop location" "$(json '[[d["code"], d["node"], d["location"]] for d in r["diagnostics"]]' "$out")" \
    '[["branch-mismatch", "steps", "/graph/node/0"]]'
run_oac 0 --format=json "$ex/metadata_alias.onnx"
expect_eq "metadata locations" "$(json 'sorted(d["location"] for d in r["diagnostics"])' "$out")" \
    '["/graph/node/0", "/graph/node/0/metadata_props/0", "/graph/output/0/metadata_props/0"]'

# Names are bytes (ONNX does not check UTF-8): a node name that is not
# UTF-8 still gets a JSON and SARIF report, its bad byte as U+FFFD.
"$PYTHON3" - "$broken" "$tmp/badutf8.onnx" <<'EOF' || fail "cannot write the bad UTF-8 model"
import sys
raw = open(sys.argv[1], "rb").read()
i = raw.index(b"\x1a\x06update")          # NodeProto.name (field 3)
open(sys.argv[2], "wb").write(raw[:i] + b"\x1a\x06upd\xffte" + raw[i + 8:])
EOF
run_oac 1 --format=json "$tmp/badutf8.onnx"
expect_eq "bad UTF-8 node name" "$(json '[d["node"] == "upd\ufffdte" for d in r["diagnostics"]]' "$out")" '[true]'
[ -s "$err" ] && fail "bad UTF-8 node name: stderr: $(cat "$err")"
run_oac 1 --format=sarif "$tmp/badutf8.onnx"
expect_eq "bad UTF-8 node name, SARIF" \
    "$(json '[l["name"] == "upd\ufffdte" for l in r["runs"][0]["results"][0]["locations"][0]["logicalLocations"] if l["kind"] == "function"]' "$out")" '[true]'
badpath="$tmp/$(printf 'bad\377name').onnx"
cp "$dense" "$badpath"
run_oac 0 --format=json "$badpath"
expect_eq "bad UTF-8 path" "$(json 'r["model"]["path"].endswith("bad\ufffdname.onnx")' "$out")" true
run_oac 0 --format=sarif "$badpath"
expect_eq "bad UTF-8 path, SARIF uri" "$(json 'r["runs"][0]["artifacts"][0]["location"]["uri"].endswith("/bad%FFname.onnx")' "$out")" true

# ---- 4: alias classes ---------------------------------------------------------
run_oac 0 --format=json "$cm/chain_reversed.onnx"
expect_eq "members in topological order" "$(json '[c["members"] for c in r["alias_classes"]]' "$out")" \
    '[["cache", "u1", "u2"]]'
run_oac 0 --format=json "$cm/unknown_dim.onnx"
expect_eq "unknown dim: null in shape, bytes null" "$(json '[[c["shape"], c["bytes"]] for c in r["alias_classes"]]' "$out")" \
    '[[[2, null, 2, 8, 4], null]]'
expect_eq "unknown dim: persistent bytes null" "$(json 'r["memory_plan"]["persistent_cache_bytes"]' "$out")" null
run_oac 0 --format=json "$cm/scatter_aliased.onnx"
expect_eq "FLOAT class, bytes known" "$(json 'r["alias_classes"]' "$out")" \
    '[{"root": "past_cache", "members": ["past_cache", "present_cache"], "elem_type": "FLOAT", "shape": [1, 4, 16, 8], "bytes": 2048}]'
expect_eq "scatter plan" "$(json 'r["memory_plan"]' "$out")" \
    '{"persistent_cache_bytes": 2048, "planned_output_bytes": 0, "workspace_bytes": 0, "peak_bytes": 0, "second_cache_bytes": 0}'

# ---- 4: memory_plan nulls when a field depends on an unknown dim --------------
run_oac 0 --format=json "$cm/plan_unknown.onnx"
expect_eq "plan with unknown rows" "$(json 'r["memory_plan"]' "$out")" \
    '{"persistent_cache_bytes": 256, "planned_output_bytes": null, "workspace_bytes": 0, "peak_bytes": null, "second_cache_bytes": 0}'
run_oac 0 --format=json --dim rows=2 "$cm/plan_unknown.onnx"
expect_eq "plan with --dim rows=2" "$(json 'r["memory_plan"]' "$out")" \
    '{"persistent_cache_bytes": 256, "planned_output_bytes": 32, "workspace_bytes": 0, "peak_bytes": 32, "second_cache_bytes": 0}'
run_oac 0 --format=json "$implied"
expect_eq "second cache unknown" "$(json 'r["memory_plan"]["second_cache_bytes"]' "$out")" null
# shellcheck disable=SC2086
run_oac 0 --format=json $dims "$implied"
expect_eq "second cache at --dim" "$(json 'r["memory_plan"]["second_cache_bytes"]' "$out")" 256

# ---- 5: text format ------------------------------------------------------------
run_oac 1 "$ex/chained_updates_broken.onnx" "$dense"
# (Indented help:/note: lines and the lines of undecided rules are
# tests/cli_rules.sh's; the last line, the totals of several models,
# tests/cli_basic.sh's.)
expect_eq "text lines" "$(grep -v '^  \|\[unchecked\]$' "$out" | sed 's/: error: .* \[/: error: [/; s/, [0-9]* notes\{0,1\}\(, [0-9]* unchecked\)\{0,1\} (/, K notes (/')" \
"$ex/chained_updates_broken.onnx: error: [alias-mismatch]
$ex/chained_updates_broken.onnx: 1 error, 0 warnings, K notes (status: error)
KV caches: 1 in place, 0 implied, 0 copied, 0 not a cache
$dense: 0 errors, 0 warnings, K notes (status: ok)
2 models: 1 with errors, 0 with warnings only, 1 ok"
[ -s "$err" ] && fail "text report wrote to stderr"

# A newline in a path or name cannot break the one-line-per-diagnostic form.
nlpath="$tmp/new
line.onnx"
cp "$broken" "$nlpath"
run_oac 1 -q "$nlpath"
# The diagnostic, the KV caches line of its one pair, the summary.
expect_eq "text lines with a newline in the path" "$(grep -vc '^  ' "$out" | tr -d ' ')" 3
grep -q "^$tmp/new line.onnx: 1 error, 0 warnings, [0-9]* notes\{0,1\}\(, [0-9]* unchecked\)\{0,1\} (status: error)\$" "$out" ||
    fail "newline in the path not written as a space: $(cat "$out")"

# ---- 5: stdout/stderr and -o for every format -----------------------------------
for fmt in text json sarif; do
    run_oac 1 --format=$fmt "$broken"
    cp "$out" "$tmp/stdout.$fmt"
    [ -s "$err" ] && fail "$fmt: stderr not empty: $(cat "$err")"
    run_oac 1 --format=$fmt -o "$tmp/report.$fmt" "$broken"
    [ -s "$out" ] && fail "$fmt -o: stdout not empty"
    [ -s "$err" ] && fail "$fmt -o: stderr not empty"
    cmp -s "$tmp/stdout.$fmt" "$tmp/report.$fmt" || fail "$fmt: -o FILE differs from stdout"
    # shellcheck disable=SC2086
    run_oac 0 run $dims --format=$fmt -o "$tmp/run.$fmt" "$dense"
    [ -s "$out" ] && fail "run $fmt -o: stdout not empty"
    [ -s "$tmp/run.$fmt" ] || fail "run $fmt -o: empty file"
done
expect_eq "run -o json" "$(json 'r["execution"]["steps_completed"]' "$tmp/run.json")" 1
expect_eq "run -o sarif" "$(json 'r["version"]' "$tmp/run.sarif")" 2.1.0

# ---- 5: SARIF -----------------------------------------------------------------------
# A model path under the working directory is written relative to it
# (uriBaseId %SRCROOT%), any other as a file:// URI (issue 13).
rel() { "$PYTHON3" -c 'import os, sys; p = os.path.relpath(sys.argv[1]); print("file://" + os.path.abspath(sys.argv[1]) if p.startswith("..") else p)' "$1"; }
run_oac 1 --format=sarif "$broken" "$ex/metadata_alias.onnx" "$ex/chained_updates_broken.onnx"
expect_eq "sarif version" "$(json '[r["version"], len(r["runs"])]' "$out")" '["2.1.0", 1]'
expect_eq "sarif result" "$(json '[[x["ruleId"], x["level"], x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], [(l["kind"], l["name"]) for l in x["locations"][0]["logicalLocations"]]] for x in r["runs"][0]["results"][:1]][0]' "$out")" \
    "[\"alias-mismatch\", \"error\", \"$(rel "$broken")\", [[\"module\", \"main\"], [\"function\", \"update\"], [\"variable\", \"updated_cache\"]]]"
expect_eq "sarif levels" "$(json '[x["level"] for x in r["runs"][0]["results"]]' "$out")" \
    '["error", "warning", "warning", "warning", "error"]'
expect_eq "sarif uris in order" "$(json '[x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in r["runs"][0]["results"]]' "$out")" \
    "[\"$(rel "$broken")\", \"$(rel "$ex/metadata_alias.onnx")\", \"$(rel "$ex/metadata_alias.onnx")\", \"$(rel "$ex/metadata_alias.onnx")\", \"$(rel "$ex/chained_updates_broken.onnx")\"]"
# An unnamed graph: "graph" is its (empty) name in JSON; SARIF gives it
# no logical location rather than one named "".
"$PYTHON3" -c '
import sys, onnx
m = onnx.ModelProto()
m.ParseFromString(open(sys.argv[1], "rb").read())
m.graph.ClearField("name")
open(sys.argv[2], "wb").write(m.SerializeToString())' "$broken" "$tmp/unnamed_graph.onnx"
run_oac 1 --format=json "$tmp/unnamed_graph.onnx"
expect_eq "unnamed graph, JSON" "$(json '[[d["code"], d["graph"], d["node"]] for d in r["diagnostics"]]' "$out")" \
    '[["alias-mismatch", "", "update"]]'
run_oac 1 --format=sarif "$tmp/unnamed_graph.onnx"
expect_eq "unnamed graph, SARIF" "$(json '[(l["kind"], l["name"]) for l in r["runs"][0]["results"][0]["locations"][0]["logicalLocations"]]' "$out")" \
    '[["function", "update"], ["variable", "updated_cache"]]'
run_oac 2 --format=sarif "$missing"
expect_eq "sarif unreadable" "$(json '[[y["ruleId"], y["level"], y["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]] for y in r["runs"][0]["results"]]' "$out")" \
    "[[\"parse-error\", \"error\", \"$(rel "$missing")\"]]"

# ---- 5: --dim -------------------------------------------------------------------------
run_oac 2 --dim nowhere=3 "$dense" "$implied"
[ -s "$out" ] && fail "--dim unknown in all models wrote a report"
grep -q nowhere "$err" || fail "--dim: stderr does not name the unknown dim"
run_oac 2 --dim batch=1 --dim batch=2 "$dense"
run_oac 2 --dim batch=0 "$dense"
run_oac 2 --dim batch=-3 "$dense"
run_oac 2 run --dim batch=0 "$dense"
run_oac 1 --format=json --dim max_length=8 "$cm/static_vs_param.onnx"
expect_eq "--dim against a static dim" "$(json 'sorted({d["code"] for d in r["diagnostics"]})' "$out")" '["shape-mismatch"]'
run_oac 0 --format=json --dim max_length=16 "$cm/static_vs_param.onnx"
# One model has the name: fine for every model.
run_oac 0 --dim max_length=16 "$cm/static_vs_param.onnx" "$cm/rw_unwritten.onnx"

# ---- 5: --input for check --------------------------------------------------------------
"$PYTHON3" -c '
import sys, numpy as np
from onnx import numpy_helper
for name, v in (("pos7", 7), ("pos8", 8), ("neg", -1)):
    t = numpy_helper.from_array(np.array(v, dtype=np.int64), "position")
    open(sys.argv[1] + "/" + name + ".pb", "wb").write(t.SerializeToString())' "$tmp" ||
    fail "cannot write TensorProto files"
# shellcheck disable=SC2086
run_oac 0 --format=json $dims --input position="$tmp/pos7.pb" "$dense"
expect_eq "--input 7+1 <= 8" "$(codes)" '[]'
expect_eq "--input: capacity decided" "$(json 'len(r["unchecked"])' "$out")" 0
# shellcheck disable=SC2086
run_oac 1 --format=json $dims --input position="$tmp/pos8.pb" "$dense"
expect_eq "--input 8+1 > 8" "$(codes)" '["capacity-overflow"]'
# shellcheck disable=SC2086
run_oac 1 --format=json $dims --input position="$tmp/neg.pb" "$dense"
expect_eq "--input negative position" "$(codes)" '["capacity-overflow"]'

# A tensor of another element type than declared: type-mismatch, for run
# too (which then executes nothing).
"$PYTHON3" -c '
import sys, numpy as np
from onnx import numpy_helper
a = np.zeros((2, 1, 2, 1, 4), np.float32)
open(sys.argv[1], "wb").write(numpy_helper.from_array(a, "values").SerializeToString())' "$tmp/f32.pb"
run_oac 1 --format=json --input values="$tmp/f32.pb" "$cm/static_dense.onnx"
expect_eq "--input of another type" "$(json '[[d["code"], d["value"], d["location"]] for d in r["diagnostics"]]' "$out")" \
    '[["type-mismatch", "values", "/graph/input/1"]]'
run_oac 1 run --format=json --input values="$tmp/f32.pb" "$cm/static_dense.onnx"
expect_eq "run --input of another type" "$(json '[[d["code"] for d in r["diagnostics"]], r["execution"]["steps_completed"]]' "$out")" \
    '[["type-mismatch"], 0]'

# Pages of a --input SequenceProto are validated (n_bytes 100 != 128).
"$PYTHON3" - "$tmp" <<'EOF' || fail "cannot write SequenceProto files"
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
for name, n_bytes in (("pages_ok", 128), ("pages_bad", 100)):
    page = b"".join(vi(1, d) for d in (2, 2, 16, 4)) + ld(2, bytes(128)) + vi(3, n_bytes) + vi(4, 0)
    seq = ld(1, b"cache") + vi(2, 1001) + ld(1001, page)
    open(sys.argv[1] + "/" + name + ".pb", "wb").write(seq)
EOF
run_oac 0 --format=json --input cache="$tmp/pages_ok.pb" "$ex/paged_cache.onnx"
run_oac 1 --format=json --input cache="$tmp/pages_bad.pb" "$ex/paged_cache.onnx"
expect_eq "--input pages" "$(codes)" '["page-type-invalid"]'

# ---- 5: run ------------------------------------------------------------------------------
# Nothing runs after a check error: no dump written.
# shellcheck disable=SC2086
run_oac 1 run $dims --dump "$tmp/nodump" --format=json "$broken"
expect_eq "run after a check error" "$(json '[[d["code"] for d in r["diagnostics"]], r["execution"]["steps_completed"], r["execution"]["per_step"]]' "$out")" '[["alias-mismatch"], 0, []]'
[ -n "$(ls "$tmp/nodump" 2>/dev/null)" ] && fail "run dumped files after a check error"
# A dimension left unknown: usage error, no report.
run_oac 2 run --format=json --dim batch=1 "$dense"
[ -s "$out" ] && fail "run with unknown dims wrote a report"
[ -s "$err" ] || fail "run with unknown dims gave no reason"
# --readonly, --sessions
run_oac 1 run --format=json --readonly cache "$cm/static_dense.onnx"
[ -s "$err" ] && fail "a runtime refusal wrote to stderr: $(cat "$err")"
expect_eq "--readonly" "$(json '[r["status"], [d["code"] for d in r["diagnostics"]], r["execution"]["steps_completed"]]' "$out")" \
    '["error", ["binding-readonly"], 0]'
run_oac 1 run --format=json --sessions 4 "$cm/static_dense.onnx"
expect_eq "--sessions 4" "$(json '[[d["code"] for d in r["diagnostics"]], r["summary"]["errors"], r["execution"]["steps_completed"]]' "$out")" \
    '[["binding-busy", "binding-busy", "binding-busy"], 3, 1]'
run_oac 0 run --format=json --sessions 1 "$cm/static_dense.onnx"
# --readonly names a READ_WRITE input; anything else is bad usage.
run_oac 2 run --readonly values "$cm/static_dense.onnx"
[ -s "$out" ] && fail "--readonly of a READ_ONLY input wrote a report"
# --dump: one file per graph output and bound cache, named after the value.
run_oac 0 run --steps 3 --dump "$tmp/dump" "$cm/static_dense.onnx"
expect_eq "--dump files" "$(ls "$tmp/dump" | tr '\n' ' ')" "cache.pb updated_cache.pb "
"$PYTHON3" -c '
import sys, onnx
from onnx import numpy_helper
for v in ("cache", "updated_cache"):
    t = onnx.load_tensor(sys.argv[1] + "/" + v + ".pb")
    a = numpy_helper.to_array(t)
    assert t.name == v, t.name
    assert a.shape == (2, 1, 2, 8, 4) and str(a.dtype) == "float16", (a.shape, a.dtype)
    assert float(abs(a).sum()) == 0.0   # zero-filled values written over zeros
print("ok")' "$tmp/dump" > "$tmp/py.out" 2>&1 || fail "--dump files are not TensorProtos: $(cat "$tmp/py.out")"
# With values given: the three steps wrote rows 0, 1, 2; both files agree.
"$PYTHON3" -c '
import sys, numpy as np
from onnx import numpy_helper
a = (np.arange(16, dtype=np.float16) + 1).reshape(2, 1, 2, 1, 4)
open(sys.argv[1], "wb").write(numpy_helper.from_array(a, "values").SerializeToString())' "$tmp/values.pb"
run_oac 0 run --steps 3 --input values="$tmp/values.pb" --dump "$tmp/dump2" "$cm/static_dense.onnx"
[ -s "$err" ] && fail "run --dump wrote to stderr"
"$PYTHON3" -c '
import sys, onnx, numpy as np
from onnx import numpy_helper
v = (np.arange(16, dtype=np.float16) + 1).reshape(2, 1, 2, 1, 4)
want = np.zeros((2, 1, 2, 8, 4), np.float16)
want[:, :, :, 0:3, :] = v
for name in ("cache", "updated_cache"):
    t = onnx.TensorProto()
    t.ParseFromString(open(sys.argv[1] + "/" + name + ".pb", "rb").read())
    assert (numpy_helper.to_array(t) == want).all(), name
' "$tmp/dump2" > "$tmp/py.out" 2>&1 || fail "--dump contents: $(cat "$tmp/py.out")"
# A --dump DIR that cannot be created: each value an output-write-failed
# error in the report (contract 8), not a usage error without one.
run_oac 1 run --dump "$tmp/no/such/dir" "$cm/static_dense.onnx"
grep -q "\[output-write-failed\]\$" "$out" || fail "--dump to a missing folder: no output-write-failed"

# ---- 3: external data, the detail rules ------------------------------------------------
"$PYTHON3" - "$tmp" <<'EOF' || fail "cannot write external-data models"
import sys
from onnx import helper, TensorProto
d = sys.argv[1]
t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
t.data_location = TensorProto.EXTERNAL
e = t.external_data.add(); e.key = "location"; e.value = "missing.bin"
g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "main",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [t])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
open(d + "/extdata.onnx", "wb").write(m.SerializeToString())
EOF
run_oac 1 --format=json "$tmp/extdata.onnx"
[ -s "$err" ] && fail "external-data-invalid wrote to stderr"
expect_eq "external-data-invalid" "$(json '[r["status"], [d["code"] for d in r["diagnostics"]], r["model"]["ir_version"]]' "$out")" \
    '["error", ["external-data-invalid"], 8]'

detail() {   # detail MODEL STATUS CODES
    run_oac "$2" --format=json "$cm/$1.onnx"
    expect_eq "$1" "$(codes)" "$3"
}
detail input_alias_of 1 '["alias-unbacked"]'
detail access_two 1 '["access-invalid"]'
detail rw_unwritten 0 '[]'
detail rw_initializer_unrooted 1 '["access-invalid"]'
detail rw_initializer_rooted 1 '["access-invalid", "alias-root-immutable"]'
detail paged_implied 0 '["alias-implied"]'
detail scatter_implied 0 '["alias-implied"]'
detail scatter_aliased 0 '[]'
detail loop_implied 0 '["alias-implied"]'
detail scan_implied 0 '["alias-implied"]'
detail implied_alias_of 1 '["alias-implied", "alias-unbacked"]'
run_oac 1 --format=json "$cm/alias_wrong_input.onnx"
# CacheUpdate's only pair is 0->0: output_alias on its values input is
# alias-unsupported, reported alone (no alias-implied beside it).
expect_eq "output_alias to another input: alias-unsupported alone" \
    "$(json '[d["code"] for d in r["diagnostics"] if d["code"] in ("alias-unsupported", "alias-implied")]' "$out")" '["alias-unsupported"]'
detail fields_and_metadata 0 '[]'
detail stale_shape 0 '[]'
detail stale_copy 1 '["alias-hazard"]'
# Findings inside a function: once per call site (two calls, two each).
detail function_two_calls 1 '["alias-implied", "alias-implied", "alias-index-out-of-range", "alias-index-out-of-range"]'
detail temp_root 0 '[]'
expect_eq "a fresh temporary roots its class" "$(json '[[c["root"], c["members"]] for c in r["alias_classes"]]' "$out")" '[["t", ["t", "y"]]]'
detail constant_root 1 '["alias-root-immutable"]'
detail position_initializer 1 '["capacity-overflow"]'
detail position_default 0 '[]'
detail position_folded 1 '["capacity-overflow"]'
detail scatter_no_indices 1 '["capacity-overflow"]'
detail scatter_circular 0 '[]'
detail paged_negative 1 '["capacity-overflow"]'
detail chain_inner_member 0 '[]'
expect_eq "members of a chain" "$(json '[c["members"] for c in r["alias_classes"]]' "$out")" '[["cache", "u1", "u2", "u3"]]'
run_oac 0 --format=json "$implied"
expect_eq "CacheUpdate without output_alias" "$(json '[[d["code"], d["severity"], d["node"], d["op_type"]] for d in r["diagnostics"]]' "$out")" \
    '[["alias-implied", "warning", "update", "CacheUpdate"]]'
run_oac 0 --format=json "$ex/chained_updates.onnx"
expect_eq "chain u2.alias_of = cache" "$(codes)" '[]'
run_oac 1 --format=json "$ex/chained_updates_broken.onnx"
expect_eq "chain u2.alias_of = u1" "$(json '[[d["code"], d["value"]] for d in r["diagnostics"]]' "$out")" \
    '[["alias-mismatch", "u2"]]'

finish
