#!/bin/sh
# check_exports.sh: the shared library exports exactly the functions
# include/oac.h declares, as jansson's check-exports does (issue 9, item 5).
#
# The exports are the defined dynamic symbols of the built
# lib/.libs/libonnx-alias-check.so (nm -D --defined-only) but the linker's
# own markers; the declarations are every "name(" of the header once its
# comments and preprocessor lines are gone ("(*name)(" pointer types are
# not declarations).  Both lists must be equal: an internal function that
# leaks, or a declared one that is not exported (or not defined), fails.
: "${top_srcdir:?}" "${top_builddir:?}"
so="$top_builddir/lib/.libs/libonnx-alias-check.so"
header="$top_srcdir/include/oac.h"
[ -f "$so" ] || { echo "SKIP: no shared library (configured with --disable-shared?)"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$so" > "$tmp/nm" || { echo "FAIL: nm -D $so"; exit 1; }
awk '{ print $NF }' "$tmp/nm" |
    grep -v -x -e _init -e _fini -e _edata -e _end -e __bss_start |
    sort > "$tmp/exports"

awk '
    {
        line = $0; out = ""
        while (line != "") {
            if (incomment) {
                i = index(line, "*/")
                if (!i) { line = ""; break }
                line = substr(line, i + 2); incomment = 0
            } else {
                i = index(line, "/*")
                if (!i) { out = out line; break }
                out = out substr(line, 1, i - 1) " "
                line = substr(line, i + 2); incomment = 1
            }
        }
        if (out !~ /^[ \t]*#/)
            print out
    }' "$header" | tr '\n' ' ' |
    grep -o '[A-Za-z_][A-Za-z0-9_]*[ ]*(' | tr -d ' (' | sort -u > "$tmp/declared"

n=$(wc -l < "$tmp/declared")
[ "$n" -ge 30 ] || { echo "FAIL: only $n functions read from $header"; exit 1; }
if ! diff -u "$tmp/declared" "$tmp/exports" > "$tmp/diff"; then
    echo "FAIL: the exports of $so differ from the functions of $header"
    echo "(- declared, not exported; + exported, not declared):"
    grep '^[-+][^-+]' "$tmp/diff"
    exit 1
fi
echo "$n functions declared and exported"
