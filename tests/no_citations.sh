#!/bin/sh
# no_citations.sh: no user-facing text (messages, help, --explain, the man
# page, README, docs, schema descriptions, scripts' output) cites a
# contract section or an issue number (tests/no_citations.py).
: "${top_srcdir:?}" "${OAC:?}" "${PYTHON3:?}"
[ "$PYTHON3" != no ] || { echo "SKIP: no python3"; exit 77; }
exec "$PYTHON3" "$top_srcdir/tests/no_citations.py" "$top_srcdir" "$OAC"
