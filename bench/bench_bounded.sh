#!/bin/sh
# bench_bounded.sh: bounded reports and one model at a time (contract
# section 12), measured, not asserted (run by hand from a build folder:
# sh ../bench/bench_bounded.sh [N_MODELS]).
#
#  1. A 2 MB model of a million empty nodes (one model-invalid each):
#     every format's time and peak resident memory (GNU time), and the
#     report's summary.omitted.  The acceptance: under 10 s and 200 MB.
#  2. A folder of N_MODELS (default 66,000) copies of a small example and
#     one unreadable file: every format's time and peak resident memory,
#     beside checking one of them alone, and the number of reports.
set -u
oac=${OAC:-src/onnx-alias-check}
model=${MODEL:-examples/dense_cache.onnx}
n=${1:-66000}
command -v /usr/bin/time > /dev/null || { echo "needs GNU time (/usr/bin/time)"; exit 1; }
[ -x "$oac" ] && [ -f "$model" ] || { echo "run from a build folder after make"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp" "$model" "$n" <<'EOF'
import os, shutil, sys
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
def ld(f, b): return varint(f << 3 | 2) + varint(len(b)) + b
def vi(f, v): return varint(f << 3) + varint(v)
tmp, model, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
graph = ld(1, b"") * 1000000 + ld(2, b"g")
open(tmp + "/empty1m.onnx", "wb").write(vi(1, 8) + ld(7, graph) + ld(8, vi(2, 17)))
os.mkdir(tmp + "/many")
data = open(model, "rb").read()
for i in range(n):
    open("%s/many/m%06d.onnx" % (tmp, i), "wb").write(data)
open(tmp + "/many/m500000-garbage.onnx", "wb").write(b"garbage")
EOF

measure() {  # LABEL ARGS...: one line, seconds and peak resident KiB
    label=$1
    shift
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$oac" "$@" > "$tmp/out" 2> /dev/null
    rc=$?
    read -r s kb <<EOT
$(tail -n 1 "$tmp/t")
EOT
    printf '%-28s exit %d  %6.2f s  %7d KiB  %9d bytes out\n' "$label" "$rc" "$s" "$kb" \
        "$(wc -c < "$tmp/out")"
}

echo "1. a million empty nodes ($(wc -c < "$tmp/empty1m.onnx") bytes)"
for f in text json sarif gitlab; do
    measure "  --format=$f" check --format=$f "$tmp/empty1m.onnx"
    [ $f = json ] && python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("    listed", len(r["diagnostics"]), "omitted", r["summary"]["omitted"], "status", r["status"])' "$tmp/out"
done
echo "2. $n small models and one unreadable file in a folder"
measure "  one model alone" check --format=json "$tmp/many/m000000.onnx"
for f in text json sarif gitlab; do
    measure "  --format=$f" check --format=$f "$tmp/many"
    [ $f = json ] && python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print("    reports", len(r), "ok", sum(x["status"] == "ok" for x in r))' "$tmp/out"
done
