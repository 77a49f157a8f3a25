#!/bin/sh
# parse_errors.sh: unreadable models through the command line (contract 3
# parse-error, 5 exit status and report of an unreadable model).
#
# Each input (an empty file, a truncated model, seeded random bytes, a
# path that does not exist, a FIFO) must give exit status 2 and a JSON
# report with status "error" and exactly one diagnostic, parse-error,
# whose message names the file; the truncated one also gives the byte
# offset.  Several models in one call: one report each, in order, and
# the highest exit status.
set -eu
: "${top_builddir:=.}"
: "${OAC:=$top_builddir/src/onnx-alias-check}"
: "${PYTHON3:=/usr/bin/python3}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

"$top_builddir/tests/roundtrip" --gen "$tmp"
good="$tmp/contract.onnx"
size=$(wc -c < "$good")
: > "$tmp/empty.onnx"
head -c $((size / 2)) "$good" > "$tmp/truncated.onnx"
"$PYTHON3" -c 'import random,sys; random.seed(20261130); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(4096)))' > "$tmp/random.onnx"

fail=0
# expect_unreadable FILE [NEEDLE]
expect_unreadable() {
    set +e
    "$OAC" check --format=json "$1" > "$tmp/out.json" 2> "$tmp/err.txt"
    rc=$?
    set -e
    if [ "$rc" -ne 2 ]; then
        echo "FAIL: $1: exit $rc, expected 2"; fail=1; return
    fi
    if ! "$PYTHON3" - "$tmp/out.json" "$1" "${2:-}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
path, needle = sys.argv[2], sys.argv[3]
d = r["diagnostics"]
assert r["status"] == "error", r["status"]
assert len(d) == 1 and d[0]["code"] == "parse-error", d
assert d[0]["severity"] == "error"
assert path in d[0]["message"], d[0]["message"]
assert needle in d[0]["message"], (needle, d[0]["message"])
assert r["summary"]["errors"] == 1
assert r["model"]["path"] == path
PY
    then
        echo "FAIL: $1: report"; cat "$tmp/out.json"; fail=1
    fi
}

expect_unreadable "$tmp/empty.onnx" "empty file"
expect_unreadable "$tmp/truncated.onnx" "at byte"
expect_unreadable "$tmp/random.onnx"
expect_unreadable "$tmp/missing.onnx" "cannot open"
# A FIFO (never waited on); a folder is searched for models instead
# (tests/cli_usage.sh).
mkfifo "$tmp/fifo.onnx"
expect_unreadable "$tmp/fifo.onnx" "not a regular file"

# A readable model next to unreadable ones: reports in order, exit 2.
set +e
"$OAC" check --format=json "$good" "$tmp/empty.onnx" > "$tmp/many.json"
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "FAIL: several models: exit $rc, expected 2"; fail=1; }
"$PYTHON3" - "$tmp/many.json" "$good" "$tmp/empty.onnx" <<'PY' || { echo "FAIL: several models: report"; fail=1; }
import json, sys
r = json.load(open(sys.argv[1]))
assert isinstance(r, list) and len(r) == 2
assert r[0]["model"]["path"] == sys.argv[2]
assert all(x["code"] != "parse-error" for x in r[0]["diagnostics"])
assert r[1]["model"]["path"] == sys.argv[3]
assert [x["code"] for x in r[1]["diagnostics"]] == ["parse-error"]
PY
exit $fail
