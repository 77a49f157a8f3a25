#!/bin/sh
# sarif_multitool.sh: Microsoft's SARIF Multitool, `validate --rule-kind
# "Sarif;Gh"` (the SARIF rules and GitHub code scanning's), over the SARIF
# of every example model.  Run from a build
# folder after `make` (scripts/test.sh does, and so does `make
# sarif-multitool`):
#
#     sh ../tests/sarif_multitool.sh
#
# 1. Without npm, or when the npm registry does not answer `npm ping`, it
#    prints "sarif_multitool: skipped (REASON)" and exits 77; with
#    OAC_REQUIRE_ONLINE=1 (CI) that is a failure (exit 1) instead.
# 2. It installs @microsoft/sarif-multitool-linux@5.7.0 with `npm install
#    --ignore-scripts` into sarif-multitool/ of the build folder (never
#    the source tree), or reuses the copy there; a failed install from a
#    registry that answers is a failure (exit 1) with npm's last words.
# 3. It writes the SARIF of each example (examples/*.onnx, one log each,
#    from the build folder, so paths are %SRCROOT%-relative) and of all
#    of them at once, validates them, and counts the Multitool's results
#    by level.  Exit 0 only with 0 errors; warnings are listed.
#
# Environment: OAC (the program; default src/onnx-alias-check), PYTHON3,
# NPM_TIMEOUT (seconds, 900), NPM_PING_TIMEOUT (seconds, 60),
# OAC_REQUIRE_ONLINE (1: never skip).
set -u
build=$(pwd)
OAC=${OAC:-$build/src/onnx-alias-check}
PYTHON3=${PYTHON3:-/usr/bin/python3}
version=5.7.0
dir=$build/sarif-multitool
tool=$dir/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
# Skipped, with the reason (exit 77), when this machine cannot run the
# step: unless OAC_REQUIRE_ONLINE=1 (CI), which makes it a failure.
cannot_run() {
    if [ "${OAC_REQUIRE_ONLINE:-0}" = 1 ]; then
        echo "sarif_multitool: FAIL: $* (OAC_REQUIRE_ONLINE=1: this step must run)"
        exit 1
    fi
    echo "sarif_multitool: skipped ($*)"
    exit 77
}
# The npm registry answers (npm ping: it is reachable and its TLS
# certificate verifies); else the install cannot work here.
registry_reachable() {
    timeout "${NPM_PING_TIMEOUT:-60}" "$1" ping --fetch-retries=0 > "$2" 2>&1 && return 0
    cannot_run "the npm registry $("$1" config get registry 2>/dev/null) is not reachable from" \
        "this machine: $(sed -n 's/.*reason: //p; s/.*npm error code //p' "$2" | head -1 | cut -c1-120)"
}

[ -x "$OAC" ] || { echo "sarif_multitool: FAIL: no program at $OAC (run make first)"; exit 1; }
ls "$build"/examples/*.onnx > /dev/null 2>&1 ||
    { echo "sarif_multitool: FAIL: no examples/*.onnx in $build (run make first)"; exit 1; }
if [ ! -f "$tool" ]; then
    npm=$(command -v npm) || cannot_run "no npm: bash scripts/deps.sh node installs Debian's"
    mkdir -p "$dir" || exit 1
    registry_reachable "$npm" "$dir/npm-ping.log"
    [ -f "$dir/package.json" ] || echo '{ "private": true }' > "$dir/package.json"
    echo "sarif_multitool: installing @microsoft/sarif-multitool-linux@$version into $dir"
    timeout "${NPM_TIMEOUT:-900}" "$npm" install --prefix "$dir" --ignore-scripts --no-audit \
        --no-fund --loglevel=error "@microsoft/sarif-multitool-linux@$version" > "$dir/npm.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || [ ! -f "$tool" ]; then
        echo "sarif_multitool: FAIL: npm install --ignore-scripts" \
            "@microsoft/sarif-multitool-linux@$version failed (exit $rc), though the" \
            "registry answers npm ping. Its log: $dir/npm.log; last lines:"
        tail -5 "$dir/npm.log" | sed 's/^/    /'
        exit 1
    fi
fi
# --ignore-scripts skipped the package's own "chmod u+x".
chmod u+x "$tool" || exit 1

work=$build/sarif-multitool.work
rm -rf "$work"
mkdir -p "$work" || exit 1
for m in examples/*.onnx; do
    "$OAC" --format=sarif -o "$work/$(basename "$m" .onnx).sarif" "$m"
    [ $? -le 1 ] || { echo "sarif_multitool: FAIL: $m: no SARIF"; exit 1; }
done
"$OAC" --format=sarif -o "$work/all-examples.sarif" examples/*.onnx
timeout 600 "$tool" validate --rule-kind "Sarif;Gh" -o "$work/validation.sarif" \
    "$work"/*.sarif > "$work/multitool.log" 2>&1
rc=$?
[ -f "$work/validation.sarif" ] || {
    echo "sarif_multitool: FAIL: the Multitool wrote no result (exit $rc):"
    tail -20 "$work/multitool.log" | sed 's/^/    /'
    exit 1
}
"$PYTHON3" - "$work/validation.sarif" "$(ls "$work"/*.sarif | grep -vc validation.sarif)" <<'PY'
import collections, json, sys
s = json.load(open(sys.argv[1]))
res = [r for run in s["runs"] for r in run.get("results", [])]
lev = collections.Counter(r.get("level", "warning") for r in res)
rules = collections.Counter((r.get("level", "warning"), r["ruleId"]) for r in res)
print("sarif_multitool: %s logs: %d errors, %d warnings, %d notes"
      % (sys.argv[2], lev["error"], lev["warning"], lev["note"]))
for (level, rule), n in sorted(rules.items()):
    print("    %s %s: %d" % (level, rule, n))
for r in res:
    if r.get("level") == "error":
        print("    " + r["message"].get("text", r["message"].get("id", ""))[:300])
sys.exit(1 if lev["error"] else 0)
PY
rc=$?
[ $rc -eq 0 ] && rm -rf "$work"
exit $rc
