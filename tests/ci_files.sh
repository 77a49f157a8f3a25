#!/bin/sh
# ci_files.sh: the CI wiring files of issue 13, item 7, parsed and tried
# (tests/ci_files.py); "skipped" without Debian's python3-yaml.
: "${top_srcdir:?}" "${top_builddir:?}" "${PYTHON3:?}" "${OAC:?}"
[ "$PYTHON3" != no ] && "$PYTHON3" -c 'import yaml' 2>/dev/null ||
    { echo "SKIP: no python3-yaml for $PYTHON3"; exit 77; }
command -v git >/dev/null 2>&1 || { echo "SKIP: no git"; exit 77; }
exec "$PYTHON3" "$top_srcdir/tests/ci_files.py"
