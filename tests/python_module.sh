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
# A sanitizer build's library needs its runtimes first in the process:
# preload the ones it links (python itself is not instrumented, so its
# own allocations are not leak-checked; tests/check_bindings is, in C).
preload=$(ldd "$top_builddir/lib/.libs/$dlname" 2>/dev/null |
    sed -n 's/^[[:space:]]*lib[a-z]*san\.so[^ ]* => \([^ ]*\).*/\1/p' | tr '\n' ' ')
if [ -n "$preload" ]; then
    LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}"
    ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export LD_PRELOAD ASAN_OPTIONS
fi
PYTHONDONTWRITEBYTECODE=1 ONNX_ALIAS_CHECK_LIBRARY="$top_builddir/lib/.libs/$dlname" \
PYTHONPATH="$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH}" \
    exec "$PYTHON3" "$top_srcdir/tests/python_module.py"
