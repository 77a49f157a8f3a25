#!/bin/sh
# cli_usage.sh: how the command line reads its words (the man page,
# COMMANDS and MODELS; src/cli_opts.c and src/cli_paths.c): the commands
# check, run, annotate and help [COMMAND]; a misspelt command or option is
# a usage error with the closest one suggested; `-` reads a model from
# standard input; a folder is searched for *.onnx files in sorted order;
# `run` names every dimension it lacks in one message.
. "${top_srcdir:?}/tests/cli_lib.sh"
need_examples dense_cache dense_cache_broken dense_cache_implied

ok="$ex/dense_cache.onnx"
broken="$ex/dense_cache_broken.onnx"
warn="$ex/dense_cache_implied.onnx"

# A usage error: exit 2, no report, the reason (with $2 in it) on stderr.
usage_says() {
    says=$1
    shift
    run_oac 2 "$@"
    [ -s "$out" ] && fail "usage error '$*' wrote a report: $(head -3 "$out")"
    grep -qF -- "$says" "$err" || fail "'$*': stderr lacks \"$says\": $(cat "$err")"
}

# ---- commands ----------------------------------------------------------------
# Each command word is the command, never a model path ("cannot open").
usage_says "no model given" annotate
usage_says "no model given" run
usage_says "no model given" check
grep -q "cannot open" "$err" && fail "a command word was read as a path"

# help: every command's usage line; help COMMAND: that command's options
# only (--steps is run's, --config annotate's and check's, --format everyone's).
run_oac 0 help
for cmd in "[check]" run annotate help; do
    grep -qF "onnx-alias-check $cmd " "$out" || fail "help has no usage line for $cmd"
done
cp "$out" "$tmp/help-all"
run_oac 0 --help
cmp -s "$out" "$tmp/help-all" || fail "--help and help differ"
run_oac 0 help help
cmp -s "$out" "$tmp/help-all" || fail "help help is not the whole help"
has_opts() {  # COMMAND WANTED... -- UNWANTED...
    c=$1
    shift
    mode=want
    for o in "$@"; do
        if [ "$o" = -- ]; then mode=unwanted; continue; fi
        if grep -qF -- "$o" "$out"; then
            [ $mode = unwanted ] && fail "help $c lists $o"
        else
            [ $mode = want ] && fail "help $c lacks $o"
        fi
    done
}
run_oac 0 help run
head -n 1 "$out" | grep -qF "Usage: onnx-alias-check run [OPTION]... MODEL" ||
    fail "help run: usage line: $(head -n 1 "$out")"
has_opts run --steps --dim --format --max-memory -- --config --partial
cp "$out" "$tmp/help-run"
run_oac 0 run --help
cmp -s "$out" "$tmp/help-run" || fail "run --help differs from help run"
run_oac 0 help annotate
has_opts annotate --config --capacity --format -- --steps --dim
run_oac 0 help check
has_opts check --dim --input --werror --config -- --steps
usage_says "did you mean 'run'?" help rnu
usage_says "unknown command 'zzyzx'" help zzyzx
usage_says "at most" help run check

# ---- a misspelt command or option ------------------------------------------
usage_says "'chekc' is no file and no command; did you mean 'check'?" chekc "$ok"
usage_says "did you mean 'annotate'?" anotate -o "$tmp/o.onnx" "$ok"
usage_says "did you mean 'help'?" hlep
usage_says "did you mean '--werror'?" "$ok" werror
usage_says "unknown option '--wrror'; did you mean '--werror'?" --wrror "$ok"
usage_says "unknown option '--stpes'; did you mean '--steps'?" run --stpes 2 "$ok"
usage_says "'annotate' is no file, and a command comes first" "$ok" annotate
usage_says "(commands: check, run, annotate, help)" zzyzx "$ok"
grep -q "did you mean" "$err" && fail "a suggestion for a word far from every name"
usage_says "unknown option '--qqqqqq'" --qqqqqq "$ok"
grep -q "did you mean" "$err" && fail "a suggestion for an option far from every name"
# A word that is a file is a model (and `check run` checks a file "run").
mkdir "$tmp/words" && cp "$ok" "$tmp/words/chekc" && cp "$broken" "$tmp/words/run" ||
    fail "cannot set up the word files"
(cd "$tmp/words" && "$OAC" chekc > "$out" 2> "$err") || fail "a file named chekc was not checked"
(cd "$tmp/words" && "$OAC" check run > "$out" 2> "$err"; [ $? = 1 ]) ||
    fail "check run: the file run was not checked"
grep -q "^run: error: .*\[alias-mismatch\]" "$out" || fail "check run: $(cat "$out")"
# A path (it has a '/' or a '.') that does not exist stays a parse-error
# report about that file (contract 5).
run_oac 2 --format=json "$tmp/missing.onnx"
expect_eq "a missing path" "$(json '[d["code"] for d in r["diagnostics"]]' "$out")" '["parse-error"]'

# ---- "-": a model from standard input ----------------------------------------
# From a pipe: the same findings as from the file, reported as "-".
"$OAC" --format=json "$broken" > "$tmp/file.json"
cat "$broken" | "$OAC" --format=json - > "$out" 2> "$err"
expect_eq "piped model exit status" $? 1
expect_eq "piped model path" "$(json 'r["model"]["path"]' "$out")" -
expect_eq "piped model findings" "$(json '[(d["code"], d["message"]) for d in r["diagnostics"]]' "$out")" \
    "$(json '[(d["code"], d["message"]) for d in r["diagnostics"]]' "$tmp/file.json")"
cat "$broken" | "$OAC" - > "$out" 2> "$err"
grep -q "^-: error: .* \[alias-mismatch\]\$" "$out" || fail "text report of -: $(cat "$out")"
# Redirected from a file, and among other models in argument order.
run_oac 1 --format=json "$ok" - "$warn" < "$broken"
expect_eq "- among models" "$(json '[(m["model"]["path"], m["status"]) for m in r]' "$out")" \
    "[[\"$ok\", \"ok\"], [\"-\", \"error\"], [\"$warn\", \"ok\"]]"
# A here-document (no FIFO, no file of ours): not a model, a parse-error
# report about "-", exit 2.
"$OAC" --format=json - > "$out" 2> "$err" <<EOF
this is not an ONNX model
EOF
expect_eq "here-document exit status" $? 2
expect_eq "here-document report" "$(json '[r["model"]["path"], [d["code"] for d in r["diagnostics"]]]' "$out")" \
    '["-", ["parse-error"]]'
run_oac 2 - < /dev/null
grep -q "^-: error: .*empty file.*\[parse-error\]\$" "$out" || fail "empty stdin: $(cat "$out")"
usage_says "'-' (standard input) given twice" - "$ok" -
# run and annotate read it too; -o may not be the file stdin comes from.
cat "$ok" | "$OAC" run --dim batch=1 --dim heads=2 --dim max_length=8 --dim head_size=4 \
    --dim new_length=1 - > "$out" 2> "$err" || fail "run - failed: $(cat "$err")"
cp "$ok" "$tmp/in.onnx"
usage_says "which the report would overwrite" -o "$tmp/in.onnx" - < "$tmp/in.onnx"
cmp -s "$ok" "$tmp/in.onnx" || fail "-o overwrote the file standard input came from"

# ---- folders ---------------------------------------------------------------
# d/a.onnx, d/a/x.onnx (a folder a beside a file a.onnx), d/b/c/y.onnx,
# d/z.onnx; not models: a symlink to a model and one to a folder (never
# followed), a text file, a hard link to z.onnx (the same file twice).
d="$tmp/d"
mkdir -p "$d/a" "$d/b/c" "$d/empty" &&
    cp "$warn" "$d/a.onnx" && cp "$ok" "$d/a/x.onnx" && cp "$broken" "$d/b/c/y.onnx" &&
    cp "$ok" "$d/z.onnx" && ln -s "$d/z.onnx" "$d/link.onnx" && ln -s "$d/b" "$d/linkdir" &&
    ln "$d/z.onnx" "$d/b/zz-hard.onnx" && echo text > "$d/readme.txt" ||
    fail "cannot set up the folder"
# Sorted by path byte by byte: '.' (0x2e) sorts before '/' (0x2f), so
# d/a.onnx comes before d/a/x.onnx; the hard link d/b/zz-hard.onnx sorts
# before d/z.onnx, so it is the one kept.
order="[\"$d/a.onnx\", \"$d/a/x.onnx\", \"$d/b/c/y.onnx\", \"$d/b/zz-hard.onnx\"]"
run_oac 1 --format=json "$d"
expect_eq "folder: models in sorted order" "$(json '[m["model"]["path"] for m in r]' "$out")" "$order"
expect_eq "folder: statuses" "$(json '[m["status"] for m in r]' "$out")" '["ok", "ok", "error", "ok"]'
# The same order as find | sort, less the symlinks and the second name.
found=$(cd "$tmp" && find d -name '*.onnx' -type f | LC_ALL=C sort | grep -v 'd/z.onnx' | tr '\n' ' ')
expect_eq "folder order as find | sort" "$found" "d/a.onnx d/a/x.onnx d/b/c/y.onnx d/b/zz-hard.onnx "
# A folder in argument order; a file named and found is checked once.
run_oac 1 --format=json "$d/a.onnx" "$d/b/" "$ok"
expect_eq "folder among files" "$(json '[m["model"]["path"] for m in r]' "$out")" \
    "[\"$d/a.onnx\", \"$d/b/c/y.onnx\", \"$d/b/zz-hard.onnx\", \"$ok\"]"
run_oac 0 "$d/a"
expect_eq "a folder of clean models" "$(grep -c "(status: ok)" "$out")" 1
# Exit status as for several models: the highest.
run_oac 0 "$d/a" "$d/z.onnx"
printf 'junk' > "$d/a/garbage.onnx"
run_oac 2 "$d/a"
grep -q "garbage.onnx: error: .*\[parse-error\]" "$out" || fail "a bad model in a folder has no report"
rm -f "$d/a/garbage.onnx"
usage_says "no *.onnx model in this folder or below" "$d/empty"
usage_says "no *.onnx model in this folder or below" "$d/empty" "$ok"
usage_says "'run' takes one model file, not a folder" run "$d"
usage_says "'annotate' takes one model file, not a folder" annotate -o "$tmp/o.onnx" "$d"
# Depth is bounded: 33 nested folders are refused, 32 are searched.
deep="$tmp/deep"
p="$deep"
i=0
while [ $i -lt 32 ]; do p="$p/l"; i=$((i + 1)); done
mkdir -p "$p" && cp "$ok" "$p/m.onnx" || fail "cannot make the deep folders"
run_oac 0 "$deep"
mkdir "$p/l" && cp "$ok" "$p/l/m.onnx" || fail "cannot make the 33rd folder"
usage_says "deeper than 32 levels" "$deep"

# ---- run: every missing dimension in one message ----------------------------
# dense_cache's inputs: cache [2, batch, heads, max_length, head_size] and
# values [2, batch, heads, new_length, head_size] (examples/models.c).
usage_says "5 dimensions are unknown: batch, heads, max_length, head_size, new_length" run "$ok"
grep -qF -- "give --dim batch=N --dim heads=N --dim max_length=N --dim head_size=N --dim new_length=N" "$err" ||
    fail "run: the --dim to give: $(cat "$err")"
expect_eq "one line" "$(wc -l < "$err")" 1
usage_says "dimension 'new_length' of input 'values' is unknown (give --dim new_length=N)" \
    run --dim batch=1 --dim heads=2 --dim max_length=8 --dim head_size=4 "$ok"
run_oac 0 run --dim batch=1 --dim heads=2 --dim max_length=8 --dim head_size=4 --dim new_length=1 "$ok"

finish
