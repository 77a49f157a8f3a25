#!/bin/sh
# installcheck.sh: what `make installcheck` (and so `make distcheck`)
# proves about the installed library (issue 13, item 6), as an embedder
# would use it, from the installed files only:
#  1. the headers are namespaced ($(includedir)/onnx-alias-check/oac.h and
#     its .def tables), the generated onnx.pb-c.h and libtool's .la are
#     not installed, and the tool is;
#  2. examples/embed.c builds with pkg-config against the installed
#     onnx-alias-check.pc (PKG_CONFIG_PATH pointing into the prefix) and
#     checks a clean example (exit 0, no error in its summary) and a
#     broken one (exit 1, naming the code the tool names);
#  3. the installed static library is PIC and complete with
#     `pkg-config --static`: linked into a shared object with -z defs (no
#     symbol left undefined), that object checks the same model without
#     libonnx-alias-check.so;
#  4. the installed Python module, with no environment variable, finds
#     the installed shared library (the libdir recorded at build time).
: "${top_srcdir:?}" "${top_builddir:?}" "${libdir:?}" "${pkgincludedir:?}" "${bindir:?}"
: "${CC:=cc}"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# 1. What is installed.
for f in oac.h oac_diag.def oac_annotate.def; do
    [ -f "$pkgincludedir/$f" ] || fail "$pkgincludedir/$f is not installed"
done
[ -f "$libdir/pkgconfig/onnx-alias-check.pc" ] || fail "no $libdir/pkgconfig/onnx-alias-check.pc"
[ -f "$libdir/libonnx-alias-check.a" ] || fail "no static library in $libdir"
[ -x "$bindir/onnx-alias-check" ] || fail "no tool in $bindir"
# Internal: the generated protobuf-c header, the builder's header, libtool's .la.
for f in "$pkgincludedir/onnx.pb-c.h" "$pkgincludedir/oac_build.h" \
         "$libdir/libonnx-alias-check.la"; do
    [ ! -e "$f" ] || fail "installed but internal: $f"
done

PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
pc() { pkg-config "$@" onnx-alias-check || fail "pkg-config $* onnx-alias-check"; }
cflags=$(pc --cflags) && libs=$(pc --libs) && slibs=$(pc --static --libs) || exit 1
[ "$(pc --modversion)" = "$(sed -n 's/^#define OAC_VERSION "\(.*\)"/\1/p' "$pkgincludedir/oac.h")" ] ||
    fail "the .pc's version is not OAC_VERSION"

clean="$top_builddir/examples/dense_cache.onnx"
broken="$top_builddir/examples/dense_cache_broken.onnx"
[ -f "$clean" ] && [ -f "$broken" ] || fail "no examples in $top_builddir/examples"
# The code the tool reports for the broken example: embed must name it too.
code=$("$bindir/onnx-alias-check" "$broken" | sed -n 's/.*error: .*\[\([a-z-]*\)\]$/\1/p' | head -1)
[ -n "$code" ] || fail "the installed tool reports no error code on $broken"

# 2. The embedding example, against the installed .pc (shared library).
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -Werror $cflags -o "$tmp/embed" "$top_srcdir/examples/embed.c" \
    $libs -Wl,-rpath,"$libdir" || fail "examples/embed.c does not build against the .pc"
"$tmp/embed" "$clean" > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/out"; fail "embed on $clean: exit $rc, wanted 0"; }
grep -q ' 0 errors' "$tmp/out" || { cat "$tmp/out"; fail "embed: no '0 errors' summary"; }
"$tmp/embed" "$broken" > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/out"; fail "embed on $broken: exit $rc, wanted 1"; }
grep -q "\[$code\]" "$tmp/out" || { cat "$tmp/out"; fail "embed does not report $code"; }
ldd "$tmp/embed" | grep -q "$libdir/libonnx-alias-check.so" ||
    fail "embed does not use the installed shared library"

# 3. The static library in a shared object of the embedder's.
cat > "$tmp/plugin.c" <<'EOC'
#include <onnx-alias-check/oac.h>
int plugin_check(const char *path)
{
    oac_ctx *ctx = oac_ctx_new();
    oac_diags *d = ctx ? oac_diags_new(ctx) : NULL;
    oac_model *m = NULL;
    oac_analysis *a = NULL;
    int rc = d ? oac_model_load(ctx, &m, path, d) : OAC_ENOMEM;
    if (rc == OAC_OK)
        rc = oac_check(ctx, &a, m, NULL, d);
    rc = rc < 0 ? -1 : (int)oac_diags_count_severity(d, OAC_SEV_ERROR);
    oac_analysis_free(a);
    oac_model_free(m);
    oac_diags_free(d);
    oac_ctx_free(ctx);
    return rc;
}
EOC
cat > "$tmp/host.c" <<'EOC'
#include <stdio.h>
int plugin_check(const char *path);
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        printf("%d\n", plugin_check(argv[i]));
    return 0;
}
EOC
# -lonnx-alias-check would pick the shared library: name the archive.
deps=$(printf '%s\n' $slibs | grep -v -x -e -lonnx-alias-check | tr '\n' ' ')
# shellcheck disable=SC2086
$CC -std=c11 -fPIC -shared -Wl,-z,defs $cflags -o "$tmp/libplugin.so" "$tmp/plugin.c" \
    "$libdir/libonnx-alias-check.a" $deps > "$tmp/ld" 2>&1 ||
    { cat "$tmp/ld"; fail "the installed libonnx-alias-check.a does not link into a shared object"; }
if readelf -d "$tmp/libplugin.so" | grep NEEDED | grep -q onnx-alias-check; then
    fail "libplugin.so needs the shared library: the static one was not linked"
fi
$CC -o "$tmp/host" "$tmp/host.c" -L"$tmp" -lplugin -Wl,-rpath,"$tmp" || fail "host does not link"
"$tmp/host" "$clean" "$broken" > "$tmp/out" || fail "host failed on $clean and $broken"
[ "$(sed -n 1p "$tmp/out")" = 0 ] || fail "plugin: errors on $clean: $(cat "$tmp/out")"
[ "$(sed -n 2p "$tmp/out")" -ge 1 ] 2>/dev/null || fail "plugin: no error on $broken: $(cat "$tmp/out")"

# 4. The Python module, installed by make install, with no hint.
if [ "${python_module:-}" = installed ]; then
    [ -f "$pythondir/onnx_alias_check/__init__.py" ] || fail "no Python module in $pythondir"
    env -u ONNX_ALIAS_CHECK_LIBRARY PYTHONPATH="$pythondir" "$PYTHON3" - "$clean" "$broken" "$code" <<'EOP' ||
import sys, onnx_alias_check as oac
clean, broken, code = sys.argv[1:]
r = oac.check(clean)
assert r["status"] == "ok", r
r = oac.check(broken)
assert r["status"] == "error", r
assert code in [d["code"] for d in r["diagnostics"]], r
print("python: the installed module checks with", oac.library_path())
EOP
    fail "the installed Python module"
fi
echo "installcheck: headers, .pc, embed.c, static library in a .so${python_module:+, Python module ($python_module)}: ok"
