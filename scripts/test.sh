#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it (.ci/run calls this).
#   1. install what is missing (scripts/deps.sh)
#   2. build and `make check`
#   3. build with ASan+UBSan and `make check` again
#   4. valgrind over the command line on every example and on bad input
#   5. `make distcheck` (out-of-tree, read-only sources, clean tarball)
#   6. `run` side by side with ONNX Runtime (tests/ort_diff.sh: installs
#      onnxruntime-node from the npm registry; "skipped" without Node)
#   6b. the SARIF of every example through Microsoft's SARIF Multitool,
#      `validate --rule-kind "Sarif;Gh"` (tests/sarif_multitool.sh:
#      installs @microsoft/sarif-multitool-linux from the npm registry;
#      "skipped" without npm); any error fails
#   7. each libFuzzer harness (fuzz/) for FUZZ_TIME seconds (default 60)
#      over the seed corpus the build makes, when clang can link
#      libFuzzer; any finding fails ("fuzz: skipped (no clang)" otherwise)
# It ends with one line "tests: N passed, N failed".
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)
bash scripts/deps.sh
autoreconf -fi >/dev/null 2>&1

passed=0 failed=0
count() {  # add up the automake test-suite.log of a build folder
  local log=$1/test-suite.log p f
  [ -f "$log" ] || return 0
  p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
  f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
  e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${e:-0}))
}
status=0
step() { echo; echo "==== $*"; }

step "build and make check"
rm -rf build-test && mkdir build-test
( cd build-test && ../configure -q && make -j"$jobs" >/dev/null && make -j"$jobs" check ) || status=1
count build-test

step "sanitizer build (ASan + UBSan) and make check"
rm -rf build-san && mkdir build-san
( cd build-san && ../configure -q --enable-sanitizers &&
  make -j"$jobs" >/dev/null && make -j"$jobs" check ) || status=1
count build-san

step "valgrind over the command line"
if ( cd build-test && bash "$top/tests/valgrind_cli.sh" ); then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi

step "make distcheck"
if ( cd build-test && make -j"$jobs" distcheck >distcheck.log 2>&1 ); then
  passed=$((passed + 1)); tail -4 build-test/distcheck.log
else
  failed=$((failed + 1)); status=1; tail -40 build-test/distcheck.log
fi

step "side by side with ONNX Runtime (tests/ort_diff.sh)"
rc=0
py=$(sed -n 's/^PYTHON3 = //p' build-test/Makefile 2>/dev/null || true)
( cd build-test && top_srcdir="$top" PYTHON3="${py:-/usr/bin/python3}" \
    OAC="$top/build-test/src/onnx-alias-check" sh "$top/tests/ort_diff.sh" ) || rc=$?
case $rc in
  0) passed=$((passed + 1)) ;;
  77) ;;                                  # no Node: it printed "skipped"
  *) failed=$((failed + 1)); status=1 ;;
esac

step "SARIF Multitool, Sarif;Gh rules (tests/sarif_multitool.sh)"
rc=0
( cd build-test && PYTHON3="${py:-/usr/bin/python3}" \
    OAC="$top/build-test/src/onnx-alias-check" sh "$top/tests/sarif_multitool.sh" ) || rc=$?
case $rc in
  0) passed=$((passed + 1)) ;;
  77) ;;                                  # no npm: it printed "skipped"
  *) failed=$((failed + 1)); status=1 ;;
esac

step "fuzz: each harness ${FUZZ_TIME:-60} s"
# Can clang link a libFuzzer target?  (Debian: clang and libclang-rt-14-dev;
# scripts/deps.sh installs them with OAC_FUZZ_DEPS=1.)
fuzz_tmp=$(mktemp -d)
if command -v clang > /dev/null 2>&1 &&
   printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' > "$fuzz_tmp/t.c" &&
   clang -fsanitize=fuzzer,address,undefined -o "$fuzz_tmp/t" "$fuzz_tmp/t.c" > /dev/null 2>&1; then
  if ( cd build-test && make -j"$jobs" fuzz > fuzz-build.log 2>&1 &&
       make fuzz-smoke FUZZ_TIME="${FUZZ_TIME:-60}" ); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); status=1
  fi
else
  echo "fuzz: skipped (no clang)"
fi
rm -rf "$fuzz_tmp"

for d in build-test build-san; do
  if [ -f $d/test-suite.log ] && grep -q '^FAIL\|^ERROR' $d/test-suite.log; then
    echo "---- failures in $d:"; grep -A30 '^FAIL\|^ERROR' $d/test-suite.log | head -80
  fi
done
echo
echo "tests: $passed passed, $failed failed"
exit $status
