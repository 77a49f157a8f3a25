#!/usr/bin/python3
"""validate_annotate.py: annotate reports against schemas/annotate.schema.json.

    validate_annotate.py REPORT.json[:EXIT]...

Each file is one report of `onnx-alias-check annotate --format=json`,
optionally followed by the exit status the command had.  Besides the
schema (draft 2020-12; it refers to schemas/report.schema.json by its
$id), checks what a schema cannot say: summary counts equal the
diagnostics, the status is "ok" exactly when the exit status was 0, and
output.written agrees with the file being there.  A broken copy of the
first report must fail the schema, so it cannot be vacuous.  Exit status:
0 pass, 1 fail, 77 skip (no jsonschema).  The report schema is inlined
before validating, so any jsonschema with draft 2020-12 does.
"""
import copy
import json
import os
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:
    print("SKIP: python3 has no jsonschema")
    sys.exit(77)

SRC = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(name):
    with open(os.path.join(SRC, "schemas", name)) as f:
        return json.load(f)


def inline(annotate, report):
    """annotate with the report schema inlined under $defs/report_schema
    and every reference to it made local, so that any jsonschema (Debian's
    4.10 has no registry of other schemas) resolves it."""
    local = "#/$defs/report_schema"

    def refs(node, old):
        """node with each $ref that starts with old made to start at local."""
        if isinstance(node, dict):
            return {k: local + v[len(old):] if k == "$ref" and v.startswith(old)
                    else refs(v, old) for k, v in node.items()}
        if isinstance(node, list):
            return [refs(v, old) for v in node]
        return node

    out = refs(annotate, report["$id"] + "#")
    inner = {k: v for k, v in report.items() if k not in ("$id", "$schema")}
    out["$defs"]["report_schema"] = refs(inner, "#")
    return out


def main(args):
    report, annotate = load("report.schema.json"), load("annotate.schema.json")
    Draft202012Validator.check_schema(annotate)
    v = Draft202012Validator(inline(annotate, report))
    failures = []
    first = None
    for arg in args:
        path, _, code = arg.partition(":")
        with open(path) as f:
            r = json.load(f)
        first = first or r
        for e in v.iter_errors(r):
            failures.append(f"{path}: {e.json_path}: {e.message}")
        counts = {s: sum(d["severity"] == s[:-1] for d in r["diagnostics"])
                  for s in ("errors", "warnings", "notes")}
        if counts != {k: r["summary"][k] for k in counts}:
            failures.append(f"{path}: summary {r['summary']} but diagnostics count {counts}")
        if code and (r["status"] == "ok") != (code == "0"):
            failures.append(f"{path}: status {r['status']} with exit status {code}")
        out = r["output"]
        if out["written"] and not os.path.exists(out["path"]):
            failures.append(f"{path}: output.written but no {out['path']}")
    if first is not None:
        bad = copy.deepcopy(first)
        bad["pairs"].append({"past": "p", "present": "q", "node": None, "op_type": None,
                             "ports": None, "verdict": "refused", "reason": None,
                             "message": "m"})
        if v.is_valid(bad):
            failures.append("a refused pair without reason passes the schema")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
