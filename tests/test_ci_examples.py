"""docs/examples/ci/gate.sh run as GitHub Actions and GitLab CI would run it: a local git repository
made in the test stands for the library (its base and head commits), and stubs of `cryptobench`,
`gh` and `curl` on PATH record the commands the script runs and answer with fixed outputs (the
real commands are tested by their own tests; this one tests the script's wiring). Checked: the
commands and their arguments, the files written, the exit status carried through (a regression
fails the job, a refusal fails it with its message), and that no token reaches the output or a
command line. Both YAML files are parsed and must call gate.sh."""
from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

CI = ROOT / "docs" / "examples" / "ci"
GATE_SH = CI / "gate.sh"
TOKEN = "glpat-SECRET-do-not-print-0123456789"

STUB = r'''#!PYTHON
"""A stand-in for NAME: records its arguments (and, for curl, the header file it was given and the
body it would post; for gh the body file's text)."""
import json, os, signal, sys, time
args = sys.argv[1:]
rec = {"cmd": "NAME", "args": args}
if "NAME" == "curl":
    header = args[args.index("--header") + 1].lstrip("@")
    rec["header"] = open(header).read()
    rec["header_path"] = header
    body = next(a for a in args if a.startswith("body@"))[len("body@"):]
    rec["body"] = open(body).read()
if "NAME" == "gh":
    rec["body"] = open(args[args.index("--body-file") + 1]).read()
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(json.dumps(rec) + "\n")
if "NAME" == "curl" and os.environ.get("STUB_CURL_SLEEP"):
    time.sleep(float(os.environ["STUB_CURL_SLEEP"]))     # a slow post: the test sends SIGTERM meanwhile
if "NAME" == "cryptobench" and args[0] == "run" and os.environ.get("STUB_RUN_RC"):
    sys.exit(int(os.environ["STUB_RUN_RC"]))     # run's exit 1: some cells failed (the run is stored)
if "NAME" == "cryptobench" and args[0] == "export":
    fmt = args[args.index("--format") + 1]
    with open(args[args.index("--out") + 1], "w") as f:
        f.write("{}\n" if fmt == "bencher" else "[]\n")
if "NAME" == "cryptobench" and args[0] == "gate":
    rc = int(os.environ.get("STUB_GATE_RC", "0"))
    if rc == 4:     # cryptobench gate's refusal (docs/gate.md): a condition differs between the runs
        sys.stderr.write("cryptobench: error: refused: compiler differs: gcc 13.2 (run 1) vs gcc 14.1 (run 2)\n")
        print("**cryptobench gate: REFUSED**\n\n- refused: `compiler differs`")
    else:
        print("### cryptobench gate: " + ("pass" if rc == 0 else "regression in mbedtls_sha256_update"))
    sys.stdout.flush()
    how = os.environ.get("STUB_GATE_DIES", "")
    if how == "kill":           # killed after writing part of the comment (the job's memory limit, a timeout)
        os.kill(os.getpid(), signal.SIGKILL)
    if how != "no-end":         # the renderer's last line (report/gate_render.py MD_END)
        print("<!-- cryptobench gate: end of comment -->")
    sys.exit(rc)
'''


def _stub(folder: Path, name: str) -> None:
    path = folder / name
    path.write_text(STUB.replace("PYTHON", sys.executable).replace("NAME", name))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture
def library(tmp_path) -> tuple[Path, str, str]:
    """A library repository: two commits on main, the request's branch one commit ahead (checked out)."""
    repo = tmp_path / "library"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for i in (1, 2):
        (repo / "lib.c").write_text(f"int f(void) {{ return {i}; }}\n")
        _git(repo, "add", "lib.c")
        _git(repo, "commit", "-q", "-m", f"main {i}")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / "lib.c").write_text("int f(void) { return 3; }\n")
    _git(repo, "commit", "-q", "-am", "feature")
    return repo, base, _git(repo, "rev-parse", "HEAD")


def _run(tmp_path: Path, library: Path, ci_env: dict, gate_rc: int = 0, run_rc: int = 0, term_after=None,
         dies: str = ""):
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    for name in ("cryptobench", "gh", "curl"):
        _stub(stubs, name)
    log = tmp_path / "calls.jsonl"
    log.unlink(missing_ok=True)
    work = tmp_path / "job"
    work.mkdir(exist_ok=True)
    # a clean environment: whatever CI runs this test must not leak its own GITHUB_* / CI_* variables
    env = {"PATH": f"{stubs}{os.pathsep}{os.path.dirname(shutil.which('git'))}{os.pathsep}/usr/bin{os.pathsep}/bin",
           "HOME": str(tmp_path), "STUB_LOG": str(log), "STUB_GATE_RC": str(gate_rc), "STUB_RUN_RC": str(run_rc), "STUB_GATE_DIES": dies,
           "GATE_LIBRARY_DIR": str(library), "GATE_RECIPE": str(library / "recipe.toml"),
           "GATE_OPS": "sha256 ecdsa-verify", "GATE_RUN_ARGS": "--param bytes=64,1024", **ci_env}
    tmp = tmp_path / "tmp"           # TMPDIR: where a header file would be left
    tmp.mkdir(exist_ok=True)
    env["TMPDIR"] = str(tmp)
    if term_after is None:
        p = subprocess.run(["bash", str(GATE_SH)], cwd=work, env=env, capture_output=True, text=True)
    else:
        p = _terminated(["bash", str(GATE_SH)], work, env, log, term_after)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return p, calls, work / "gate-out"


def _terminated(argv, cwd, env, log: Path, cmd: str):
    """gate.sh run until `cmd` (a stub) has logged its call, then SIGTERM to the script's process
    group, as a CI runner cancelling the job sends it."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (log.exists() and f'"cmd": "{cmd}"' in log.read_text()):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _github(pr="7"):
    return {"GITHUB_ACTIONS": "true", "GITHUB_BASE_REF": "main", "GITHUB_REF": f"refs/pull/{pr}/merge",
            "GH_TOKEN": TOKEN}


def _gitlab(base, head):
    return {"GITLAB_CI": "true", "CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_COMMIT_SHA": head,
            "CI_MERGE_REQUEST_IID": "12", "CI_API_V4_URL": "https://gitlab.example/api/v4", "CI_PROJECT_ID": "99",
            "GATE_GITLAB_TOKEN": TOKEN, "CI_JOB_TOKEN": TOKEN}


def _no_token(p, calls):
    assert TOKEN not in p.stdout and TOKEN not in p.stderr
    for c in calls:
        assert not any(TOKEN in a for a in c["args"]), c


def test_github_pull_request_runs_base_and_head_gates_exports_and_comments(tmp_path, library):
    repo, base, head = library
    p, calls, out = _run(tmp_path, repo, _github())
    assert p.returncode == 0, p.stderr
    cb = [c["args"] for c in calls if c["cmd"] == "cryptobench"]
    db = str(Path("gate-out") / "gate.sqlite")
    common = ["--target", "sim:cortex-m4", "--device", "stm32f407", "--recipe", str(repo / "recipe.toml")]
    ops = ["--op", "sha256", "--op", "ecdsa-verify", "--param", "bytes=64,1024", "--profile"]
    assert cb[0] == ["run", *common, "--library-source", f"{repo}@{base}", *ops, "--label", f"base {base}",
                     "--db", db, "--quiet"]           # GITHUB_BASE_REF: the merge base with the head
    assert cb[1] == ["run", *common, "--library-source", f"{repo}@{head}", *ops, "--label", f"head {head}",
                     "--db", db, "--quiet"]
    assert cb[2] == ["export", "2", "--format", "bencher", "--db", db, "--out", "gate-out/bencher.json"]
    assert cb[3] == ["export", "2", "--format", "github-action-benchmark", "--db", db,
                     "--out", "gate-out/github-action-benchmark.json"]
    assert cb[4] == ["gate", "1", "2", "--db", db, "--format", "md"]
    (gh,) = [c["args"] for c in calls if c["cmd"] == "gh"]
    assert gh == ["pr", "comment", "7", "--body-file", "gate-out/gate.md"]
    assert (out / "gate.md").read_text() == "### cryptobench gate: pass\n<!-- cryptobench gate: end of comment -->\n"
    assert json.loads((out / "bencher.json").read_text()) == {}
    assert json.loads((out / "github-action-benchmark.json").read_text()) == []
    assert "gate passed" in p.stderr and "posted gate.md on pull request #7" in p.stderr
    _no_token(p, calls)


def test_gitlab_regression_fails_the_job_and_posts_the_note_without_showing_the_token(tmp_path, library):
    repo, base, head = library
    _git(repo, "checkout", "-q", "main")          # GitLab's variables name the commits, not the checkout
    p, calls, out = _run(tmp_path, repo, _gitlab(base[:10], head), gate_rc=1)
    assert p.returncode == 1
    runs = [c["args"] for c in calls if c["cmd"] == "cryptobench" and c["args"][0] == "run"]
    assert [a[a.index("--library-source") + 1] for a in runs] == [f"{repo}@{base}", f"{repo}@{head}"]
    (curl,) = [c for c in calls if c["cmd"] == "curl"]
    assert curl["args"][-1] == "https://gitlab.example/api/v4/projects/99/merge_requests/12/notes"
    assert "body@gate-out/gate.md" in curl["args"]
    assert curl["header"] == f"PRIVATE-TOKEN: {TOKEN}\n"
    assert curl["header_path"].startswith(("/dev/fd/", "/proc/"))       # a pipe: no file ever holds the token
    assert not list((tmp_path / "tmp").iterdir())
    assert "regression in mbedtls_sha256_update" in (out / "gate.md").read_text()
    assert "gate failed: a regression" in p.stderr
    _no_token(p, calls)


def test_a_refusal_fails_the_job_with_its_message(tmp_path, library):
    repo, _, _ = library
    p, calls, out = _run(tmp_path, repo, _github(), gate_rc=4)
    assert p.returncode == 4
    assert "refused: compiler differs: gcc 13.2 (run 1) vs gcc 14.1 (run 2)" in p.stderr
    comment = (out / "gate.md").read_text()
    assert comment.startswith("**cryptobench gate: REFUSED**") and "compiler differs" in comment
    assert [c["cmd"] for c in calls].count("gh") == 1          # the refusal is posted too
    _no_token(p, calls)


def test_outside_ci_nothing_is_posted_and_a_bad_base_is_one_line(tmp_path, library):
    repo, base, head = library
    p, calls, _ = _run(tmp_path, repo, {"GATE_BASE_SHA": base, "GATE_HEAD_SHA": head})
    assert p.returncode == 0, p.stderr
    assert not any(c["cmd"] in ("gh", "curl") for c in calls)
    assert "not posted: not on GitHub Actions or GitLab CI" in p.stderr
    p, calls, _ = _run(tmp_path, repo, {"GATE_BASE_SHA": "no-such-ref"})
    assert p.returncode == 2 and not calls
    assert p.stderr.strip().splitlines()[-1] == f"gate.sh: base 'no-such-ref' is not a commit of {repo}"


def test_a_run_with_failed_cells_is_still_gated(tmp_path, library):
    """run's exit 1 (some cells failed, the run stored): the gate runs and reports a cell that fails
    in the head as a regression, rather than the job stopping without a comment."""
    repo, base, head = library
    p, calls, out = _run(tmp_path, repo, {"GATE_BASE_SHA": base, "GATE_HEAD_SHA": head}, gate_rc=1, run_rc=1)
    assert p.returncode == 1
    assert [c["args"][0] for c in calls if c["cmd"] == "cryptobench"] == ["run", "run", "export", "export", "gate"]
    assert "the head run has failed cells (stored; the gate reports them)" in p.stderr
    assert "gate failed: a regression" in p.stderr and (out / "gate.md").exists()


def test_a_failed_run_stops_before_the_gate(tmp_path, library):
    repo, base, head = library
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    failing = stubs / "cryptobench"
    failing.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write('cryptobench: error: build failed\\n')\n"
                       "sys.exit(3)\n")
    failing.chmod(0o755)
    env = {"PATH": f"{stubs}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(tmp_path),
           "GATE_LIBRARY_DIR": str(repo), "GATE_RECIPE": "r.toml", "GATE_BASE_SHA": base, "GATE_HEAD_SHA": head}
    p = subprocess.run(["bash", str(GATE_SH)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert p.returncode == 3 and "gate.sh: the base run failed" in p.stderr


NOTICE = "### cryptobench gate: no result (exit {})"


@pytest.mark.parametrize("dies, rc, expected_rc", [
    ("kill", 0, 137),          # killed after writing a PASS header: the job fails, nothing of it is posted
    ("no-end", 0, 0),          # exit 0 but the comment's last line missing: not posted as a verdict
    ("", 2, 2),                # a usage error: whatever it printed is not a comment
    ("", 3, 3),                # any other exit (a traceback's 1 is a regression's too: see the marker)
])
def test_only_a_complete_comment_is_posted(tmp_path, library, dies, rc, expected_rc):
    repo, _, _ = library
    for ci in (_github(), _gitlab(*library[1:])):
        p, calls, out = _run(tmp_path, repo, ci, gate_rc=rc, dies=dies)
        assert p.returncode == expected_rc, p.stderr
        (post,) = [c for c in calls if c["cmd"] in ("gh", "curl")]
        assert post["body"].startswith(NOTICE.format(expected_rc)), post["body"]
        assert "cryptobench gate: pass" not in post["body"] and not (out / "gate.md.part").exists()
        _no_token(p, calls)


def test_a_complete_comment_of_a_refusal_or_regression_is_posted_as_written(tmp_path, library):
    repo, _, _ = library
    for rc, words in ((1, "regression in mbedtls_sha256_update"), (4, "REFUSED")):
        p, calls, out = _run(tmp_path, repo, _github(), gate_rc=rc)
        (gh,) = [c for c in calls if c["cmd"] == "gh"]
        assert p.returncode == rc and words in gh["body"]
        assert gh["body"].endswith("<!-- cryptobench gate: end of comment -->\n")


def test_sigterm_while_posting_leaves_no_token_anywhere(tmp_path, library):
    """A job cancelled while curl posts the note: no file under TMPDIR, the job's folder or HOME
    holds the token afterwards (the header never was a file)."""
    repo, base, head = library
    p, calls, out = _run(tmp_path, repo, {**_gitlab(base, head), "STUB_CURL_SLEEP": "30"}, term_after="curl")
    assert p.returncode in (143, -15), p.stderr
    assert [c["cmd"] for c in calls].count("curl") == 1
    assert not list((tmp_path / "tmp").iterdir())
    for f in tmp_path.rglob("*"):
        if f.is_file() and f.name != "calls.jsonl" and ".git" not in f.parts:
            assert TOKEN not in f.read_text(errors="replace"), f
    _no_token(p, calls)


def _yaml(path: Path):
    """The parsed file where PyYAML is installed; else a structural check of what this test relies on
    (no tab indentation, top-level keys) and the text itself."""
    try:
        import yaml
    except ImportError:
        text = path.read_text()
        assert "\t" not in text
        return None
    return yaml.safe_load(path.read_text())


def test_github_workflow_calls_gate_sh():
    text = (CI / "github-actions.yml").read_text()
    doc = _yaml(CI / "github-actions.yml")
    if doc is not None:
        steps = doc["jobs"]["gate"]["steps"]
        assert doc[True if True in doc else "on"] == {"pull_request": None}     # YAML 1.1 reads `on` as true
        runs = [s.get("run", "") for s in steps]
        assert any("docs/examples/ci/gate.sh" in r for r in runs)
        gate = next(s for s in steps if "gate.sh" in s.get("run", ""))
        assert gate["env"]["GH_TOKEN"] == "${{ github.token }}"
        bench = next(s for s in steps if "github-action-benchmark" in s.get("uses", ""))
        assert bench["with"]["tool"] == "customSmallerIsBetter"
        assert bench["with"]["output-file-path"] == "gate-out/github-action-benchmark.json"
    assert "docs/examples/ci/gate.sh" in text and "secrets." not in text.split("run: |")[1].split("\n\n")[0]


def test_gitlab_job_calls_gate_sh():
    text = (CI / "gitlab-ci.yml").read_text()
    doc = _yaml(CI / "gitlab-ci.yml")
    if doc is not None:
        job = doc["cryptobench-gate"]
        assert any("docs/examples/ci/gate.sh" in line for line in job["script"])
        assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
        assert "gate-out/" in job["artifacts"]["paths"]
        assert "gate-out/bencher.json" in " ".join(doc["cryptobench-bencher"]["script"])
    assert "docs/examples/ci/gate.sh" in text and "GATE_GITLAB_TOKEN" in text
    assert "$GATE_GITLAB_TOKEN" not in text and "$BENCHER_API_TOKEN\n" not in text.split("script:")[-1]
