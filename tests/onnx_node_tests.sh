#!/bin/sh
# onnx_node_tests.sh: the reference runtime's kernels against ONNX's own
# conformance node tests (Debian's libonnx-testdata), through `run
# --dump` (tests/onnx_node_tests.py says which tests and how they are
# compared).  An independent oracle: the expected outputs are ONNX's.
#
# The data folder is $OAC_ONNX_NODE_TESTS, else libonnx-testdata's; without
# it, or without numpy and onnx for $PYTHON3, the test says "skipped"
# (exit 77).
: "${top_srcdir:?}" "${OAC:?}" "${PYTHON3:?}"
dir=${OAC_ONNX_NODE_TESTS:-}
if [ -z "$dir" ]; then
    dir=$(dpkg -L libonnx-testdata 2>/dev/null |
          sed -n 's#/test_abs/model.onnx$##p' | grep '/node$' | head -1)
fi
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    echo "skipped: no ONNX node tests (install libonnx-testdata or set OAC_ONNX_NODE_TESTS)"
    exit 77
fi
if ! "$PYTHON3" -c 'import numpy, onnx' 2>/dev/null; then
    echo "skipped: $PYTHON3 lacks numpy or onnx"
    exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
"$PYTHON3" "$top_srcdir/tests/onnx_node_tests.py" "$OAC" "$dir" "$tmp"
