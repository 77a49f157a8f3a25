#!/bin/sh
# bench_check.sh: issue 3, the checker against Debian's onnx checker.
#
# Usage: bench/bench_check.sh [BUILD_DIR] [LAYERS...]
#   BUILD_DIR  where `make` ran (default: the current directory); it must
#              hold bench/gen_decoder and src/onnx-alias-check.
#   LAYERS     decoder sizes (default: 32 256 2048).
#
# For each size, bench/gen_decoder writes a decoder-shaped model (about 20
# ordinary nodes and two annotated caches per layer, IR 8 / opset 17 so
# onnx 1.12 accepts it), then both tools check the same file, one after
# the other, under /usr/bin/time -v:
#   oac   src/onnx-alias-check check FILE
#   onnx  /usr/bin/python3 -c 'onnx.checker.check_model(onnx.load(p), full_check=True)'
# and the script prints per size wall time and peak RSS of both, the
# ratios onnx/oac, and at the end the growth from the smallest to the
# largest size (2048/32 by default) of each tool.  Wall time is measured
# with nanosecond clock reads around the run (time -v rounds to 10 ms);
# peak RSS comes from time -v.  onnx's time includes starting Python and
# importing onnx, as a user's invocation does; the 32-layer row shows
# that fixed cost.  Run it by hand: it is not part of `make check`.
set -u

build=${1:-.}
[ $# -gt 0 ] && shift
sizes=${*:-32 256 2048}
gen="$build/bench/gen_decoder"
oac="$build/src/onnx-alias-check"
py=/usr/bin/python3
timebin=/usr/bin/time

for f in "$gen" "$oac"; do
    if [ ! -x "$f" ]; then
        echo "bench_check.sh: $f not built (run make in $build)" >&2
        exit 2
    fi
done
[ -x "$timebin" ] || { echo "bench_check.sh: $timebin missing" >&2; exit 2; }
[ -x "$py" ] || { echo "bench_check.sh: $py missing" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_check.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

now_ns() { date +%s%N; }

# measure LABEL CMD...: run CMD under time -v; sets SECS, RSS_KB, RC.
measure() {
    label=$1; shift
    t0=$(now_ns)
    "$timebin" -v -o "$tmp/time.txt" "$@" >"$tmp/$label.out" 2>"$tmp/$label.err"
    RC=$?
    t1=$(now_ns)
    SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    RSS_KB=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$tmp/time.txt")
    [ -n "$RSS_KB" ] || RSS_KB=0
    # time -v reports the command's own status as "Exit status".
    st=$(awk -F: '/Exit status/ { gsub(/ /, "", $2); print $2 }' "$tmp/time.txt")
    [ -n "$st" ] && RC=$st
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }

printf '%-6s %7s %9s | %9s %9s %3s | %9s %9s %3s | %10s %9s\n' \
    layers nodes file_kB oac_s oac_MB rc onnx_s onnx_MB rc time_x rss_x
first_oac_s='' first_oac_kb='' first_onnx_s='' first_onnx_kb='' first_n=''
last_oac_s='' last_oac_kb='' last_onnx_s='' last_onnx_kb='' last_n=''
for n in $sizes; do
    model="$tmp/decoder_$n.onnx"
    "$gen" "$n" "$model" || { echo "bench_check.sh: gen_decoder $n failed" >&2; exit 1; }
    kb=$(( $(wc -c <"$model") / 1024 ))
    nodes=$("$py" -c 'import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))' "$model")

    measure oac "$oac" check "$model"
    oac_s=$SECS oac_kb=$RSS_KB oac_rc=$RC
    if [ "$oac_rc" -ne 0 ]; then
        echo "note: onnx-alias-check exited $oac_rc on $n layers:" >&2
        head -5 "$tmp/oac.out" "$tmp/oac.err" >&2
    fi
    measure onnx "$py" -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' "$model"
    onnx_s=$SECS onnx_kb=$RSS_KB onnx_rc=$RC
    if [ "$onnx_rc" -ne 0 ]; then
        echo "note: onnx checker exited $onnx_rc on $n layers:" >&2
        tail -3 "$tmp/onnx.err" >&2
    fi

    printf '%-6s %7s %9s | %9s %9.1f %3s | %9s %9.1f %3s | %10s %9s\n' \
        "$n" "$nodes" "$kb" "$oac_s" "$(awk -v k="$oac_kb" 'BEGIN{print k/1024}')" "$oac_rc" \
        "$onnx_s" "$(awk -v k="$onnx_kb" 'BEGIN{print k/1024}')" "$onnx_rc" \
        "$(ratio "$onnx_s" "$oac_s")" "$(ratio "$onnx_kb" "$oac_kb")"

    if [ -z "$first_n" ]; then
        first_n=$n first_oac_s=$oac_s first_oac_kb=$oac_kb
        first_onnx_s=$onnx_s first_onnx_kb=$onnx_kb
    fi
    last_n=$n last_oac_s=$oac_s last_oac_kb=$oac_kb
    last_onnx_s=$onnx_s last_onnx_kb=$onnx_kb
done

echo "(time_x, rss_x: onnx / onnx-alias-check; above 1 means onnx-alias-check is cheaper)"
if [ -n "$first_n" ] && [ "$first_n" != "$last_n" ]; then
    echo "growth $last_n/$first_n layers ($(ratio "$last_n" "$first_n")x the nodes):"
    echo "  onnx-alias-check: time $(ratio "$last_oac_s" "$first_oac_s")x, peak RSS $(ratio "$last_oac_kb" "$first_oac_kb")x"
    echo "  onnx checker:     time $(ratio "$last_onnx_s" "$first_onnx_s")x, peak RSS $(ratio "$last_onnx_kb" "$first_onnx_kb")x"
fi
