#!/bin/sh
# bench_check.sh: issue 3, the checker against Debian's onnx checker.
#
# Usage: bench/bench_check.sh [BUILD_DIR] [LAYERS...]
#   BUILD_DIR  where `make` ran (default: the current directory); it must
#              hold bench/gen_decoder and src/onnx-alias-check.
#   LAYERS     decoder sizes (default: 32 256 2048).
#   REPEAT     (environment) runs of each tool per size, default 3.
#
# For each size, bench/gen_decoder writes a decoder-shaped model (about 20
# ordinary nodes and two annotated caches per layer, IR 8 / opset 17 so
# onnx 1.12 accepts it), then both tools check the same file, alternately,
# REPEAT times each, under /usr/bin/time -v:
#   oac   src/onnx-alias-check check FILE
#   onnx  /usr/bin/python3 -c 'onnx.checker.check_model(onnx.load(p), full_check=True)'
# Wall time is measured with nanosecond clock reads around each run (time
# -v rounds to 10 ms) and the fastest run is kept (the machine's noise
# only ever adds time); peak RSS is time -v's, the largest of the runs.
# onnx's time includes starting Python and importing onnx, as a user's
# invocation does; the smallest row shows that fixed cost.
#
# The table gives per size both tools' time and peak RSS, speed = onnx
# time / oac time and rss = onnx RSS / oac RSS (above 1: oac is cheaper),
# then each tool's growth from the smallest to the largest size, and the
# issue's targets with "met" or "MISSED":
#   speed >= 20 at every size, rss >= 5 at every size (oac's peak RSS at
#   most a fifth of onnx's), and oac's time growth <= 80 from 32 to 2048
#   layers (scaled by the node ratio for other sizes: linear time).
# Run it by hand: it is not part of `make check`.  Exit status 0 when
# every target is met, 1 when one is missed, 2 on a setup error.
set -u

build=${1:-.}
[ $# -gt 0 ] && shift
sizes=${*:-32 256 2048}
repeat=${REPEAT:-3}
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
case $repeat in ''|*[!0-9]*|0) echo "bench_check.sh: REPEAT must be a positive integer" >&2; exit 2 ;; esac

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
    SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
    RSS_KB=$(awk -F: '/Maximum resident set size/ { gsub(/ /, "", $2); print $2 }' "$tmp/time.txt")
    [ -n "$RSS_KB" ] || RSS_KB=0
    # time -v reports the command's own status as "Exit status".
    st=$(awk -F: '/Exit status/ { gsub(/ /, "", $2); print $2 }' "$tmp/time.txt")
    [ -n "$st" ] && RC=$st
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
# ge A B: is A >= B (decimals)?
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "-" && a + 0 >= b + 0) }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 > b + 0) ? a : b }'; }
verdict() { if [ "$1" = 1 ]; then echo met; else echo MISSED; fi; }

echo "onnx-alias-check vs onnx $("$py" -c 'import onnx; print(onnx.__version__)' 2>/dev/null) checker (full_check=True); best of $repeat runs"
printf '%-6s %7s %7s | %8s %8s | %8s %8s | %7s %6s | %s\n' \
    layers nodes file_kB oac_s oac_MB onnx_s onnx_MB speed rss targets
all_speed=1 all_rss=1 failed=0
first_n='' first_nodes='' first_oac_s='' first_oac_kb='' first_onnx_s='' first_onnx_kb=''
last_n='' last_nodes='' last_oac_s='' last_oac_kb='' last_onnx_s='' last_onnx_kb=''
for n in $sizes; do
    model="$tmp/decoder_$n.onnx"
    "$gen" "$n" "$model" || { echo "bench_check.sh: gen_decoder $n failed" >&2; exit 2; }
    kb=$(( $(wc -c <"$model") / 1024 ))
    nodes=$("$py" -c 'import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))' "$model")

    oac_s='' oac_kb='' onnx_s='' onnx_kb=''
    i=0
    while [ "$i" -lt "$repeat" ]; do
        measure oac "$oac" check "$model"
        oac_s=$(min "$SECS" "$oac_s") oac_kb=$(max "$RSS_KB" "$oac_kb")
        if [ "$RC" -ne 0 ]; then
            echo "note: onnx-alias-check exited $RC on $n layers:" >&2
            head -5 "$tmp/oac.out" "$tmp/oac.err" >&2
            failed=1
        fi
        measure onnx "$py" -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' "$model"
        onnx_s=$(min "$SECS" "$onnx_s") onnx_kb=$(max "$RSS_KB" "$onnx_kb")
        if [ "$RC" -ne 0 ]; then
            echo "note: onnx checker exited $RC on $n layers:" >&2
            tail -3 "$tmp/onnx.err" >&2
            failed=1
        fi
        i=$((i + 1))
    done

    speed=$(ratio "$onnx_s" "$oac_s") rss=$(ratio "$onnx_kb" "$oac_kb")
    ok_speed=0 ok_rss=0
    ge "$speed" 20 && ok_speed=1
    ge "$rss" 5 && ok_rss=1
    [ $ok_speed = 1 ] || all_speed=0
    [ $ok_rss = 1 ] || all_rss=0
    printf '%-6s %7s %7s | %8s %8s | %8s %8s | %6sx %5sx | speed>=20x %s, rss>=5x %s\n' \
        "$n" "$nodes" "$kb" "$oac_s" "$(mb "$oac_kb")" "$onnx_s" "$(mb "$onnx_kb")" \
        "$speed" "$rss" "$(verdict $ok_speed)" "$(verdict $ok_rss)"

    if [ -z "$first_n" ]; then
        first_n=$n first_nodes=$nodes first_oac_s=$oac_s first_oac_kb=$oac_kb
        first_onnx_s=$onnx_s first_onnx_kb=$onnx_kb
    fi
    last_n=$n last_nodes=$nodes last_oac_s=$oac_s last_oac_kb=$oac_kb
    last_onnx_s=$onnx_s last_onnx_kb=$onnx_kb
done

echo "(speed, rss: onnx / onnx-alias-check; above 1 means onnx-alias-check is cheaper)"
ok_growth=1
if [ -n "$first_n" ] && [ "$first_n" != "$last_n" ]; then
    node_x=$(ratio "$last_nodes" "$first_nodes")
    # 80x for 32 -> 2048 layers (64x the layers): the same allowance per
    # node ratio at other sizes.
    limit=$(awk -v a="$last_n" -v b="$first_n" 'BEGIN { printf "%.1f", 80 * (a / b) / 64 }')
    oac_growth=$(ratio "$last_oac_s" "$first_oac_s")
    ge "$limit" "$oac_growth" || ok_growth=0
    echo "growth $last_n/$first_n layers ($(ratio "$last_n" "$first_n")x the layers, ${node_x}x the nodes):"
    echo "  onnx-alias-check: time ${oac_growth}x, peak RSS $(ratio "$last_oac_kb" "$first_oac_kb")x"
    echo "  onnx checker:     time $(ratio "$last_onnx_s" "$first_onnx_s")x, peak RSS $(ratio "$last_onnx_kb" "$first_onnx_kb")x"
fi
echo "targets:"
printf '  %-48s %s\n' "onnx-alias-check >= 20x faster at every size:" "$(verdict $all_speed)"
printf '  %-48s %s\n' "peak RSS <= 1/5 of onnx's at every size:" "$(verdict $all_rss)"
if [ -n "$first_n" ] && [ "$first_n" != "$last_n" ]; then
    printf '  %-48s %s\n' "time growth $last_n/$first_n <= ${limit}x (linear):" "$(verdict $ok_growth)"
fi
[ $failed = 0 ] || exit 2
[ $all_speed = 1 ] && [ $all_rss = 1 ] && [ $ok_growth = 1 ] || exit 1
exit 0
