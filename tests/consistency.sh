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
#  - lib/rules.def (each code's documentation) has one row per code of
#    include/oac_diag.def, in its order, and no other row;
#  - --list-rules (text and JSON), --explain and the SARIF rules list the
#    same codes and severities as the table and the man page, with the
#    table's meaning, a help and why for every code, and SARIF's help.text
#    is what --explain prints;
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

# lib/rules.def: the same identifiers, in the same order.
sed -n 's/^OAC_RULE(\([A-Z_0-9]*\),.*/\1/p' "$top_srcdir/lib/rules.def" > "$tmp/rule_ids"
cut -d' ' -f1 "$tmp/codes" > "$tmp/code_ids"
if ! diff -u "$tmp/code_ids" "$tmp/rule_ids"; then
    echo "FAIL: lib/rules.def's rows differ from $def's codes (identifiers, in order; diff above)"
    fail=1
fi

# --list-rules, --explain and the SARIF rules against the table (code
# and severity, as the man page above) and against each other.
"$OAC" --list-rules > "$tmp/list" || { echo "FAIL: --list-rules exits non-zero"; fail=1; }
# After the codes, one row `unchecked -` (the reports' unchecked entries:
# no code, no severity, but listed and explained like one).
tail -n 1 "$tmp/list" | grep -q '^unchecked  *-  *[a-z]' ||
    { echo "FAIL: --list-rules does not end with unchecked: $(tail -n 1 "$tmp/list")"; fail=1; }
sed '$d' "$tmp/list" | awk '{ print $1, $2 }' | sort > "$tmp/list_codes"
if ! diff -u "$tmp/def_codes" "$tmp/list_codes"; then
    echo "FAIL: --list-rules differs from $def (codes and severities; diff above)"
    fail=1
fi
"$OAC" --list-rules --format=json > "$tmp/list.json" ||
    { echo "FAIL: --list-rules --format=json exits non-zero"; fail=1; }
"$OAC" --format=sarif "$tmp/no-such-model.onnx" > "$tmp/rules.sarif"
for c in $(cut -d' ' -f2 "$tmp/codes"); do
    "$OAC" --explain "$c" > "$tmp/explain.$c" || { echo "FAIL: --explain $c exits non-zero"; fail=1; }
done
"$PYTHON3" - "$def" "$tmp/list.json" "$tmp/rules.sarif" "$tmp" <<'PY' || fail=1
import json, re, sys
table = re.findall(r'^OAC_DIAG\(\w+,\s*"([a-z-]+)",\s*(\w+),\s*"((?:[^"\\]|\\.)*)"\)',
                   open(sys.argv[1]).read(), re.M)
want = [(c, s.lower(), m) for c, s, m in table]
bad = 0
def fail(msg):
    global bad
    print("FAIL: " + msg)
    bad = 1
rules = json.load(open(sys.argv[2]))
if rules[-1]["code"] != "unchecked" or rules[-1]["severity"] is not None:
    fail("--list-rules --format=json does not end with unchecked (severity null)")
rules = rules[:-1]
if [(r["code"], r["severity"], r["meaning"]) for r in rules] != want:
    fail("--list-rules --format=json: codes, severities or meanings differ from oac_diag.def")
for r in rules:
    for k in ("why", "help"):
        if not r.get(k):
            fail("--list-rules: %s has no %s" % (r["code"], k))
    if not r["examples"].get("wrong") or not r["examples"].get("right"):
        fail("--list-rules: %s lacks an example" % r["code"])
sarif = json.load(open(sys.argv[3]))["runs"][0]["tool"]["driver"]["rules"]
if [(r["id"], r["defaultConfiguration"]["level"]) for r in sarif] != [w[:2] for w in want]:
    fail("SARIF rules differ from oac_diag.def (ids, levels, order)")
for r, w in zip(sarif, rules):
    explain = open("%s/explain.%s" % (sys.argv[4], r["id"])).read()
    if r["help"]["text"] != explain:
        fail("SARIF rule %s: help.text is not what --explain prints" % r["id"])
    if not explain.startswith("%s (%s): " % (w["code"], w["severity"])) or w["help"][1:] not in explain:
        fail("--explain %s does not open with the code and severity or lacks its help" % r["id"])
    if r["shortDescription"]["text"] != w["meaning"] or w["why"][1:] not in r["fullDescription"]["text"]:
        fail("SARIF rule %s: descriptions are not the table's" % r["id"])
    if "```" not in r["help"]["markdown"]:
        fail("SARIF rule %s: help.markdown has no example block" % r["id"])
sys.exit(bad)
PY

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
