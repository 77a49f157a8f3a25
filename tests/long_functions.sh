#!/bin/sh
# long_functions.sh: functions short enough to read whole (style guide:
# none over 150 lines).
#
# Counts the lines of every function defined in the .c and .h files of
# lib/ and src/, from the line that names it to its closing brace (the
# house style: the body's braces alone at the start of a line), and
# fails on each one over 150 lines that its file does not name as an
# exception.  A file names an exception in its top comment (the comment
# before its first line of code), on a line
#
#     Over 150 lines: NAME[, NAME...] (why it cannot be cut)
#
# as model/decode.c does for its decoder's state machine.  Prints one
# line per long function, FILE:LINE: NAME N lines, then a count of the
# long functions, the excepted ones among them, and exit status 1 when
# any is not excepted.
#
# The script proves itself on a copy of the tree: a planted function of
# 151 lines must be caught, one of 150 must not, and the 151-line one
# named in its file's top comment must not.
#
# Usage: long_functions.sh [TOP_SRCDIR]   (default "$top_srcdir")
#        long_functions.sh --list [TOP_SRCDIR]   every long function,
#        excepted or not, status 0
set -u

LIMIT=150

# FILE... -> "FILE LINE NAME LINES EXCEPTED" for each function over LIMIT.
long_in() {
    awk -v limit="$LIMIT" '
    FNR == 1 { sig = ""; body = 0; top = 1; delete except }
    top && FNR > 1 && /\*\// { top = 0 }
    top && /Over 150 lines:/ {
        s = $0; sub(/.*Over 150 lines:[ \t]*/, "", s); sub(/\(.*/, "", s)
        n = split(s, w, /[ ,\t]+/)
        for (k = 1; k <= n; k++) if (w[k] != "") except[w[k]] = 1
    }
    !body && /^[A-Za-z_].*\(/ { sig = $0; at = FNR }
    !body && /^\{/ && sig != "" {
        body = 1
        s = sig; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/); name = w[n]
        next
    }
    body && /^\}/ {
        body = 0; len = FNR - at + 1; sig = ""
        if (len > limit) print FILENAME, at, name, len, (name in except) ? 1 : 0
    }' "$@"
}

# Print the long functions of tree $1; status 1 when one is not excepted.
check_tree() {
    files=$(find "$1/lib" "$1/src" \( -name '*.c' -o -name '*.h' \) | sort)
    [ -n "$files" ] || { echo "long_functions.sh: no sources under $1" >&2; return 2; }
    # shellcheck disable=SC2086
    long_in $files | awk -v top="$1/" -v list="$list" '
    { f = $1; sub("^" top, "", f)
      if ($5) { ex++; if (list) print f ":" $2 ": " $3 " " $4 " lines (named exception)" }
      else { bad++; print f ":" $2 ": " $3 " " $4 " lines" } ; n++ }
    END { printf "long_functions.sh: %d functions over %d lines, %d named exceptions\n",
                 n, 150, ex > "/dev/stderr"
          exit bad > 0 }'
}

list=
if [ "${1:-}" = --list ]; then list=1; shift; fi
if [ $# -gt 0 ]; then
    check_tree "$1"
    rc=$?
    [ -n "$list" ] && exit 0
    exit $rc
fi

: "${top_srcdir:?}"
check_tree "$top_srcdir"
rc=$?
[ -n "$list" ] && exit 0
[ $rc -eq 0 ] || { echo "FAIL: functions over $LIMIT lines in lib/ or src/ (above)"; exit 1; }

# Self-test on a copy: each plant must be judged as the rule says.
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
plant() {   # plant FILE LINES EXCEPT EXPECTED_RC
    rm -rf "$tmp/t" && mkdir "$tmp/t" &&
        cp -R "$top_srcdir/lib" "$top_srcdir/src" "$tmp/t/" || exit 99
    f="$tmp/t/$1"
    if [ "$3" = 1 ]; then
        { printf '/* planted.  Over 150 lines: planted_fn (a test)\n */\n'; cat "$f"; } > "$f.new" &&
            mv "$f.new" "$f" || exit 99
    fi
    {
        printf 'static int\nplanted_fn(int x)\n{\n'
        i=4; while [ $i -le "$2" ]; do printf '    x++;\n'; i=$((i + 1)); done
        printf '}\n'
    } >> "$f"
    check_tree "$tmp/t" > /dev/null 2>&1
    got=$?
    if [ $got -ne "$4" ]; then
        echo "FAIL: a $2-line function planted in $1 (exception $3): status $got, expected $4"
        exit 1
    fi
}
plant lib/check/graph.c 151 0 1
plant lib/check/graph.c 150 0 0
plant lib/check/graph.c 151 1 0
plant src/main.c 151 0 1
plant lib/ops.h 151 0 1
exit 0
