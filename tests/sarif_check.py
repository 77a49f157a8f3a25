#!/usr/bin/python3
"""sarif_check.py: SARIF logs against the official SARIF 2.1.0 schema.

Issue 13, item 1.  tests/sarif-2.1.0.json is the schema as Microsoft's
SARIF Multitool ships it (npm @microsoft/sarif-multitool-linux 5.7.0,
sarif-sdk, MIT license), draft 2020-12, vendored so the test runs
offline.  Besides the schema, what GitHub code scanning needs and a
schema cannot say:

  - every rule has shortDescription, fullDescription, help.text,
    help.markdown and defaultConfiguration.level (GH2012);
  - tool.driver has informationUri, version and semanticVersion;
  - an artifact URI is relative with uriBaseId %SRCROOT% (defined in
    originalUriBaseIds as an absolute file:// URI ending in '/'), or an
    absolute URI (SARIF1004);
  - every result has partialFingerprints, unique within the log;
  - relatedLocations have ids and messages.

    sarif_check.py FILE...     exit 0 valid, 1 not
As a module: check(doc, what) -> list of failures.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_validator = None


def validator():
    global _validator
    if _validator is None:
        from jsonschema import Draft202012Validator
        with open(os.path.join(HERE, "sarif-2.1.0.json")) as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
        _validator = Draft202012Validator(schema)
    return _validator


def _uri_ok(al, bases, what, out):
    uri = al.get("uri", "")
    base = al.get("uriBaseId")
    absolute = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri) is not None
    if base is not None:
        if absolute:
            out.append("%s: absolute uri %r with a uriBaseId" % (what, uri))
        if base not in bases:
            out.append("%s: uriBaseId %r not in originalUriBaseIds" % (what, base))
    elif not absolute:
        out.append("%s: relative uri %r without uriBaseId (SARIF1004)" % (what, uri))


def check(doc, what):
    out = []
    errs = sorted(validator().iter_errors(doc), key=lambda e: list(e.path))
    for e in errs[:5]:
        out.append("%s: schema: %s at /%s" % (what, e.message, "/".join(map(str, e.path))))
    if errs:
        return out
    for run in doc["runs"]:
        d = run["tool"]["driver"]
        for k in ("informationUri", "version", "semanticVersion"):
            if not d.get(k):
                out.append("%s: tool.driver has no %s" % (what, k))
        for r in d.get("rules", []):
            if not (r.get("shortDescription", {}).get("text") and
                    r.get("fullDescription", {}).get("text") and
                    r.get("help", {}).get("text") and r.get("help", {}).get("markdown") and
                    r.get("defaultConfiguration", {}).get("level")):
                out.append("%s: rule %s lacks a description, help or level" % (what, r.get("id")))
        bases = run.get("originalUriBaseIds", {})
        for name, b in bases.items():
            if not b.get("uri", "").startswith("file:///") or not b["uri"].endswith("/"):
                out.append("%s: base %s uri %r" % (what, name, b.get("uri")))
        for i, a in enumerate(run.get("artifacts", [])):
            _uri_ok(a["location"], bases, "%s: artifact %d" % (what, i), out)
        seen = {}
        for i, res in enumerate(run.get("results", [])):
            w = "%s: result %d (%s)" % (what, i, res.get("ruleId"))
            for loc in res.get("locations", []):
                _uri_ok(loc["physicalLocation"]["artifactLocation"], bases, w, out)
            fp = res.get("partialFingerprints", {}).get("onnxAliasCheck/v1")
            if not fp:
                out.append("%s: no partialFingerprints" % w)
            elif fp in seen:
                out.append("%s: fingerprint %s also on result %d" % (w, fp, seen[fp]))
            else:
                seen[fp] = i
            for rl in res.get("relatedLocations", []):
                if "id" not in rl or not rl.get("message", {}).get("text"):
                    out.append("%s: related location without id or message" % w)
                _uri_ok(rl["physicalLocation"]["artifactLocation"], bases, w, out)
    return out


def main():
    bad = []
    for p in sys.argv[1:]:
        with open(p) as f:
            bad += check(json.load(f), p)
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
