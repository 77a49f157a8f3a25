#!/bin/sh
# python_module.sh: tests/python_module.py on the build tree's shared
# library (ONNX_ALIAS_CHECK_LIBRARY) and the source tree's module;
# "skipped" without Debian's python3-onnx or a shared library.
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON3:?}" "${OAC:?}"
la="$top_builddir/lib/libonnx-alias-check.la"
dlname=$(sed -n "s/^dlname='\(.*\)'$/\1/p" "$la")
[ -n "$dlname" ] && [ -f "$top_builddir/lib/.libs/$dlname" ] ||
    { echo "SKIP: no shared library (configured with --disable-shared?)"; exit 77; }
[ "$PYTHON3" != no ] && "$PYTHON3" -c 'import onnx' 2>/dev/null ||
    { echo "SKIP: no python3-onnx for $PYTHON3"; exit 77; }
ONNX_ALIAS_CHECK_LIBRARY="$top_builddir/lib/.libs/$dlname" \
PYTHONPATH="$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH}" \
    exec "$PYTHON3" "$top_srcdir/tests/python_module.py"
