#!/usr/bin/env bash
# quickstart.sh: install what is missing, build, and run the tool on the
# shipped example models: the checker, then the reference executor.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/deps.sh
autoreconf -fi >/dev/null
mkdir -p build && cd build
[ -f Makefile ] || ../configure -q
make -j"$(nproc)" >/dev/null
tool=src/onnx-alias-check

echo "== check: a valid dense cache and its broken twin"
$tool check examples/dense_cache.onnx
$tool check examples/dense_cache_broken.onnx || echo "(exit $?: the broken twin fails, as it should)"
echo "== run: the dense cache, 4 decode steps"
$tool run --steps 4 --dim batch=1 --dim heads=2 --dim max_length=16 \
  --dim head_size=8 --dim new_length=1 examples/dense_cache.onnx
echo "== run: the toy decoder in place, and its Concat twin"
$tool run --steps 4 examples/toy_decoder.onnx
$tool run --steps 4 --dim past_len=3 examples/toy_decoder_concat.onnx
echo "== run: a paged cache with INT4, FP8 and INT2 pages"
$tool run --steps 4 examples/paged_cache.onnx
