"""ci_files.py: the CI wiring files (issue 13, item 7), each parsed as
YAML and, where this machine can, run as its CI would run it:

- examples/ci/github-actions.yml: its steps are named; it checks out,
  builds, checks and uploads with github/codeql-action/upload-sarif the
  very file its check step writes, with the permission that needs, even
  when the check fails; the check step's script, run with bash in a git
  repository holding a clean and a broken example, exits 1 and leaves a
  SARIF 2.1.0 log naming the broken model's finding.
- examples/ci/gitlab-ci.yml: one job whose Code Quality report is the
  file its script writes with --format=gitlab; the script, run the same
  way, writes GitLab Code Quality JSON (description, check_name,
  fingerprint, severity, location.path relative, location.lines.begin)
  when the tool knows --format=gitlab (said, not failed, before it does).
- .pre-commit-hooks.yaml: hook onnx-alias-check, `files: \\.onnx$`,
  language system; its entry, with filenames appended as pre-commit
  appends them, passes two clean examples and refuses a broken one.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = os.environ["top_srcdir"]
BUILD = os.environ["top_builddir"]
OAC = os.environ["OAC"]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def load(rel):
    with open(os.path.join(SRC, rel)) as f:
        return yaml.safe_load(f)


def example(name):
    return os.path.join(BUILD, "examples", name + ".onnx")


CLEAN, CLEAN2, BROKEN = "dense_cache", "toy_decoder", "dense_cache_broken"
# The code the tool reports for the broken example (its own verdict).
broken_codes = {d["code"] for d in json.loads(subprocess.run(
    [OAC, "--format=json", example(BROKEN)], stdout=subprocess.PIPE).stdout)["diagnostics"]}
expect(broken_codes, "the broken example has findings")


def scratch_repo():
    """A git repository with two models in models/, the tool on PATH."""
    d = tempfile.mkdtemp(prefix="ci_files_")
    os.makedirs(os.path.join(d, "models"))
    os.makedirs(os.path.join(d, "bin"))
    os.symlink(OAC, os.path.join(d, "bin", "onnx-alias-check"))
    for n in (CLEAN, BROKEN):
        shutil.copy(example(n), os.path.join(d, "models", n + ".onnx"))
    with open(os.path.join(d, "README"), "w") as f:
        f.write("not a model\n")
    env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"],
               GIT_CONFIG_NOSYSTEM="1", HOME=d)
    for cmd in (["git", "init", "-q"], ["git", "add", "models", "README"]):
        subprocess.run(cmd, cwd=d, env=env, check=True)
    return d, env


# ---- GitHub Actions ------------------------------------------------------
wf = load("examples/ci/github-actions.yml")
expect(isinstance(wf, dict) and wf.get("name"), "workflow: a named workflow")
# YAML 1.1 reads the key `on` as True.
triggers = wf.get("on", wf.get(True))
expect(isinstance(triggers, dict) and "pull_request" in triggers and "push" in triggers,
       "workflow: runs on push and pull_request")
expect((wf.get("permissions") or {}).get("security-events") == "write",
       "workflow: security-events: write (needed by upload-sarif)")
jobs = wf.get("jobs") or {}
expect(len(jobs) == 1, "workflow: one job")
job = next(iter(jobs.values()))
expect("ubuntu" in str(job.get("runs-on")) or "debian" in str(job.get("container", "")),
       "workflow: builds on Ubuntu or Debian")
steps = job.get("steps") or []
expect(all(s.get("name") for s in steps), "workflow: every step is named")
names = [s.get("name", "") for s in steps]
uses = [s.get("uses", "") for s in steps]
expect(any(u.startswith("actions/checkout@") for u in uses), "workflow: checks out")
expect(any("apt-get install" in s.get("run", "") for s in steps), "workflow: Debian packages")
expect(any("make install" in s.get("run", "") for s in steps), "workflow: builds and installs")
upload = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
expect(len(upload) == 1, "workflow: one upload-sarif step")
check = [s for s in steps if "onnx-alias-check check" in s.get("run", "")]
expect(len(check) == 1, "workflow: one check step")
if upload and check:
    up, ck = upload[0], check[0]
    m = re.search(r"--format=sarif\s+-o\s+(\S+)", ck["run"])
    expect(m is not None, "workflow: the check writes SARIF with -o")
    sarif = m.group(1) if m else None
    expect((up.get("with") or {}).get("sarif_file") == sarif,
           "workflow: upload-sarif reads the file the check writes (%s)" % sarif)
    expect(str(up.get("if", "")).startswith("always()"), "workflow: uploads when the check fails")
    expect(ck.get("continue-on-error") is True and ck.get("id"),
           "workflow: the check step continues and has an id")
    expect(steps.index(ck) < steps.index(up) < len(steps) - 1 and
           ("steps.%s.outcome" % ck.get("id")) in str(steps[-1].get("if", "")),
           "workflow: a last step fails the job after the upload")
    # The check step as the runner runs it (bash, -e), in a repository.
    d, env = scratch_repo()
    try:
        p = subprocess.run(["bash", "-e", "-c", ck["run"]], cwd=d, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        expect(p.returncode == 1, "workflow: the check step exits 1 on the broken model (%d: %s)"
               % (p.returncode, p.stdout.decode()[-500:]))
        log = json.load(open(os.path.join(d, sarif))) if sarif and os.path.exists(
            os.path.join(d, sarif)) else {}
        expect(log.get("version") == "2.1.0", "workflow: a SARIF 2.1.0 log")
        results = [r for run in log.get("runs", []) for r in run.get("results", [])]
        expect({r.get("ruleId") for r in results} >= broken_codes,
               "workflow: the SARIF has the broken model's findings %s" % sorted(broken_codes))
        uris = json.dumps(log)
        expect(BROKEN + ".onnx" in uris and CLEAN + ".onnx" in uris,
               "workflow: both models are in the log")
    finally:
        shutil.rmtree(d)

# ---- GitLab CI -----------------------------------------------------------
gl = load("examples/ci/gitlab-ci.yml")
expect(isinstance(gl, dict) and len(gl) == 1, "gitlab: one job")
job = next(iter(gl.values())) if isinstance(gl, dict) and gl else {}
script = job.get("script") or []
cq = ((job.get("artifacts") or {}).get("reports") or {}).get("codequality")
expect((job.get("artifacts") or {}).get("when") == "always", "gitlab: the report kept on failure")
m = re.search(r"--format=gitlab\s+-o\s+(\S+)", " ".join(script))
expect(m is not None and m.group(1) == cq,
       "gitlab: the Code Quality report is the file the script writes (%s)" % cq)
expect("debian" in str(job.get("image", "")), "gitlab: builds on Debian")
knows_gitlab = subprocess.run([OAC, "--format=gitlab", example(CLEAN)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode != 2
if not knows_gitlab:
    print("gitlab: the tool has no --format=gitlab yet: its script is not run")
elif cq:
    d, env = scratch_repo()
    try:
        p = subprocess.run(["bash", "-e", "-c", "\n".join(script)], cwd=d, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        expect(p.returncode == 1, "gitlab: the script exits 1 on the broken model (%d: %s)"
               % (p.returncode, p.stdout.decode()[-500:]))
        issues = json.load(open(os.path.join(d, cq)))
        expect(isinstance(issues, list) and issues, "gitlab: a non-empty array of issues")
        for i in issues if isinstance(issues, list) else []:
            loc = i.get("location") or {}
            expect(all(isinstance(i.get(k), str) and i.get(k) for k in
                       ("description", "check_name", "fingerprint", "severity")) and
                   isinstance(loc.get("path"), str) and not loc["path"].startswith("/") and
                   isinstance((loc.get("lines") or {}).get("begin"), int),
                   "gitlab: a Code Quality issue: %s" % i)
        expect({i.get("check_name") for i in issues} >= broken_codes,
               "gitlab: the broken model's findings")
    finally:
        shutil.rmtree(d)

# ---- pre-commit ----------------------------------------------------------
hooks = load(".pre-commit-hooks.yaml")
expect(isinstance(hooks, list) and len(hooks) == 1, "pre-commit: one hook")
hook = hooks[0] if isinstance(hooks, list) and hooks else {}
expect(hook.get("id") == "onnx-alias-check", "pre-commit: id onnx-alias-check")
expect(hook.get("language") == "system", "pre-commit: language system")
expect(hook.get("files") == r"\.onnx$", "pre-commit: files \\.onnx$")
rx = re.compile(hook.get("files", "^$"))
expect([f for f in ("a/m.onnx", "m.onnx", "m.onnx.txt", "onnx", "m.json") if rx.search(f)] ==
       ["a/m.onnx", "m.onnx"], "pre-commit: the files pattern picks *.onnx only")
entry = shlex.split(hook.get("entry", ""))
expect(entry[:1] == ["onnx-alias-check"], "pre-commit: the entry is the tool")
if entry:
    d, env = scratch_repo()
    try:
        def hook_run(*files):
            # pre-commit runs entry + args + the matching staged files.
            return subprocess.run(entry + hook.get("args", []) + list(files), cwd=d, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        shutil.copy(example(CLEAN2), os.path.join(d, "models", CLEAN2 + ".onnx"))
        p = hook_run("models/%s.onnx" % CLEAN, "models/%s.onnx" % CLEAN2)
        expect(p.returncode == 0, "pre-commit: two clean models pass (%d: %s)"
               % (p.returncode, p.stdout.decode()))
        expect(p.stdout.decode().count("status: ok") == 2, "pre-commit: both models checked")
        p = hook_run("models/%s.onnx" % CLEAN, "models/%s.onnx" % BROKEN)
        out = p.stdout.decode()
        expect(p.returncode == 1 and all("[%s]" % c in out for c in broken_codes),
               "pre-commit: a broken model is refused with its findings (%d: %s)"
               % (p.returncode, out))
    finally:
        shutil.rmtree(d)

print("ci files: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
