#!/bin/sh
# file_circles.sh: no circle of files in lib/ (issue 9, acceptance 3):
# the library's objects, linked by the symbols they use, form no cycle
# (tests/file_circles.py).  The operator table (ops.c) references every
# rule and kernel as data and is left out; the interpreter enters bodies
# through control kernels it calls by the table's pointers, so that
# recursion is no edge either.
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON3:?}"
ar="$top_builddir/lib/.libs/libonnx-alias-check.a"
if [ ! -f "$ar" ] || ! command -v nm >/dev/null 2>&1; then
    echo "file_circles: skipped (no static library or no nm)"
    exit 77
fi
exec "$PYTHON3" "$top_srcdir/tests/file_circles.py" "$ar" ops
