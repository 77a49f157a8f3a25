# cli_lib.sh: helpers the command-line tests source (not a test itself).
#
# run_oac STATUS ARGS...   runs $OAC ARGS with stdout in $out and stderr in
#                          $err (files), and records a failure unless it
#                          exits STATUS.
# fail MSG                 records a failure and goes on, so one run shows
#                          every broken expectation.
# json EXPR FILE           prints a Python expression over the JSON in FILE
#                          (bound to r), e.g. json 'r["status"]' "$out".
# Finish with `finish`, which exits 1 after any failure.
set -u
: "${top_builddir:?}" "${OAC:?}" "${PYTHON3:?}"
ex="$top_builddir/examples"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
out="$tmp/stdout"
err="$tmp/stderr"
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

run_oac() {
    want=$1
    shift
    "$OAC" "$@" > "$out" 2> "$err"
    got=$?
    if [ "$got" != "$want" ]; then
        fail "onnx-alias-check $* exited $got, expected $want"
        sed 's/^/  stdout: /' "$out" | head -20
        sed 's/^/  stderr: /' "$err" | head -20
    fi
}

json() {
    "$PYTHON3" -c 'import json, sys
r = json.load(open(sys.argv[2]))
v = eval(sys.argv[1])
print(json.dumps(v) if not isinstance(v, str) else v)' "$1" "$2"
}

# expect_eq WHAT GOT WANT
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"
}

need_examples() {
    for m in "$@"; do
        [ -f "$ex/$m.onnx" ] || { echo "SKIP: $ex/$m.onnx not built"; exit 77; }
    done
}

finish() {
    [ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
    exit 0
}
