"""ci_files.py: the CI wiring files (issue 13, item 7; issue 19), each
parsed as YAML and, where this machine can, run as its CI would run it:

- both jobs' apt-get install lines resolve here (`apt-get -s install
  --no-install-recommends`, which needs no root and installs nothing;
  GitHub's Ubuntu names are tried on this Debian), with what a bare
  image lacks for a C build (libc6-dev) named;
- with OAC_CI_TARBALL (a `make dist` tarball; scripts/test.sh gives the
  one distcheck made), each job's build lines run as written, with these
  changes only: the tarball's address is file://OAC_CI_TARBALL, /tmp/oac
  and $RUNNER_TEMP are a scratch folder, --prefix=/usr/local is a scratch
  prefix, `sudo ` is dropped and `ldconfig` does nothing; then the check
  script runs with that installed tool on PATH.  Without it this part
  says so and the check scripts run the build's tool;

- examples/ci/github-actions.yml: its steps are named; it checks out
  with Git LFS, builds, checks and uploads with github/codeql-action/upload-sarif the
  very file its check step writes, with the permission that needs, even
  when the check fails; the check step's script, run with bash in a git
  repository holding a clean and a broken example, exits 1 and leaves a
  SARIF 2.1.0 log naming the broken model's finding; in a repository
  without models it exits 0 and writes no SARIF, which the upload's
  condition (hashFiles) then skips (upload-sarif rejects empty runs);
  the upload is skipped for pull requests from forks; the header says
  how to make the tarball (make dist) and names both GitHub limits
  (forks, private repositories without code scanning).
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


def apt_resolves(what, script):
    """The packages of the apt-get install lines of script resolve here."""
    pkgs = []
    for m in re.finditer(r"apt-get install ((?:[^\n\\]|\\\n)*)", script):
        pkgs += [w for w in m.group(1).replace("\\\n", " ").split() if not w.startswith("-")]
    expect(pkgs, "%s: an apt-get install line" % what)
    expect("libc6-dev" in pkgs, "%s: libc6-dev installed (a bare image has no C headers)" % what)
    if not shutil.which("apt-get") or not pkgs:
        print("%s: apt-get install --dry-run: skipped (no apt-get)" % what)
        return
    p = subprocess.run(["apt-get", "-s", "install", "--no-install-recommends"] + pkgs,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    expect(p.returncode == 0, "%s: apt-get -s install %s resolves (%d: %s)"
           % (what, " ".join(pkgs), p.returncode, p.stdout[-600:]))


TARBALL = os.environ.get("OAC_CI_TARBALL")
if TARBALL:
    TARBALL = os.path.abspath(TARBALL)
    expect(os.path.isfile(TARBALL), "OAC_CI_TARBALL %s is a file" % TARBALL)
else:
    print("build lines: skipped (set OAC_CI_TARBALL to a make dist tarball; "
          "scripts/test.sh does)")


def build_as_ci(what, lines, scratch):
    """Run a job's build lines with the changes listed at the top; the
    prefix its tool is installed in, or None."""
    prefix = os.path.join(scratch, "prefix")
    oac_dir = os.path.join(scratch, "oac")
    text = "\n".join(lines)
    for a, b in (("/tmp/oac", oac_dir), ("--prefix=/usr/local", "--prefix=" + prefix),
                 ("sudo ", ""), ("ldconfig", "true")):
        text = text.replace(a, b)
    env = dict(os.environ, ONNX_ALIAS_CHECK_TARBALL="file://" + TARBALL,
               RUNNER_TEMP=scratch, MAKEFLAGS="", MFLAGS="", MAKELEVEL="")
    p = subprocess.run(["bash", "-e", "-c", text], cwd=scratch, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    expect(p.returncode == 0, "%s: the build lines run (%d: %s)" % (what, p.returncode,
                                                                     p.stdout[-1500:]))
    tool = os.path.join(prefix, "bin", "onnx-alias-check")
    expect(os.access(tool, os.X_OK), "%s: the build installs %s" % (what, tool))
    return prefix if p.returncode == 0 and os.access(tool, os.X_OK) else None


def installed_env(env, prefix):
    """env with the tool installed under prefix first on PATH."""
    if prefix:
        env = dict(env, PATH=os.path.join(prefix, "bin") + os.pathsep + env["PATH"])
    return env


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
checkout = [st for st in steps if st.get("uses", "").startswith("actions/checkout@")]
expect(len(checkout) == 1, "workflow: checks out")
expect(checkout and (checkout[0].get("with") or {}).get("lfs") is True,
       "workflow: checks out with lfs: true (models in Git LFS)")
head = open(os.path.join(SRC, "examples/ci/github-actions.yml")).read().split("\nname:")[0]
for word, why in (("make dist", "how to make the tarball"), ("fork", "pull requests from forks"),
                  ("private", "private repositories without code scanning")):
    expect(word in head, "workflow: its header says %s (%r)" % (why, word))
expect(any("apt-get install" in s.get("run", "") for s in steps), "workflow: Debian packages")
apt_resolves("workflow", "\n".join(st.get("run", "") for st in steps))
gh_prefix = None
if TARBALL:
    d = tempfile.mkdtemp(prefix="ci_files_gh_")
    try:
        builds = [st["run"] for st in steps if "make install" in st.get("run", "")]
        gh_prefix = build_as_ci("workflow", builds, d) and d
    finally:
        if not gh_prefix:
            shutil.rmtree(d)
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
    cond = " ".join(str(up.get("if", "")).split())
    expect(cond.startswith("always()"), "workflow: uploads when the check fails")
    expect("hashFiles('%s') != ''" % sarif in cond,
           "workflow: no upload without a SARIF file (upload-sarif rejects empty runs)")
    expect("github.event.pull_request.head.repo.full_name == github.repository" in cond,
           "workflow: no upload from a fork's pull request (read-only token)")
    expect(ck.get("continue-on-error") is True and ck.get("id"),
           "workflow: the check step continues and has an id")
    expect(steps.index(ck) < steps.index(up) < len(steps) - 1 and
           ("steps.%s.outcome" % ck.get("id")) in str(steps[-1].get("if", "")),
           "workflow: a last step fails the job after the upload")
    # The check step as the runner runs it (bash, -e), in a repository.
    d, env = scratch_repo()
    env = installed_env(env, gh_prefix and os.path.join(gh_prefix, "prefix"))
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
        if gh_prefix:
            expect(log.get("runs") and log["runs"][0]["tool"]["driver"].get("name") ==
                   "onnx-alias-check", "workflow: the installed tool wrote the log")
        # A repository without models: exit 0, no SARIF for upload-sarif.
        subprocess.run(["git", "rm", "-q", "-r", "--cached", "models"], cwd=d, env=env,
                       check=True)
        os.remove(os.path.join(d, sarif))
        p = subprocess.run(["bash", "-e", "-c", ck["run"]], cwd=d, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        expect(p.returncode == 0 and not os.path.exists(os.path.join(d, sarif)),
               "workflow: without models the check exits 0 and writes no SARIF (%d)"
               % p.returncode)
    finally:
        shutil.rmtree(d)
        if gh_prefix:
            shutil.rmtree(gh_prefix)

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
before = job.get("before_script") or []
apt_resolves("gitlab", "\n".join(before))
expect("make dist" in open(os.path.join(SRC, "examples/ci/gitlab-ci.yml")).read(),
       "gitlab: its header says how to make the tarball (make dist)")
gl_prefix = None
if TARBALL:
    gl_scratch = tempfile.mkdtemp(prefix="ci_files_gl_")
    lines = [l for l in before if "apt-get" not in l]
    gl_prefix = build_as_ci("gitlab", lines, gl_scratch) and gl_scratch
knows_gitlab = subprocess.run([OAC, "--format=gitlab", example(CLEAN)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode != 2
if not knows_gitlab:
    print("gitlab: the tool has no --format=gitlab yet: its script is not run")
elif cq:
    d, env = scratch_repo()
    env = installed_env(env, gl_prefix and os.path.join(gl_prefix, "prefix"))
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
if TARBALL and gl_scratch:
    shutil.rmtree(gl_scratch)

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
