#!/bin/sh
# consistency.sh: the tables agree with what users and tests see
# (style guide, "Tables, not scattered ifs"; contract, sections 3 and 5).
#
#  - every code of include/oac_diag.def is in the man page, is exactly the
#    schema's diagnostic code enum, and is exercised by at least one test
#    under tests/ (by its name or its OAC_ identifier) other than this one;
#  - every option of src/cli_opts.def is in the man page and in --help.
#
# Adding a code or an option without its documentation and test fails here.
set -u
: "${top_srcdir:?}" "${OAC:?}" "${PYTHON3:?}"

def="$top_srcdir/include/oac_diag.def"
opts="$top_srcdir/src/cli_opts.def"
man="$top_srcdir/man/onnx-alias-check.1"
schema="$top_srcdir/schemas/report.schema.json"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fail=0

# The man page with roff's escaped hyphens made plain.
sed 's/\\-/-/g' "$man" > "$tmp/man" || exit 99
"$OAC" --help > "$tmp/help" || { echo "FAIL: --help exits non-zero"; exit 1; }

# Rows start at column 0; the usage line in the file's comment does not.
sed -n 's/^OAC_DIAG(\([A-Z_0-9]*\), *"\([a-z-]*\)".*/\1 \2/p' "$def" > "$tmp/codes"
n=$(wc -l < "$tmp/codes")
[ "$n" -ge 28 ] || { echo "FAIL: only $n codes read from $def"; exit 1; }

while read -r ident code; do
    grep -qF -- "$code" "$tmp/man" || { echo "FAIL: code $code missing from the man page"; fail=1; }
    found=no
    for t in "$top_srcdir"/tests/*; do
        [ -f "$t" ] || continue
        case $t in */consistency.sh) continue ;; esac
        # The code as a whole word (not a prefix of a longer code), or
        # its identifier in C tests.
        if grep -qE -e "(^|[^a-z-])$code([^a-z-]|\$)" -e "OAC_$ident([^A-Z_0-9]|\$)" -- "$t"; then
            found=yes
            break
        fi
    done
    [ $found = yes ] || { echo "FAIL: no test under tests/ exercises $code"; fail=1; }
done < "$tmp/codes"

cut -d' ' -f2 "$tmp/codes" | sort > "$tmp/codes.sorted"
"$PYTHON3" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print("\n".join(sorted(s["$defs"]["code"]["enum"])))' "$schema" > "$tmp/enum" ||
    { echo "FAIL: cannot read the code enum of $schema"; exit 1; }
if ! diff -u "$tmp/codes.sorted" "$tmp/enum"; then
    echo "FAIL: the schema's code enum differs from $def (diff above)"
    fail=1
fi

sed -n 's/^CLI_OPT([A-Z_]*, *"\([a-z-]*\)", *\([^,]*\),.*/\1 \2/p' "$opts" > "$tmp/opts"
n=$(wc -l < "$tmp/opts")
[ "$n" -ge 11 ] || { echo "FAIL: only $n options read from $opts"; exit 1; }
while read -r long short; do
    grep -qF -- "--$long" "$tmp/man" || { echo "FAIL: --$long missing from the man page"; fail=1; }
    grep -qF -- "--$long" "$tmp/help" || { echo "FAIL: --$long missing from --help"; fail=1; }
    case $short in
    "'"?"'")
        s=$(printf '%s' "$short" | tr -d "'")
        grep -qF -- "-$s" "$tmp/man" || { echo "FAIL: -$s missing from the man page"; fail=1; }
        grep -qF -- "-$s, --$long" "$tmp/help" || { echo "FAIL: -$s missing from --help"; fail=1; }
        ;;
    esac
done < "$tmp/opts"

exit $fail
