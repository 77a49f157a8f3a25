#!/bin/sh
# cli_schema.sh: real reports of every example model and every model of
# tests/cli_models, of unreadable files and of several models at once
# validate against schemas/report.schema.json (draft 2020-12, with
# Debian's python3 + jsonschema), every diagnostic's location resolves in
# its model, and SARIF has the structure of contract 5.  The work is in
# validate_report.py.
: "${top_srcdir:?}" "${PYTHON3:?}"
"$PYTHON3" -c 'import jsonschema' 2>/dev/null ||
    { echo "SKIP: $PYTHON3 has no jsonschema"; exit 77; }
mkdir -p "${top_builddir:?}/tests" || exit 99
exec "$PYTHON3" "$top_srcdir/tests/validate_report.py"
