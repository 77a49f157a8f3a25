#!/bin/sh
# ort_diff.sh: onnx-alias-check's `run` side by side with ONNX Runtime
# (issue 11 item 6; acceptance 1's ONNX Runtime half and 3's differential
# half).  Run from a build folder after `make` (scripts/test.sh does, and
# so does `make ort-diff`):
#
#     sh ../tests/ort_diff.sh
#
# 1. Without Node it prints "ort_diff: skipped (no node)" and exits 77.
# 2. It installs onnxruntime-node@1.30.0 with `npm install --ignore-scripts`
#    into ort-node/ of the build folder (never the source tree), or reuses
#    the copy already there.  A failed install is a failure (exit 1), with
#    npm's last words and the log's path: where Node exists, the
#    comparison is expected to run.
# 3. tests/ort_diff.py runs, model by model, the same inputs through
#    ONNX Runtime (tests/ort_diff.js, presents fed back as pasts) and
#    through `run --steps k --dump DIR` for k = 1..N, and compares every
#    graph output of every step (FLOAT within 1e-4, FLOAT16/BFLOAT16
#    within 2e-3 of the output's scale; see ort_diff.py): the real
#    decoders of ../shared/real-models after `annotate` (8 steps; skipped
#    when the folder is absent), the build tree's examples/*.onnx and
#    op-models/*.onnx (one model per form of every operator of the
#    runtime's attention family, examples/op_models.c).
#    Models that cannot be compared are listed with the reason.
# Exit 0 only when every comparable output matches.
#
# Environment: top_srcdir (default: this script's parent folder), OAC (the
# program; default src/onnx-alias-check), PYTHON3 (Debian's python3 with
# onnx and numpy; default /usr/bin/python3), OAC_REAL_MODELS (the real
# models' folder, overriding the search), NPM_TIMEOUT (seconds, 900).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
build=$(pwd)
OAC=${OAC:-$build/src/onnx-alias-check}
PYTHON3=${PYTHON3:-/usr/bin/python3}
version=1.30.0

node=$(command -v node || command -v nodejs) || {
    echo "ort_diff: skipped (no node)"
    exit 77
}
[ -x "$OAC" ] || { echo "ort_diff: FAIL: no program at $OAC (run make first)"; exit 1; }
[ -d "$build/examples" ] || { echo "ort_diff: FAIL: no examples/ in $build (run make first)"; exit 1; }
[ -d "$build/op-models" ] || { echo "ort_diff: FAIL: no op-models/ in $build (run make first)"; exit 1; }
"$PYTHON3" -c 'import onnx, numpy' 2>/dev/null ||
    { echo "ort_diff: FAIL: $PYTHON3 lacks onnx or numpy (scripts/deps.sh installs python3-onnx)"; exit 1; }

# ---- ONNX Runtime for Node, in the build tree --------------------------------
ortdir=$build/ort-node
have() {
    "$node" -e 'const p = require(process.argv[1] + "/node_modules/onnxruntime-node/package.json");
                process.exit(p.version === process.argv[2] ? 0 : 1)' "$ortdir" "$version" 2>/dev/null
}
if ! have; then
    npm=$(command -v npm) || {
        echo "ort_diff: FAIL: node is installed but npm is not (scripts/deps.sh installs Debian's nodejs and npm)"
        exit 1
    }
    mkdir -p "$ortdir" || exit 1
    [ -f "$ortdir/package.json" ] || echo '{ "private": true }' > "$ortdir/package.json"
    echo "ort_diff: installing onnxruntime-node@$version into $ortdir"
    timeout "${NPM_TIMEOUT:-900}" "$npm" install --prefix "$ortdir" --ignore-scripts --no-audit \
        --no-fund --loglevel=error "onnxruntime-node@$version" > "$ortdir/npm.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || ! have; then
        echo "ort_diff: FAIL: npm install --ignore-scripts onnxruntime-node@$version failed" \
            "(exit $rc$([ $rc -eq 124 ] && echo ', timed out')): is the npm registry reachable" \
            "from this machine? Its log: $ortdir/npm.log; last lines:"
        tail -5 "$ortdir/npm.log" | sed 's/^/    /'
        exit 1
    fi
fi
# The package carries its Linux x64 binary; say so clearly when it cannot load.
if ! out=$(NODE_PATH="$ortdir/node_modules" timeout 120 "$node" -e 'require("onnxruntime-node")' 2>&1); then
    echo "ort_diff: FAIL: onnxruntime-node@$version is installed but does not load" \
        "($(uname -m), node $("$node" --version)):"
    printf '%s\n' "$out" | tail -5 | sed 's/^/    /'
    exit 1
fi

# ---- the real decoders, when present -----------------------------------------
real=${OAC_REAL_MODELS:-}
if [ -z "$real" ]; then
    for d in "$top_srcdir/../shared/real-models" "$top_srcdir/../../shared/real-models"; do
        [ -f "$d/static-scatter-decoder.onnx" ] && [ -f "$d/tiny-qwen35-gqa-decoder.onnx" ] &&
            { real=$d; break; }
    done
fi
if [ -n "$real" ]; then
    set -- --real "$real"
else
    echo "ort_diff: real decoders: skipped (no ../shared/real-models)"
    set --
fi

work=$build/ort-diff.work
rm -rf "$work"
timeout 3600 "$PYTHON3" "$here/ort_diff.py" --oac "$OAC" --node "$node" \
    --node-path "$ortdir/node_modules" --js "$here/ort_diff.js" --work "$work" \
    --examples "$build/examples" --examples "$build/op-models" "$@"
rc=$?
[ $rc -eq 124 ] && echo "ort_diff: FAIL: the comparison did not finish in an hour"
[ $rc -eq 0 ] && rm -rf "$work"
exit $rc
