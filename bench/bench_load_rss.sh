#!/bin/sh
# bench_load_rss.sh: peak memory of loading and checking a model with
# >= 1 GiB of inline weights (oac.h: payloads stay in the mapping).
#
#   bench/bench_load_rss.sh [MIB] [TENSORS]     (run from the build folder)
#
# Generates the model in a temporary folder (bench/gen_big_model), then
# runs under /usr/bin/time -v: the loader alone (bench/load_model), the
# checker (src/onnx-alias-check check) and a load + save.  Prints peak RSS
# and wall time of each; the target is a peak RSS below 64 MiB for load
# and check.  Exit status 1 when load or check exceeds the target.
set -eu
B=${top_builddir:-.}
MIB=${1:-1024}
NT=${2:-4}
LIMIT_KB=$((64 * 1024))
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oac_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

"$B/bench/gen_big_model" "$tmp/big.onnx" "$MIB" "$NT"
echo "model: $(wc -c < "$tmp/big.onnx") bytes, $NT initializers"

status=0
measure() {   # measure LABEL LIMIT_KB COMMAND...
    label=$1; limit=$2; shift 2
    /usr/bin/time -v "$@" > "$tmp/out" 2> "$tmp/time" || true
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time")
    printf '%-12s peak RSS %8s KiB  wall %s\n' "$label" "$rss" "$wall"
    if [ "$limit" -gt 0 ] && [ "$rss" -ge "$limit" ]; then
        echo "  above the target of $limit KiB"; status=1
    fi
}
measure load "$LIMIT_KB" "$B/bench/load_model" "$tmp/big.onnx"
if [ -x "$B/src/onnx-alias-check" ]; then
    measure check "$LIMIT_KB" "$B/src/onnx-alias-check" check "$tmp/big.onnx"
fi
# Saving streams the payloads from the mapping: resident file pages grow
# (they are clean and reclaimable), heap does not; reported, not judged.
measure load+save 0 "$B/bench/load_model" "$tmp/big.onnx" "$tmp/copy.onnx"
cmp -s "$tmp/big.onnx" "$tmp/copy.onnx" && echo "saved copy is byte-identical" \
    || { echo "saved copy differs"; status=1; }
exit $status
