#!/bin/sh
# op_names.sh: operator knowledge lives in the operator table (issue 9,
# item 3; style guide, "Tables, not scattered ifs").
#
# Fails when an operator name of lib/ops.def (any row's op_type), as a C
# string literal "Name", appears in a lib/ file other than ops.def,
# ops.c and the kernel file that defines that operator's kernel function
# (a kernel's messages may name its own operator).  A pass that needs to
# know which operator a node is reads the node's row (oac_node.op, or
# oac_op_find and the row's id or flags).
#
# The check proves itself on a copy of lib/: a name planted in a pass
# must be caught, one planted in its own kernel's file must not, and one
# planted in another kernel's file must.
#
# Usage: op_names.sh [LIB_DIR]   (default "$top_srcdir/lib")
set -u

# The rows of ops.def as "OP_TYPE KERNEL_FUNCTION" ("-": no kernel),
# comments removed, one row per OAC_OP( at the start of a line.
rows_of() {
    awk '
    { text = text $0 "\n" }
    END {
        while ((i = index(text, "/*")) > 0) {
            rest = substr(text, i + 2)
            j = index(rest, "*/")
            if (j == 0) { text = substr(text, 1, i - 1); break }
            text = substr(text, 1, i - 1) substr(rest, j + 2)
        }
        n = split(text, parts, "\nOAC_OP[(]")
        for (k = 2; k <= n; k++) {
            p = parts[k]
            if (!match(p, /"[^"]*"[ \t\n]*,[ \t\n]*"[^"]*"/))
                continue
            name = substr(p, RSTART, RLENGTH)
            sub(/^"[^"]*"[ \t\n]*,[ \t\n]*"/, "", name)
            sub(/"$/, "", name)
            kern = "-"
            if (match(p, /\.kernel[ \t\n]*=[ \t\n]*[A-Za-z0-9_]+/)) {
                kern = substr(p, RSTART, RLENGTH)
                sub(/^.*=[ \t\n]*/, "", kern)
            }
            print name, kern
        }
    }' "$1"
}

# Print each violation in lib directory $1; exit status 1 when any.
check_lib() {
    lib=$1
    def="$lib/ops.def"
    [ -f "$def" ] || { echo "op_names.sh: no $def" >&2; return 2; }
    rows=$(rows_of "$def")
    want=$(grep -c '^OAC_OP(' "$def")
    got=$(printf '%s\n' "$rows" | grep -c .)
    if [ "$want" -lt 10 ] || [ "$got" -ne "$want" ]; then
        echo "op_names.sh: read $got of $want rows of $def" >&2
        return 2
    fi
    bad=0
    while read -r name kern; do
        own=
        if [ "$kern" != - ]; then
            own=$(grep -rl --include='*.c' "^int $kern(" "$lib" | sort | head -n 1)
            if [ -z "$own" ]; then
                echo "op_names.sh: no file of lib/ defines $kern ($name)" >&2
                return 2
            fi
        fi
        for f in $(find "$lib" \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort); do
            case $f in */ops.def|*/ops.c) continue ;; esac
            [ "$f" = "$own" ] && continue
            if grep -nF -- "\"$name\"" "$f" > /dev/null; then
                grep -nF -- "\"$name\"" "$f" | sed "s|^|${f#"$lib"/}:|; s|\$|  (\"$name\" outside its row)|"
                bad=1
            fi
        done
    done <<EOF
$rows
EOF
    return $bad
}

if [ $# -gt 0 ]; then
    check_lib "$1"
    exit $?
fi

: "${top_srcdir:?}"
check_lib "$top_srcdir/lib"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: quoted operator names in lib/ (above)"; exit 1; }

# Self-test on a copy: each plant must be judged as the rule says.
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
plant() {   # plant FILE NAME EXPECTED_RC
    rm -rf "$tmp/lib" && cp -R "$top_srcdir/lib" "$tmp/lib" || exit 99
    printf 'static const char *planted = "%s";\n' "$2" >> "$tmp/lib/$1"
    check_lib "$tmp/lib" > /dev/null 2>&1
    got=$?
    if [ $got -ne "$3" ]; then
        echo "FAIL: \"$2\" planted in lib/$1: status $got, expected $3"
        exit 1
    fi
}
plant check/shapes.c Relu 1               # a pass naming an operator
plant run/control.c If 0         # the If kernel's own file
plant kernels/math.c Concat 1        # Concat's kernel is kernels/shape.c's
plant kernels/shape.c Concat 0
plant run/kernel_api.h CacheUpdate 1       # headers too
plant check/graph.c Reluctant 0           # not an operator name
exit 0
