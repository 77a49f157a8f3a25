#!/bin/sh
# bench_check.sh: the checker against Debian's onnx checker, side by side.
#
# Usage: bench/bench_check.sh [BUILD_DIR] [LAYERS...]
#   BUILD_DIR  where `make` ran (default: the current directory); it must
#              hold bench/gen_decoder, bench/gen_big_model, bench/cpu_run
#              and src/onnx-alias-check.
#   LAYERS     decoder sizes (default: 32 256 2048 4096).
#   REPEAT     (environment) interleaved rounds per file, default 5 (at
#              least 5: the figures are medians).
#   HIDDEN     (environment) the configurations, as gen_decoder --hidden
#              values, default "46 8":
#                46  realistic weights, the bench decoder: 33,856 weight
#                    bytes a layer (66 MiB at 2048 layers);
#                8   graph only: 1 KiB of weights a layer.
#   BIG_MIB    (environment) also compare on bench/gen_big_model's model of
#              that many MiB of inline weights (default 1024; 0 skips it).
#
# Every file is one both tools read: bench/gen_decoder writes a
# decoder-shaped model (about 20 ordinary nodes and two annotated caches
# per layer) and bench/gen_big_model four large initializers, both as IR 8
# / opset 17, which onnx 1.12 (Debian's python3-onnx, the peer) accepts.
# On each file the tools run alternately, REPEAT rounds:
#   oac   src/onnx-alias-check check FILE
#   onnx  /usr/bin/python3 -c 'onnx.checker.check_model(onnx.load(p), full_check=True)'
# each as the child of bench/cpu_run, which reads the child's CPU time
# (user + system, wait4: the machine is shared, and time spent waiting
# for a core is nobody's cost) and peak RSS (a small C parent, so the
# figure is not a Python parent's memory before exec).  A tool's figure on a file is
# the median of its rounds; speed = onnx CPU / oac CPU and rss = onnx RSS /
# oac RSS are ratios of those medians (above 1: oac is cheaper).  onnx's
# time includes starting Python and importing onnx, as a user's
# invocation does; the smallest row shows that fixed cost.  Each file must
# pass both: onnx-alias-check with 0 errors, onnx.checker without an
# exception (otherwise the run is a setup error).
#
# Per configuration the table gives per size the file and weight sizes,
# both tools' CPU time and peak RSS and the ratios, then each tool's
# growth from the smallest to the largest size, and the targets with
# "met" or "MISSED":
#   at 2048 layers (the bench decoder): speed >= 40 and oac's peak RSS <=
#   15 MiB; oac's time growth from the smallest to the largest size at
#   most 1.25 x the layer ratio (linear: 160x for 32 -> 4096 layers).
# Run it by hand: it is not part of `make check`.  A benchmark reports:
# exit status 0 whether a target is met or not, 2 on a setup error.
set -u

build=${1:-.}
[ $# -gt 0 ] && shift
sizes=${*:-32 256 2048 4096}
repeat=${REPEAT:-5}
configs=${HIDDEN:-46 8}
big_mib=${BIG_MIB:-1024}
gen="$build/bench/gen_decoder"
genbig="$build/bench/gen_big_model"
runner="$build/bench/cpu_run"
oac="$build/src/onnx-alias-check"
py=/usr/bin/python3

for f in "$gen" "$genbig" "$oac" "$runner"; do
    if [ ! -x "$f" ]; then
        echo "bench_check.sh: $f not built (run make in $build)" >&2
        exit 2
    fi
done
[ -x "$py" ] || { echo "bench_check.sh: $py missing" >&2; exit 2; }
"$py" -c 'import onnx' 2>/dev/null ||
    { echo "bench_check.sh: $py cannot import onnx (python3-onnx)" >&2; exit 2; }
case $repeat in ''|*[!0-9]*) echo "bench_check.sh: REPEAT must be an integer >= 5" >&2; exit 2 ;; esac
[ "$repeat" -ge 5 ] || { echo "bench_check.sh: REPEAT must be an integer >= 5" >&2; exit 2; }
case $big_mib in ''|*[!0-9]*) echo "bench_check.sh: BIG_MIB must be an integer" >&2; exit 2 ;; esac
for h in $configs; do
    case $h in ''|*[!0-9]*|0) echo "bench_check.sh: HIDDEN must list positive integers" >&2; exit 2 ;; esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench_check.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# measure LABEL CMD...: sets SECS (CMD's CPU time, user + system), RSS_KB
# (its peak RSS) and RC; output in $tmp/LABEL.out/.err (bench/cpu_run).
measure() {
    label=$1; shift
    set -- $("$runner" "$tmp/$label" "$@")
    SECS=${1:-0} RSS_KB=${2:-0} RC=${3:-99}
}

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print 0; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else printf "%.5f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "-" }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "-" && a + 0 >= b + 0) }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
verdict() { if [ "$1" = 1 ]; then echo met; else echo MISSED; fi; }

onnx_check='import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)'
failed=0

# compare FILE WHAT: REPEAT interleaved rounds of both tools on FILE; sets
# OAC_S OAC_KB ONNX_S ONNX_KB (medians).
compare() {
    file=$1 what=$2
    oac_s='' oac_kb='' onnx_s='' onnx_kb=''
    i=0
    while [ "$i" -lt "$repeat" ]; do
        measure oac "$oac" check "$file"
        oac_s="$oac_s $SECS" oac_kb="$oac_kb $RSS_KB"
        if [ "$RC" -ne 0 ] || ! grep -q ': 0 errors' "$tmp/oac.out"; then
            echo "note: onnx-alias-check exited $RC on $what:" >&2
            head -5 "$tmp/oac.out" "$tmp/oac.err" >&2
            failed=1
        fi
        measure onnx "$py" -c "$onnx_check" "$file"
        onnx_s="$onnx_s $SECS" onnx_kb="$onnx_kb $RSS_KB"
        if [ "$RC" -ne 0 ]; then
            echo "note: onnx checker exited $RC on $what:" >&2
            tail -3 "$tmp/onnx.err" >&2
            failed=1
        fi
        i=$((i + 1))
    done
    OAC_S=$(echo "$oac_s" | median) OAC_KB=$(echo "$oac_kb" | median)
    ONNX_S=$(echo "$onnx_s" | median) ONNX_KB=$(echo "$onnx_kb" | median)
}

echo "onnx-alias-check vs onnx $("$py" -c 'import onnx; print(onnx.__version__)' 2>/dev/null)" \
     "checker (full_check=True): CPU time and peak RSS, medians of $repeat interleaved rounds"
for hidden in $configs; do
    case $hidden in
        8) what="graph only" ;;
        46) what="realistic weights, the bench decoder" ;;
        *) what="weights of hidden $hidden" ;;
    esac
    info=$("$gen" 1 "$tmp/probe.onnx" --hidden "$hidden" --info) ||
        { echo "bench_check.sh: gen_decoder --hidden $hidden failed" >&2; exit 2; }
    rm -f "$tmp/probe.onnx"
    shape=$(echo "$info" | awk '{ print $6 " heads x " $8 ", hidden " $10 }')
    echo
    echo "== hidden $hidden ($what): $shape"
    printf '%-6s %6s %8s %8s | %8s %7s | %8s %7s | %6s %6s\n' \
        layers nodes file_MiB wts_MiB oac_cpu_s oac_MB onnx_cpu_s onnx_MB speed rss
    ok_speed=- ok_rss=- speed_at='' rss_at=''
    first_n='' first_oac_s='' first_onnx_s='' last_n='' last_oac_s='' last_onnx_s=''
    for n in $sizes; do
        model="$tmp/decoder_${hidden}_$n.onnx"
        info=$("$gen" "$n" "$model" --hidden "$hidden" --info) ||
            { echo "bench_check.sh: gen_decoder $n --hidden $hidden failed" >&2; exit 2; }
        nodes=$(echo "$info" | awk '{ print $2 }')
        wbytes=$(echo "$info" | awk '{ print $4 }')
        fbytes=$(wc -c <"$model")
        compare "$model" "$n layers (hidden $hidden)"
        rm -f "$model"
        speed=$(ratio "$ONNX_S" "$OAC_S") rss=$(ratio "$ONNX_KB" "$OAC_KB")
        printf '%-6s %6s %8s %8s | %9s %7s | %9s %7s | %5sx %5sx\n' \
            "$n" "$nodes" "$(mib "$fbytes")" "$(mib "$wbytes")" \
            "$OAC_S" "$(mb "$OAC_KB")" "$ONNX_S" "$(mb "$ONNX_KB")" "$speed" "$rss"
        if [ "$n" = 2048 ]; then
            ok_speed=0 ok_rss=0
            ge "$speed" 40 && ok_speed=1
            ge $((15 * 1024)) "$OAC_KB" && ok_rss=1
            speed_at=$speed rss_at=$(mb "$OAC_KB")
        fi
        if [ -z "$first_n" ]; then
            first_n=$n first_oac_s=$OAC_S first_onnx_s=$ONNX_S
        fi
        last_n=$n last_oac_s=$OAC_S last_onnx_s=$ONNX_S
    done
    echo "targets (hidden $hidden):"
    if [ "$ok_speed" != - ]; then
        printf '  %-58s %s\n' "2048 layers: onnx-alias-check >= 40x faster (${speed_at}x):" \
            "$(verdict $ok_speed)"
        printf '  %-58s %s\n' "2048 layers: onnx-alias-check peak RSS <= 15 MiB (${rss_at}):" \
            "$(verdict $ok_rss)"
    fi
    if [ -n "$first_n" ] && [ "$first_n" != "$last_n" ]; then
        limit=$(awk -v a="$last_n" -v b="$first_n" 'BEGIN { printf "%.1f", 1.25 * a / b }')
        growth=$(ratio "$last_oac_s" "$first_oac_s")
        ok_growth=0
        ge "$limit" "$growth" && ok_growth=1
        printf '  %-58s %s\n' "time growth $last_n/$first_n layers ${growth}x <= ${limit}x (linear):" \
            "$(verdict $ok_growth)"
        echo "  (onnx's time growth over the same sizes: $(ratio "$last_onnx_s" "$first_onnx_s")x)"
    fi
done

if [ "$big_mib" -gt 0 ]; then
    big="$tmp/big.onnx"
    "$genbig" "$big" "$big_mib" 4 >/dev/null ||
        { echo "bench_check.sh: gen_big_model failed" >&2; exit 2; }
    echo
    echo "== bench/gen_big_model: $(mib "$(wc -c <"$big")") MiB file, 4 inline initializers"
    compare "$big" "the $big_mib MiB model"
    rm -f "$big"
    printf '%-10s %9s %7s | %9s %7s | %6s %6s\n' model oac_cpu_s oac_MB onnx_cpu_s onnx_MB speed rss
    printf '%-10s %9s %7s | %9s %7s | %5sx %5sx\n' "${big_mib}MiB" "$OAC_S" "$(mb "$OAC_KB")" \
        "$ONNX_S" "$(mb "$ONNX_KB")" "$(ratio "$ONNX_S" "$OAC_S")" "$(ratio "$ONNX_KB" "$OAC_KB")"
fi
echo
echo "(speed, rss: onnx / onnx-alias-check, medians; above 1 means onnx-alias-check is cheaper;"
echo " CPU seconds, peak RSS in MB (MiB), file and weights in MiB)"
[ $failed = 0 ] || exit 2
exit 0
