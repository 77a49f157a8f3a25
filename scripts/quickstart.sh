#!/usr/bin/env bash
# quickstart.sh: install what is missing, build, and run the tool on the
# shipped example models: the checker, then the reference executor.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/deps.sh build
mkdir -p build
# Each stage's output goes to a log, shown when the stage fails.
stage() {
  local log=$1; shift
  "$@" > "$log" 2>&1 || { tail -40 "$log"; echo "quickstart: failed: $* (log: $log)" >&2; exit 1; }
}
echo "== build (autoreconf, configure, make; a few minutes on 2 cores; log in build/)"
stage build/autoreconf.log autoreconf -fi
cd build
[ -f Makefile ] || stage configure.log ../configure -q
stage make.log make -j"$(nproc)"
echo "   built src/onnx-alias-check"
tool=src/onnx-alias-check

echo "== check: a valid dense cache and its broken twin"
$tool check examples/dense_cache.onnx
$tool check examples/dense_cache_broken.onnx || echo "(exit $?: the broken twin fails, as it should)"
echo "== run: the dense cache, 4 decode steps"
$tool run --steps 4 --dim batch=1 --dim heads=2 --dim max_length=16 \
  --dim head_size=8 --dim new_length=1 examples/dense_cache.onnx
echo "== run: the toy decoder, its K/V caches updated in place (6 decode steps)"
$tool run --steps 6 examples/toy_decoder.onnx
echo "== run: its Concat twin, each present fed back as the next past, as a runtime"
echo "   without the contract does: the caches grow and are copied every step"
$tool run --steps 6 examples/toy_decoder_concat.onnx
per_step() { "$tool" run --steps 6 "$1" | sed -n 's/.*copied bytes: .*(per step: \(.*\))/\1/p'; }
echo "-- bytes of cache contents copied into fresh buffers, steps 1 to 6:"
echo "   in place:    $(per_step examples/toy_decoder.onnx)"
echo "   Concat twin: $(per_step examples/toy_decoder_concat.onnx)"
echo "== run: past its capacity of 16 positions the toy decoder stops at the update"
echo "   before step 17 runs a node, every cache as step 16 left it"
$tool run --steps 17 examples/toy_decoder.onnx || echo "(exit $?: capacity-overflow, as it should)"
echo "== run: a paged cache with INT4, FP8 and INT2 pages"
$tool run --steps 4 examples/paged_cache.onnx
