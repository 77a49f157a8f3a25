#!/bin/sh
# consistency.sh: the tables agree with what users and tests see
# (style guide, "Tables, not scattered ifs"; contract, sections 3 and 5).
#
#  - the man page's DIAGNOSTICS section lists exactly the codes of
#    include/oac_diag.def, each once and with its severity;
#  - the schema's diagnostic code enum is exactly those codes;
#  - every code has a triggering row, WANT(OAC_X), and a clean near-miss
#    row, NEAR(OAC_X), in the case tables of the Check programs (read by
#    tests/case_rows.py: table rows only, never comments or free text);
#  - every option of src/cli_opts.def is in the man page and in --help;
#  - annotate's refusal reasons (include/oac_annotate.def) are exactly the
#    reasons the man page's ANNOTATE section lists and the reason enum of
#    schemas/annotate.schema.json.
#
# Adding a code or an option without its documentation and tests fails
# here (HACKING.md, "Tests").
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

# The man page's DIAGNOSTICS section: each code is a ".B code" tag of a
# ".TP" paragraph, followed by "(severity) meaning".
sed -n '/^\.SH DIAGNOSTICS/,/^\.SH /p' "$tmp/man" | awk '
    prev == ".TP" && $1 == ".B" { code = $2; getline; sev = $1
                                  gsub(/[()]/, "", sev); print code, sev }
    { prev = $0 }' | sort > "$tmp/man_codes"
sed -n 's/^OAC_DIAG([A-Z_0-9]*, *"\([a-z-]*\)", *\([A-Z]*\).*/\1 \2/p' "$def" |
    tr 'A-Z' 'a-z' | sort > "$tmp/def_codes"
if ! diff -u "$tmp/def_codes" "$tmp/man_codes"; then
    echo "FAIL: the man page's DIAGNOSTICS section differs from $def (codes and severities; diff above)"
    fail=1
fi

# The case tables.
"$PYTHON3" "$top_srcdir/tests/case_rows.py" "$top_srcdir" > "$tmp/rows" || {
    grep '^FAIL' "$tmp/rows"; fail=1; }
n=$(grep -c '^WANT\|^NEAR' "$tmp/rows")
[ "$n" -ge 50 ] || { echo "FAIL: only $n case rows read from tests/check_*.c"; exit 1; }
while read -r ident code; do
    for kind in WANT NEAR; do
        grep -q "^$kind OAC_$ident " "$tmp/rows" ||
            { echo "FAIL: no $kind(OAC_$ident) row for $code in the case tables of tests/check_*.c"; fail=1; }
    done
done < "$tmp/codes"
# Rows name codes of the table only.
cut -d' ' -f2 "$tmp/rows" | grep '^OAC_' | sort -u | while read -r ident; do
    grep -q "^${ident#OAC_} " "$tmp/codes" ||
        { echo "FAIL: a case row names $ident, which is no code of $def"; exit 1; }
done || fail=1

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

# annotate's refusal reasons: ".TP" / ".B reason" paragraphs of ANNOTATE.
sed -n 's/^OAC_REFUSAL([A-Z_]*, *"\([a-z-]*\)".*/\1/p' "$top_srcdir/include/oac_annotate.def" |
    sort > "$tmp/reasons"
[ "$(wc -l < "$tmp/reasons")" -ge 8 ] || { echo "FAIL: too few reasons read from include/oac_annotate.def"; exit 1; }
sed -n '/^\.SH ANNOTATE/,/^\.SH OUTPUT/p' "$tmp/man" |
    awk 'prev == ".TP" && $1 == ".B" { print $2 } { prev = $0 }' | sort > "$tmp/man_reasons"
if ! diff -u "$tmp/reasons" "$tmp/man_reasons"; then
    echo "FAIL: the man page's ANNOTATE reasons differ from include/oac_annotate.def (diff above)"
    fail=1
fi
"$PYTHON3" -c '
import json, sys
s = json.load(open(sys.argv[1]))
print("\n".join(sorted(s["$defs"]["reason"]["enum"])))' "$top_srcdir/schemas/annotate.schema.json" \
    > "$tmp/schema_reasons" || { echo "FAIL: cannot read the reason enum of annotate.schema.json"; exit 1; }
if ! diff -u "$tmp/reasons" "$tmp/schema_reasons"; then
    echo "FAIL: annotate.schema.json's reason enum differs from include/oac_annotate.def (diff above)"
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
