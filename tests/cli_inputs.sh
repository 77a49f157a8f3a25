#!/bin/sh
# cli_inputs.sh: nothing a call reads is ever written (contract section
# 12).  The inputs of a call are its models, their external data, the
# --input files and theirs, and the genai_config.json given or found;
# -o, annotate -o and --dump never name one (exit 2, nothing written),
# -o and --dump never name one file, only a regular file is replaced
# (a character device or a FIFO is refused: copies made here with mknod
# and mkfifo, /dev/null itself is never named), a --dump folder that is
# a symbolic link is refused, and check and run refuse the same --input
# files.  Each case compares the bytes of every input before and after,
# and runs under a 20-second limit (timeout exits 124, which no
# expectation accepts).
. "${top_srcdir:?}/tests/cli_lib.sh"

hm="$tmp/h"
am="$tmp/a"
mkdir "$hm" "$am" || exit 99
"$top_builddir/tests/hostile_models" "$hm" || { echo "FAIL: hostile_models"; exit 1; }
"$top_builddir/tests/annotate_models" "$am" || { echo "FAIL: annotate_models"; exit 1; }

run_t() {
    want=$1
    shift
    timeout 20 "$OAC" "$@" > "$out" 2> "$err"
    got=$?
    if [ "$got" != "$want" ]; then
        fail "onnx-alias-check $* exited $got, expected $want"
        sed 's/^/  stdout: /' "$out" | head -10
        sed 's/^/  stderr: /' "$err" | head -10
    fi
}

# sums FILE...: the bytes of each (cksum), or "missing".
sums() {
    for f in "$@"; do
        if [ -e "$f" ]; then cksum < "$f"; else echo "missing $f"; fi
    done
}

# guarded WHAT FILES -- STATUS ARGS...: run_t STATUS ARGS, then every file
# of FILES must hold the bytes it held before.
guarded() {
    what=$1
    shift
    files=""
    while [ "$1" != "--" ]; do files="$files $1"; shift; done
    shift
    # shellcheck disable=SC2086
    before=$(sums $files)
    run_t "$@"
    # shellcheck disable=SC2086
    after=$(sums $files)
    [ "$before" = "$after" ] || fail "$what: an input of the call was changed"
}

# F1: the configuration, given or found beside the model.
cd "$am" || exit 99
cp scatter.genai_config.json given.json
guarded "F1 annotate --config c -o c" given.json scatter.onnx -- \
    2 annotate --config given.json -o given.json scatter.onnx
grep -q 'configuration' "$err" || fail "F1: the message does not name the configuration"
guarded "F1 annotate -o found config" scatter.genai_config.json scatter.onnx -- \
    2 annotate -o scatter.genai_config.json scatter.onnx
guarded "F1 run -o found config" scatter.genai_config.json scatter.onnx -- \
    2 run --dim seq=1 -o scatter.genai_config.json scatter.onnx
grep -q 'configuration' "$err" || fail "F1 run: the message does not name the configuration"
[ -s "$out" ] && fail "F1 run: a report was written on a usage error"
# The near misses: a new file beside it is written, the config read.
run_t 0 run --dim seq=1 -o run.json scatter.onnx
[ -s run.json ] || fail "F1 near miss: no report written"
run_t 0 annotate --format=json -o "$am/annotated.onnx" scatter.onnx
[ -s annotated.onnx ] || fail "F1 near miss: nothing written"
expect_eq "F1: the config still read" "$(json 'r["config"] is not None' "$out")" true

# F2: the model's external data (check, run, annotate).
cd "$hm" || exit 99
for cmd in check run annotate; do
    guarded "F2 $cmd -o external data" ext_near.onnx ext_near.bin -- \
        2 $cmd -o ext_near.bin ext_near.onnx
done
grep -q "external data" "$err" || fail "F2: the message does not name the external data"
run_t 0 check --format=json ext_near.onnx
[ "$(json 'r["status"]' "$out")" = ok ] || fail "F2: the model no longer checks"
# By inode: a hard link to the data is the data.
ln ext_near.bin "$tmp/hard.bin"
guarded "F2 -o hard link of the data" ext_near.bin -- 2 check -o "$tmp/hard.bin" ext_near.onnx

# F3: annotate -o (and -o) onto a character device or a FIFO.
mknod "$tmp/null" c 1 3 || exit 99
mkfifo "$tmp/fifo" || exit 99
for t in null fifo; do
    guarded "F3 annotate -o $t" "$am/scatter.onnx" -- \
        2 annotate -o "$tmp/$t" "$am/scatter.onnx"
    guarded "F3 check -o $t" "$am/scatter.onnx" -- 2 check -o "$tmp/$t" "$am/scatter.onnx"
done
[ -c "$tmp/null" ] || fail "F3: the device was replaced"
[ -p "$tmp/fifo" ] || fail "F3: the FIFO was replaced"

# F4: --dump over the model's external data, over an --input file.
cp -r "$hm" "$tmp/d4"
cd "$tmp/d4" || exit 99
guarded "F4 --dump . over external data y.pb" ext_y.onnx y.pb -- \
    2 run --dump . ext_y.onnx
# A cache (READ_WRITE) given by --input, dumped into its own folder.
dense="$top_builddir/examples/dense_cache.onnx"
ddims="--dim batch=1 --dim heads=1 --dim max_length=4 --dim head_size=2 --dim new_length=1"
# shellcheck disable=SC2086
run_t 0 run $ddims --dump d0 "$dense"
mkdir inp && cp d0/cache.pb inp/cache.pb
guarded "F4 --dump over --input" "$dense" inp/cache.pb -- \
    2 run $ddims --dump inp --input cache=inp/cache.pb "$dense"
grep -q "input file" "$err" || fail "F4: the message does not name the --input file"
# shellcheck disable=SC2086
run_t 0 run $ddims --dump inp2 --input cache=inp/cache.pb "$dense"
[ -s inp2/cache.pb ] || fail "F4 near miss: nothing dumped"
# A plain input's file is never a dump file: no refusal.
mkdir inp3 && cp x4.pb inp3/x.pb
guarded "F4 near miss: --dump beside a plain --input" inp3/x.pb -- \
    0 run --dump inp3 --input x=inp3/x.pb raw_near.onnx

# F15: -o inside the dump's set, also spelled otherwise while the folder
# is not there; a refused run makes no folder either.
guarded "F15 --dump o -o o/y.pb" raw_near.onnx -- 2 run --dump o -o o/y.pb raw_near.onnx
[ -e o/y.pb ] && fail "F15: a file was written"
[ -e o ] && fail "F15: the refused run made the --dump folder"
guarded "F15 --dump ./o2/ -o o2//y.pb" raw_near.onnx -- 2 run --dump ./o2/ -o o2//y.pb raw_near.onnx
[ -e o2 ] && fail "F15: ./o2/ and o2//y.pb were not seen as one folder"
# The folder itself as the -o file, or as the model: refused before the
# run (the dump made a folder where the report went, and lost it).
guarded "F15 --dump r.json -o r.json" raw_near.onnx -- 2 run --dump r.json -o r.json raw_near.onnx
[ -e r.json ] && fail "F15: --dump and -o of one name wrote something"
guarded "F15 --dump MODEL" raw_near.onnx -- 2 run --dump raw_near.onnx raw_near.onnx
grep -q "which this call reads" "$err" || fail "F15: --dump MODEL: the message does not say why"
# Unknown dims: a usage error before the run, and no folder.
run_t 2 run --dump d9 "$dense"
[ -e d9 ] && fail "a run refused for its dims made the --dump folder"
# --dump that is a symbolic link is refused, however it is spelled.
mkdir real && ln -s real link
for l in link link/ link/. link//./ ./link/; do
    run_t 2 run --dump "$l" raw_near.onnx
    grep -q "symbolic link" "$err" || fail "--dump $l: the message does not say why"
done
[ -z "$(ls real)" ] || fail "--dump through a symbolic link wrote into its target"

# A 245-byte -o name: annotate writes it as check does.
long=$(printf 'n%.0s' $(seq 1 240)).onnx
run_t 0 annotate -o "$tmp/$long" "$am/scatter.onnx"
[ -s "$tmp/$long" ] || fail "annotate -o of a 245-byte name was not written"
run_t 0 check -o "$tmp/$long.j" "$am/scatter.onnx"
ls -a "$tmp" | grep -q oac-tmp && fail "a temporary file was left behind"

# Repeated -o is a usage error, nothing written.
run_t 2 check -o "$tmp/a.txt" -o "$tmp/b.txt" raw_near.onnx
[ -e "$tmp/a.txt" ] || [ -e "$tmp/b.txt" ] && fail "-o given twice wrote a file"

# -o - is standard output (no file named "-"); annotate refuses it.
here=$(pwd)
mkdir "$tmp/dash" && cd "$tmp/dash" || exit 99
run_t 0 check --format=json -o - "$hm/raw_near.onnx"
[ -e ./- ] && fail "check -o - wrote a file named -"
expect_eq "check -o -: the report on standard output" "$(json 'r["status"]' "$out")" ok
run_t 2 annotate -o - "$am/scatter.onnx"
[ -e ./- ] && fail "annotate -o - wrote a file named -"
grep -q "not -" "$err" || fail "annotate -o -: the message does not say why"
cd "$here" || exit 99

# check and run agree on --input files: one refusal, one code.
for f in x4_two x4_rank100 x4_passwd; do
    for cmd in check run; do
        guarded "--input $f $cmd" "$f.pb" /etc/passwd -- \
            2 $cmd --format=json --input "x=$f.pb" raw_near.onnx
        expect_eq "--input $f $cmd: codes" \
            "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["parse-error"]'
    done
done
run_t 0 check --input x=x4_ext.pb raw_near.onnx
run_t 0 run --input x=x4_ext.pb raw_near.onnx
# --input's own external data is an input of the call too.
guarded "-o --input's external data" x4.bin -- 2 check -o x4.bin --input x=x4_ext.pb raw_near.onnx

# F5: a byte count that overflows is a finding with its report, never a
# usage error: memory-budget in run (a model's size, a --dim), a note in
# check.
cd "$hm" || exit 99
run_t 1 run --format=json overflow_neg.onnx
expect_eq "F5 run" "$(json '[r["status"], [d["code"] for d in r["diagnostics"]]]' "$out")" \
    '["error", ["memory-budget"]]'
run_t 1 run --format=json --dim n=4611686018427387904 symbolic_neg.onnx
expect_eq "F5 run --dim" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["memory-budget"]'
run_t 0 check --format=json overflow_neg.onnx
expect_eq "F5 check note" "$(json '[(u["rule"], u["value"]) for u in r["unchecked"]]' "$out")" \
    '[["memory-plan", "x"], ["memory-plan", "y0"]]'
run_t 0 check --format=json tiny_neg.onnx
expect_eq "F5 near miss" "$(json 'r["unchecked"]' "$out")" '[]'

# A --tokens value the decoder's INT32 input_ids cannot hold is one usage
# error (no report, no second code), on the real decoder when present.
real=${OAC_REAL_MODELS:-$top_srcdir/../shared/real-models}
if [ -f "$real/tiny-qwen35-gqa-decoder.onnx" ]; then
    run_t 2 run --tokens 2147483648 "$real/tiny-qwen35-gqa-decoder.onnx"
    [ -s "$out" ] && fail "--tokens 2^31: a report on a usage error"
    grep -q -- "--tokens: 2147483648 does not fit decoder input 'input_ids'" "$err" ||
        fail "--tokens 2^31: $(cat "$err")"
fi

# Paths that are not UTF-8: path reads with U+FFFD, path_bytes keeps the
# bytes, so two files never share one model path.
mkdir "$tmp/u" || exit 99
cp "$hm/raw_near.onnx" "$(printf '%s/u/a\376.onnx' "$tmp")"
cp "$hm/raw_near.onnx" "$(printf '%s/u/a\377.onnx' "$tmp")"
run_t 0 check --format=json "$tmp/u"
expect_eq "non-UTF-8 paths" "$(json '[bytes.fromhex(x["model"]["path_bytes"]).rsplit(b"/", 1)[1].hex() for x in r]' "$out")" \
    '["61fe2e6f6e6e78", "61ff2e6f6e6e78"]'
run_t 0 check --format=json "$hm/raw_near.onnx"
expect_eq "UTF-8 path: no path_bytes" "$(json '"path_bytes" in r["model"]' "$out")" false

finish
