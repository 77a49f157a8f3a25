#!/usr/bin/python3
"""validate_report.py: real reports against schemas/report.schema.json.

Contract, section 4 (the report and its schema) and section 5 (SARIF).

    validate_report.py            sweep: every example model the build wrote
                                  and every model of tests/cli_models
                                  (check, JSON, one by one and as one array),
                                  unreadable files, and SARIF structure
    validate_report.py FILE...    validate report files (e.g. of `run`)

Besides the schema, checks what a schema cannot say: summary counts equal
the diagnostics, exit status agrees with the status, an alias class's root
is its first member, SARIF results mirror the JSON diagnostics, every
`location` resolves in the model over proto field names and names the node
it goes through (`#<index>` when unnamed).  A few
deliberately broken reports must fail the schema, so it cannot be vacuous.
Exit status: 0 pass, 1 fail, 77 skip (no examples built).
"""
import atexit
import copy
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from jsonschema import Draft202012Validator

# Run by the test harness (which sets these) or by hand on report files.
SRC = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("top_builddir", ".")
OAC = os.environ.get("OAC", os.path.join(BUILD, "src", "onnx-alias-check"))
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL: " + msg)


def load_validator():
    with open(os.path.join(SRC, "schemas", "report.schema.json")) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def codes_table():
    with open(os.path.join(SRC, "include", "oac_diag.def")) as f:
        return re.findall(r'^OAC_DIAG\(\w+,\s*"([a-z-]+)",\s*(\w+)', f.read(), re.M)


def oac(*args):
    p = subprocess.run([OAC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check_semantics(what, r, exit_status=None):
    """Rules of contract 4 the schema does not express."""
    sev = [d["severity"] for d in r["diagnostics"]]
    for key, name in (("errors", "error"), ("warnings", "warning"), ("notes", "note")):
        if r["summary"][key] != sev.count(name):
            fail("%s: summary.%s is %d, diagnostics have %d"
                 % (what, key, r["summary"][key], sev.count(name)))
    if r["summary"]["errors"] and r["status"] != "error":
        fail("%s: errors but status %s" % (what, r["status"]))
    # Contract 12: a code is omitted only past 1,000 listed of it.
    for code, n in r["summary"]["omitted"].items():
        listed = sum(d["code"] == code for d in r["diagnostics"])
        if listed != 1000:
            fail("%s: %d %s omitted but %d listed, not 1000" % (what, n, code, listed))
    for c in r["alias_classes"]:
        if c["members"][0] != c["root"]:
            fail("%s: class %s does not start with its root" % (what, c["root"]))
    if exit_status is not None:
        unreadable = any(d["code"] == "parse-error" for d in r["diagnostics"])
        want = 2 if unreadable else (1 if r["status"] == "error" else 0)
        if exit_status != want:
            fail("%s: exit status %d for status %s" % (what, exit_status, r["status"]))


# Fields the contract adds (numbers from 1001), unknown to Debian's onnx:
# a pointer may end in them, below them the walk cannot follow.
CONTRACT_FIELDS = {"output_alias", "access", "alias_of", "quantizations",
                   "quantized_tensor_type", "quantized_tensor_values", "value_type"}
# ONNX fields newer than Debian's onnx 1.12 (IR 10): the walk stops there too.
NEWER_FIELDS = {"metadata_props", "value_info", "overload"}


def check_locations(what, model_path, r):
    """Contract 4: `location` is an RFC 6901 pointer over proto field names
    with 0-based indices; it must resolve in the model, and a diagnostic
    pointing at a node's output_alias names that node (#<index> unnamed).
    (Other pointers may lead elsewhere: alias-root-immutable points at the
    root, which a Constant node may produce, and names the updating node.)"""
    try:
        import onnx
        m = onnx.ModelProto()
        with open(model_path, "rb") as f:
            m.ParseFromString(f.read())
    except Exception:   # no onnx module, or not a model: nothing to walk
        return
    for d in r["diagnostics"]:
        loc = d.get("location")
        if loc is None:
            continue
        if loc and not loc.startswith("/"):
            fail("%s: %s location %r is not a pointer" % (what, d["code"], loc))
            continue
        segs = [x.replace("~1", "/").replace("~0", "~") for x in loc.split("/")[1:]]
        cur, node_name, i, at_alias = m, None, 0, False
        while i < len(segs):
            name = segs[i]
            if name in CONTRACT_FIELDS:
                at_alias = name == "output_alias"
                break
            field = cur.DESCRIPTOR.fields_by_name.get(name)
            if field is None and name in NEWER_FIELDS:
                break
            if field is None:
                fail("%s: %s location %s: no field %r" % (what, d["code"], loc, name))
                break
            val = getattr(cur, name)
            if field.label == field.LABEL_REPEATED:
                if i + 1 >= len(segs) or not segs[i + 1].isdigit() or int(segs[i + 1]) >= len(val):
                    fail("%s: %s location %s: bad index after %r" % (what, d["code"], loc, name))
                    break
                idx = int(segs[i + 1])
                val = val[idx]
                if name == "node":
                    node_name = val.name or "#%d" % idx
                i += 2
            else:
                i += 1
            if field.message_type is None:
                if i < len(segs):
                    fail("%s: %s location %s: %r is not a message" % (what, d["code"], loc, name))
                break
            cur = val
        if at_alias and node_name is not None and d.get("node") != node_name:
            fail("%s: %s at %s names node %r, the pointer's node is %r"
                 % (what, d["code"], loc, d.get("node"), node_name))


def validate(v, what, doc):
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
    for e in errs[:5]:
        fail("%s: %s at /%s" % (what, e.message, "/".join(map(str, e.path))))
    return not errs


def schema_not_vacuous(v, good):
    """Each mutation breaks a rule of the contract; the schema must say so."""
    def mutate(fn):
        r = copy.deepcopy(good)
        fn(r)
        return r
    bad = {
        "missing memory_plan": mutate(lambda r: r.pop("memory_plan")),
        "unknown code": mutate(lambda r: r["diagnostics"].append(
            {"code": "no-such-code", "severity": "error", "message": "m"})),
        "bad severity": mutate(lambda r: r["diagnostics"].append(
            {"code": "alias-cycle", "severity": "fatal", "message": "m"})),
        "status ok with errors": mutate(lambda r: (r["summary"].update(errors=1),
                                                   r.update(status="ok"))),
        "string bytes": mutate(lambda r: r["memory_plan"].update(peak_bytes="12")),
        "missing opset_import": mutate(lambda r: r["model"].pop("opset_import")),
    }
    for name, doc in bad.items():
        if v.is_valid(doc):
            fail("schema accepts a report with " + name)


def check_sarif(paths, reports, codes):
    rc, out, _ = oac("--format=sarif", *paths)
    try:
        s = json.loads(out)
    except ValueError as e:
        fail("SARIF is not JSON: %s" % e)
        return
    if s.get("version") != "2.1.0" or "sarif-2.1.0" not in s.get("$schema", ""):
        fail("SARIF version/$schema wrong")
    if len(s.get("runs", [])) != 1:
        fail("SARIF must have exactly one run")
        return
    run = s["runs"][0]
    driver = run["tool"]["driver"]
    if driver.get("name") != "onnx-alias-check" or not driver.get("version"):
        fail("SARIF driver name/version wrong")
    rule_ids = [rule["id"] for rule in driver["rules"]]
    if rule_ids != [c for c, _ in codes]:
        fail("SARIF rules are not the codes of oac_diag.def")
    want = []
    for p, r in zip(paths, reports):
        p = os.path.relpath(p) if not os.path.relpath(p).startswith("..") else os.path.abspath(p)
        want += [(p, d["code"], d["severity"], d["message"]) for d in r["diagnostics"]]
    got = []
    base = run.get("originalUriBaseIds", {}).get("%SRCROOT%", {}).get("uri", "")
    for res in run["results"]:
        loc = res["locations"][0]
        al = loc["physicalLocation"]["artifactLocation"]
        # A path under the working directory is relative to %SRCROOT%,
        # any other an absolute file:// URI: map both back to the path.
        uri = al["uri"]
        if al.get("uriBaseId") == "%SRCROOT%":
            uri = os.path.relpath(os.path.join(base[len("file://"):], uri))
        elif uri.startswith("file://"):
            uri = uri[len("file://"):]
        got.append((uri, res["ruleId"], res["level"], res["message"]["text"]))
        if rule_ids[res["ruleIndex"]] != res["ruleId"]:
            fail("SARIF ruleIndex disagrees with ruleId %s" % res["ruleId"])
        for ll in loc.get("logicalLocations", []):
            if ll["kind"] not in ("module", "function", "variable") or not ll.get("name"):
                fail("SARIF logical location %r" % ll)
    if got != want:
        fail("SARIF results differ from the JSON diagnostics (%d vs %d)" % (len(got), len(want)))
    # The official SARIF 2.1.0 schema and code scanning's needs (issue 13).
    sys.path.insert(0, os.path.join(SRC, "tests"))
    import sarif_check
    for msg in sarif_check.check(s, "SARIF of %d models" % len(paths)):
        fail(msg)


def sweep(v):
    models = sorted(glob.glob(os.path.join(BUILD, "examples", "*.onnx")))
    # The models of tests/cli_models too, when it was built.
    gen = os.path.join(BUILD, "tests", "cli_models")
    extra = tempfile.mkdtemp(prefix="validate_report.")
    atexit.register(shutil.rmtree, extra, True)
    if models and os.access(gen, os.X_OK):
        if subprocess.run([gen, extra]).returncode == 0:
            models += sorted(glob.glob(os.path.join(extra, "*.onnx")))
        else:
            fail("tests/cli_models failed")
    if not models:
        print("SKIP: no example models in %s/examples" % BUILD)
        return 77
    codes = codes_table()
    reports = []
    for m in models:
        rc, out, err = oac("--format=json", m)
        try:
            r = json.loads(out)
        except ValueError:
            fail("%s: not JSON (exit %d, stderr %s)" % (m, rc, err.strip()))
            continue
        if validate(v, m, r):
            check_semantics(m, r, rc)
            if r["model"]["path"] != m or r["model"]["ir_version"] is None:
                fail("%s: model.path/ir_version wrong" % m)
            check_locations(m, m, r)
        reports.append(r)
    if reports:
        schema_not_vacuous(v, reports[0])

    # Unreadable files: every required key, nulls and empty lists.
    garbage = os.path.join(BUILD, "tests", "validate_report.garbage.onnx")
    with open(garbage, "wb") as f:
        f.write(b"\x0a\xff\xff\xff\xff\x0f not ONNX")
    missing = os.path.join(BUILD, "tests", "no-such-model.onnx")
    for bad in (garbage, missing):
        rc, out, _ = oac("--format=json", bad)
        r = json.loads(out)
        if validate(v, bad, r):
            check_semantics(bad, r, rc)
            if r["model"] != {"path": bad, "ir_version": None, "opset_import": []}:
                fail("%s: model object %r" % (bad, r["model"]))
            if any(x is not None for x in r["memory_plan"].values()) or r["alias_classes"]:
                fail("%s: memory_plan not all null or classes not empty" % bad)
            if r["diagnostics"][0]["code"] != "parse-error":
                fail("%s: first diagnostic is not parse-error" % bad)

    # Several models: one array in argument order, the unreadable one in it.
    paths = models + [garbage]
    rc, out, _ = oac("--format=json", *paths)
    arr = json.loads(out)
    if validate(v, "array report", arr):
        if [r["model"]["path"] for r in arr] != paths:
            fail("array report not in argument order")
        if rc != 2:
            fail("array report with an unreadable model exited %d" % rc)
    check_sarif(paths, arr, codes)
    os.unlink(garbage)
    return 0


def main():
    v = load_validator()
    if len(sys.argv) > 1:
        for path in sys.argv[1:]:
            with open(path) as f:
                doc = json.load(f)
            if validate(v, path, doc):
                for r in doc if isinstance(doc, list) else [doc]:
                    check_semantics(path, r)
        rc = 0
    else:
        rc = sweep(v)
    if FAILURES:
        print("%d failure(s)" % len(FAILURES))
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
