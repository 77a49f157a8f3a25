#!/bin/sh
# examples_check.sh: `check` reports exactly the codes the example table
# expects.  For every row of examples/models.c (listed by gen_examples
# --list), the generated examples/<name>.onnx is checked; the set of
# codes in the text report (one "[code]" per diagnostic line) must equal
# the row's list, and the exit status must be 1 when an error is
# expected, else 0.  This is the end-to-end form of the table: each
# broken twin triggers its code, each valid model is clean.
set -u
: "${top_builddir:?}" "${OAC:?}"
gen="$top_builddir/examples/gen_examples"
dir="$top_builddir/examples"
list=$("$gen" --list) || { echo "gen_examples --list failed" >&2; exit 1; }
fail=0
# The contract's only warning codes; every other code is an error.
errors_of() {   # codes of error severity in a code list
    for c in $(echo "$1" | tr ',' ' '); do
        case $c in alias-implied|metadata-alias|cache-copied|config-no-sharing) ;;
        *) echo "$c" ;; esac
    done
}
while read -r name codes; do
    [ "$codes" = "-" ] && codes=
    out=$("$OAC" check "$dir/$name.onnx" 2>/dev/null)
    rc=$?
    # "[unchecked]" notes are the analysis's undecided rules, no code.
    got=$(printf '%s\n' "$out" | sed -n 's/.*: \(error\|warning\|note\): .* \[\([a-z0-9-]*\)\]$/\2/p' |
          grep -vx unchecked | sort -u | paste -sd, -)
    want=$(echo "$codes" | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -)
    want_rc=0
    [ -n "$(errors_of "$codes")" ] && want_rc=1
    if [ "$got" != "$want" ] || [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL $name: codes [$got] exit $rc, expected [$want] exit $want_rc"
        printf '%s\n' "$out" | sed 's/^/    /'
        fail=1
    else
        echo "ok   $name: [$want] exit $rc"
    fi
done <<EOF
$list
EOF
exit $fail
