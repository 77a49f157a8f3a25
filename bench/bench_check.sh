#!/bin/sh
# bench_check.sh: the checker against Debian's onnx checker.
#
# Usage: bench/bench_check.sh [BUILD_DIR] [LAYERS...]
#   BUILD_DIR  where `make` ran (default: the current directory); it must
#              hold bench/gen_decoder and src/onnx-alias-check.
#   LAYERS     decoder sizes (default: 32 256 2048).
#   REPEAT     (environment) runs of each tool per file, default 3.
#   HIDDEN     (environment) the configurations, as gen_decoder --hidden
#              values, default "46 8":
#                46  realistic weights, the issue's configuration: 33,856
#                    weight bytes a layer (66 MiB at 2048 layers), where
#                    onnx.checker peaks near the issue's 554 MiB;
#                8   graph only: 1 KiB of weights a layer.
#
# For each configuration and size, bench/gen_decoder writes a
# decoder-shaped model (about 20 ordinary nodes and two annotated caches
# per layer, IR 8 / opset 17 so onnx 1.12 accepts it), then both tools
# check the same file, alternately, REPEAT times each, under
# /usr/bin/time -v:
#   oac   src/onnx-alias-check check FILE
#   onnx  /usr/bin/python3 -c 'onnx.checker.check_model(onnx.load(p), full_check=True)'
# Wall time is measured with nanosecond clock reads around each run (time
# -v rounds to 10 ms) and the fastest run is kept (the machine's noise
# only ever adds time); peak RSS is time -v's, the largest of the runs.
# onnx's time includes starting Python and importing onnx, as a user's
# invocation does; the smallest row shows that fixed cost.  Each file
# must pass both: onnx-alias-check with 0 errors, onnx.checker without an
# exception (otherwise the run is a setup error).
#
# Each configuration's table gives per size the file and weight sizes,
# both tools' time and peak RSS, speed = onnx time / oac time and rss =
# onnx RSS / oac RSS (above 1: oac is cheaper), then each tool's growth
# from the smallest to the largest size, and the issue's targets with
# "met" or "MISSED":
#   speed >= 20 at every size, rss >= 5 at every size (oac's peak RSS at
#   most a fifth of onnx's), and oac's time growth <= 80 from 32 to 2048
#   layers (scaled by the layer ratio for other sizes: linear time).
# Run it by hand: it is not part of `make check`.  A benchmark reports:
# a missed target is said ("MISSED", and a last line naming them), not an
# exit status, since a loaded machine misses speed bars a quiet one meets.
# Exit status 0, or 2 on a setup error.
set -u

build=${1:-.}
[ $# -gt 0 ] && shift
sizes=${*:-32 256 2048}
repeat=${REPEAT:-3}
configs=${HIDDEN:-46 8}
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
for h in $configs; do
    case $h in ''|*[!0-9]*|0) echo "bench_check.sh: HIDDEN must list positive integers" >&2; exit 2 ;; esac
done

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
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 > b + 0) ? a : b }'; }
verdict() { if [ "$1" = 1 ]; then echo met; else echo MISSED; fi; }

onnx_check='import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)'

echo "onnx-alias-check vs onnx $("$py" -c 'import onnx; print(onnx.__version__)' 2>/dev/null) checker (full_check=True); best of $repeat runs, tools alternating"
all_ok=1 failed=0
for hidden in $configs; do
    case $hidden in
        8) what="graph only" ;;
        46) what="realistic weights (33,856 weight bytes a layer)" ;;
        *) what="weights of hidden $hidden" ;;
    esac
    info=$("$gen" 1 "$tmp/probe.onnx" --hidden "$hidden" --info) ||
        { echo "bench_check.sh: gen_decoder --hidden $hidden failed" >&2; exit 2; }
    rm -f "$tmp/probe.onnx"
    shape=$(echo "$info" | awk '{ print $6 " heads x " $8 ", hidden " $10 }')
    echo
    echo "== hidden $hidden ($what): $shape"
    printf '%-6s %6s %8s %8s | %7s %7s | %7s %7s | %6s %6s | %s\n' \
        layers nodes file_MiB wts_MiB oac_s oac_MB onnx_s onnx_MB speed rss targets
    all_speed=1 all_rss=1
    first_n='' first_oac_s='' first_oac_kb='' first_onnx_s='' first_onnx_kb=''
    last_n='' last_oac_s='' last_oac_kb='' last_onnx_s='' last_onnx_kb=''
    for n in $sizes; do
        model="$tmp/decoder_${hidden}_$n.onnx"
        info=$("$gen" "$n" "$model" --hidden "$hidden" --info) ||
            { echo "bench_check.sh: gen_decoder $n --hidden $hidden failed" >&2; exit 2; }
        nodes=$(echo "$info" | awk '{ print $2 }')
        wbytes=$(echo "$info" | awk '{ print $4 }')
        fbytes=$(wc -c <"$model")

        oac_s='' oac_kb='' onnx_s='' onnx_kb=''
        i=0
        while [ "$i" -lt "$repeat" ]; do
            measure oac "$oac" check "$model"
            oac_s=$(min "$SECS" "$oac_s") oac_kb=$(max "$RSS_KB" "$oac_kb")
            if [ "$RC" -ne 0 ] || ! grep -q ': 0 errors' "$tmp/oac.out"; then
                echo "note: onnx-alias-check exited $RC on $n layers (hidden $hidden):" >&2
                head -5 "$tmp/oac.out" "$tmp/oac.err" >&2
                failed=1
            fi
            measure onnx "$py" -c "$onnx_check" "$model"
            onnx_s=$(min "$SECS" "$onnx_s") onnx_kb=$(max "$RSS_KB" "$onnx_kb")
            if [ "$RC" -ne 0 ]; then
                echo "note: onnx checker exited $RC on $n layers (hidden $hidden):" >&2
                tail -3 "$tmp/onnx.err" >&2
                failed=1
            fi
            i=$((i + 1))
        done
        rm -f "$model"

        speed=$(ratio "$onnx_s" "$oac_s") rss=$(ratio "$onnx_kb" "$oac_kb")
        ok_speed=0 ok_rss=0
        ge "$speed" 20 && ok_speed=1
        ge "$rss" 5 && ok_rss=1
        [ $ok_speed = 1 ] || all_speed=0
        [ $ok_rss = 1 ] || all_rss=0
        printf '%-6s %6s %8s %8s | %7s %7s | %7s %7s | %5sx %5sx | speed>=20x %s, rss>=5x %s\n' \
            "$n" "$nodes" "$(mib "$fbytes")" "$(mib "$wbytes")" \
            "$oac_s" "$(mb "$oac_kb")" "$onnx_s" "$(mb "$onnx_kb")" \
            "$speed" "$rss" "$(verdict $ok_speed)" "$(verdict $ok_rss)"

        if [ -z "$first_n" ]; then
            first_n=$n first_oac_s=$oac_s first_oac_kb=$oac_kb
            first_onnx_s=$onnx_s first_onnx_kb=$onnx_kb
        fi
        last_n=$n last_oac_s=$oac_s last_oac_kb=$oac_kb
        last_onnx_s=$onnx_s last_onnx_kb=$onnx_kb
    done

    ok_growth=1
    if [ -n "$first_n" ] && [ "$first_n" != "$last_n" ]; then
        # 80x for 32 -> 2048 layers (64x the layers): the same allowance per
        # layer ratio at other sizes.
        limit=$(awk -v a="$last_n" -v b="$first_n" 'BEGIN { printf "%.1f", 80 * (a / b) / 64 }')
        oac_growth=$(ratio "$last_oac_s" "$first_oac_s")
        ge "$limit" "$oac_growth" || ok_growth=0
        echo "growth $last_n/$first_n layers ($(ratio "$last_n" "$first_n")x the layers):" \
             "onnx-alias-check time ${oac_growth}x, RSS $(ratio "$last_oac_kb" "$first_oac_kb")x;" \
             "onnx time $(ratio "$last_onnx_s" "$first_onnx_s")x, RSS $(ratio "$last_onnx_kb" "$first_onnx_kb")x"
    fi
    echo "targets (hidden $hidden):"
    printf '  %-48s %s\n' "onnx-alias-check >= 20x faster at every size:" "$(verdict $all_speed)"
    printf '  %-48s %s\n' "peak RSS <= 1/5 of onnx's at every size:" "$(verdict $all_rss)"
    if [ -n "$first_n" ] && [ "$first_n" != "$last_n" ]; then
        printf '  %-48s %s\n' "time growth $last_n/$first_n <= ${limit}x (linear):" "$(verdict $ok_growth)"
    fi
    [ $all_speed = 1 ] && [ $all_rss = 1 ] && [ $ok_growth = 1 ] || all_ok=0
done
echo
echo "(speed, rss: onnx / onnx-alias-check; above 1 means onnx-alias-check is cheaper;"
echo " time: fastest run, RSS: largest run's peak, file and weights in MiB)"
[ $failed = 0 ] || exit 2
[ $all_ok = 1 ] || echo "bench_check.sh: some targets MISSED on this machine (see above)"
exit 0
