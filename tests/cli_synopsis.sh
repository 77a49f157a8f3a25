#!/bin/sh
# cli_synopsis.sh: `help COMMAND`, --help, the man page's SYNOPSIS and
# README's synopses agree with the options table (tests/cli_synopsis.py).
: "${top_srcdir:?}" "${OAC:?}" "${PYTHON3:?}"
[ "$PYTHON3" != no ] || { echo "SKIP: no python3"; exit 77; }
exec "$PYTHON3" "$top_srcdir/tests/cli_synopsis.py" "$top_srcdir" "$OAC"
