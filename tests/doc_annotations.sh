#!/bin/sh
# doc_annotations.sh: doc/annotations.md, the page for model builders,
# agrees with proto/onnx.proto (field numbers), lib/ops.def (operators and
# their pairs) and include/oac_diag.def (codes), and its Python and
# text-form examples build models the tool reports as the page says
# (tests/doc_annotations.py).
set -u
: "${top_srcdir:?}" "${OAC:?}" "${PYTHON3:?}"
exec "$PYTHON3" "$top_srcdir/tests/doc_annotations.py" "$top_srcdir" "$OAC" "${PROTOC_C:-protoc-c}"
