#!/bin/sh
# readme_examples.sh: every command README.md shows with its output ("$ "
# lines in an indented block) prints that output today
# (tests/readme_examples.py; `--print` there shows what they print now).
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON3:?}"
[ "$PYTHON3" != no ] || { echo "SKIP: no python3"; exit 77; }
exec "$PYTHON3" "$top_srcdir/tests/readme_examples.py" "$top_srcdir/README.md" "$top_builddir"
