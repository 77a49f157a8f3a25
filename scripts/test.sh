#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it (.ci/run calls this).
#   1. install what is missing (scripts/deps.sh suite)
#   2. build and `make check`
#   3. build with ASan+UBSan and `make check` again
#   4. valgrind over the command line on every example and on bad input
#   5. `make distcheck` (out-of-tree, read-only sources, clean tarball),
#      then the CI examples' build lines on that tarball (tests/ci_files.sh
#      with OAC_CI_TARBALL)
#   6. `run` side by side with ONNX Runtime (tests/ort_diff.sh: installs
#      onnxruntime-node from the npm registry; Node and npm from
#      `scripts/deps.sh node`)
#   6b. the SARIF of every example through Microsoft's SARIF Multitool,
#      `validate --rule-kind "Sarif;Gh"` (tests/sarif_multitool.sh:
#      installs @microsoft/sarif-multitool-linux from the npm registry);
#      any error fails
#   7. each libFuzzer harness (fuzz/) for FUZZ_TIME seconds (default 60)
#      over the seed corpus the build makes, when clang can link
#      libFuzzer; any finding fails
# A step that cannot run here (no Node, an npm registry it cannot reach,
# no clang, no ../shared/real-models) is skipped and says why, unless
# OAC_REQUIRE_ONLINE=1 (set by .ci/run): then the two npm steps must run,
# and a registry they cannot reach is a failure.
# It ends with the skips, one line each, then one line
# "tests: N passed, N failed, N skipped".
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc)
bash scripts/deps.sh suite
autoreconf -fi >/dev/null 2>&1

passed=0 failed=0
skips=()
skip() { skips+=("$*"); }
count() {  # add up the automake test-suite.log of a build folder
  local log=$1/test-suite.log p f e t
  [ -f "$log" ] || return 0
  p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
  f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
  e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${e:-0}))
  # Each skipped test by name, with the reason its log gives last.
  while IFS= read -r t; do
    t=${t%.trs}
    skip "$1: ${t#"$1"/}: $(grep -i 'skip' "$t.log" 2>/dev/null |
                           grep -v '(exit status: 77)$' | tail -1 | cut -c1-160)"
  done < <(find "$1" -name '*.trs' -exec grep -l '^:test-result: SKIP' {} + 2>/dev/null | sort)
}
# The lines of a step's output saying "NAME: skipped (...)": the skips of
# a part of it (ort_diff's real decoders) or of the whole step.
part_skips() {
  local line
  while IFS= read -r line; do skip "$line"; done < <(grep -i ': skipped' "$1" || true)
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

py=$(sed -n 's/^PYTHON3 = //p' build-test/Makefile 2>/dev/null || true)

step "the CI examples' build lines, from the make dist tarball (tests/ci_files.sh)"
tarball=$(ls "$top"/build-test/onnx-alias-check-*.tar.gz 2>/dev/null | head -1 || true)
if [ -n "$tarball" ] && ( cd build-test && top_srcdir="$top" top_builddir="$top/build-test" \
       PYTHON3="${py:-/usr/bin/python3}" OAC="$top/build-test/src/onnx-alias-check" \
       OAC_CI_TARBALL="$tarball" sh "$top/tests/ci_files.sh" ); then
  passed=$((passed + 1))
else
  [ -n "$tarball" ] || echo "test.sh: no tarball from make distcheck in build-test"
  failed=$((failed + 1)); status=1
fi

# Node and npm (Debian's) only now, for the two steps that use them.
node_ok=1
bash scripts/deps.sh node || node_ok=0
npm_step() {  # name, script, env...: exit 0 pass, 77 skipped, else fail
  local name=$1 script=$2 rc=0 log; shift 2
  log=$(mktemp)
  ( cd build-test && env "$@" PYTHON3="${py:-/usr/bin/python3}" \
      OAC="$top/build-test/src/onnx-alias-check" sh "$top/tests/$script" ) > "$log" 2>&1 || rc=$?
  cat "$log"
  case $rc in
    0) passed=$((passed + 1)); part_skips "$log" ;;
    77) part_skips "$log"
        grep -qi ': skipped' "$log" || skip "$name: skipped" ;;
    *) failed=$((failed + 1)); status=1 ;;
  esac
  rm -f "$log"
}
[ $node_ok = 1 ] || echo "test.sh: scripts/deps.sh node failed: the npm steps say why they cannot run"

step "side by side with ONNX Runtime (tests/ort_diff.sh)"
npm_step ort_diff ort_diff.sh top_srcdir="$top"

step "SARIF Multitool, Sarif;Gh rules (tests/sarif_multitool.sh)"
npm_step sarif_multitool sarif_multitool.sh

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
  echo "fuzz: skipped (no clang that links libFuzzer; OAC_FUZZ_DEPS=1 bash scripts/deps.sh installs it)"
  skip "fuzz: skipped (no clang that links libFuzzer; OAC_FUZZ_DEPS=1 bash scripts/deps.sh installs it)"
fi
rm -rf "$fuzz_tmp"

for d in build-test build-san; do
  if [ -f $d/test-suite.log ] && grep -q '^FAIL\|^ERROR' $d/test-suite.log; then
    echo "---- failures in $d:"; grep -A30 '^FAIL\|^ERROR' $d/test-suite.log | head -80
  fi
done
echo
for k in "${skips[@]}"; do echo "skipped: $k"; done
echo "tests: $passed passed, $failed failed, ${#skips[@]} skipped"
exit $status
