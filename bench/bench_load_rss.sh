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
# and check.  Then checks a 2048-layer decoder (bench/gen_decoder, ~70 MiB
# of which 66 MiB weights) and the same graph without weights (--hidden 8),
# both files in the page cache: the target is a peak RSS with weights at
# most 8 MiB above the one without (memory follows the graph, also when
# the weights are many tensors whose headers the loader reads).
# Exit status 1 when a target is missed.
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
if [ -x "$B/bench/gen_decoder" ] && [ -x "$B/src/onnx-alias-check" ]; then
    "$B/bench/gen_decoder" 2048 "$tmp/dw.onnx" > /dev/null
    "$B/bench/gen_decoder" 2048 "$tmp/dg.onnx" --hidden 8 > /dev/null
    echo "decoder: $(wc -c < "$tmp/dw.onnx") bytes, graph only: $(wc -c < "$tmp/dg.onnx") bytes"
    cat "$tmp/dw.onnx" "$tmp/dg.onnx" > /dev/null     # in the page cache
    measure "check dec" 0 "$B/src/onnx-alias-check" check "$tmp/dw.onnx"
    rss_w=$rss
    measure "check dec-8" 0 "$B/src/onnx-alias-check" check "$tmp/dg.onnx"
    if [ "$rss_w" -gt $((rss + 8 * 1024)) ]; then
        echo "  weights add $((rss_w - rss)) KiB, above the target of 8192 KiB"; status=1
    fi
fi
# Saving streams the payloads from the mapping: resident file pages grow
# (they are clean and reclaimable), heap does not; reported, not judged.
measure load+save 0 "$B/bench/load_model" "$tmp/big.onnx" "$tmp/copy.onnx"
cmp -s "$tmp/big.onnx" "$tmp/copy.onnx" && echo "saved copy is byte-identical" \
    || { echo "saved copy differs"; status=1; }
exit $status
