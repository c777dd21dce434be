"""The CI examples run as pasted: each one's shell commands, in order, in a fresh virtual
environment and a copy of a backend's repository laid out as the examples assume (the
template adapter in adapter/), install the suite from the variable a user sets (here, a
copy of this checkout), run it against the simulator behind the template adapter and
leave the files the CI then publishes.  As pasted with no variable set, they stop at once
and say which variable to set.

The examples are read with ``yaml_subset`` (PyYAML is not a dependency; where it is
installed, both readers must agree).  ``uses:`` steps (checkout, setup-python, upload) are
GitHub's own; the test plays their part: the working directory is the repository, the
venv's python is first on PATH, and what the upload step names must exist.

To keep each run short the suite is narrowed, without touching the example's command,
through pytest's own ``PYTEST_ADDOPTS`` (one requirement's tests, few examples).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest
import yaml_subset
from outer_venv import outer_venv

# Its tests share a costly module fixture: one worker makes it, once (tox: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_ci_examples_run")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "ci"
GITHUB = EXAMPLES / "github-actions.yml"
GITLAB = EXAMPLES / "gitlab-ci.yml"
TEMPLATE = ROOT / "examples" / "template-adapter"
VARIABLES = ("ACL_CONFORMANCE_SOURCE", "ACL_CONFORMANCE_INDEX_URL")
"""Where the examples install the suite from: variables the user sets in the CI."""
REPORTS = ("report.json", "report.md", "report.html", "junit.xml")
QUICK = "--acl-requirement KIND-OUT-OF-ENUM --acl-examples 5"
"""A short run: one requirement's tests (six), few examples each."""
IGNORED = shutil.ignore_patterns(
    ".git", ".venv*", ".tox", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
    ".hypothesis", "acl-conformance-report*", "reports-out",
)  # fmt: skip
"""What of the checkout is not part of the suite's source (environments, build output)."""


# -- reading the examples -------------------------------------------------------------


@dataclass
class Step:
    name: str
    script: str
    always: bool = False
    """Runs even after an earlier step failed (GitHub's ``if: always()``)."""


@dataclass
class Job:
    """What the test needs of one example's job."""

    steps: list[Step]
    env: dict[str, str]
    timeout_minutes: float
    artifacts: list[str]
    """The paths the CI keeps of the job's files."""
    junit: str | None = None
    """The path the CI reads as its test report (GitLab's ``artifacts:reports:junit``)."""
    extra: dict[str, Any] = field(default_factory=dict)


def _load(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    doc = yaml_subset.load(text)
    assert isinstance(doc, dict), f"{path.name}: not a mapping at the top"
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        return doc
    full = yaml.safe_load(text)
    if True in full:  # YAML 1.1 reads GitHub's "on:" key as true
        full["on"] = full.pop(True)
    assert full == doc, f"{path.name}: the test's YAML reader and PyYAML disagree"
    return doc


def _minutes(text: str | int) -> float:
    """A GitLab duration (``60 minutes``, ``1h 30m``, ``2 hours``) in minutes."""
    if isinstance(text, int):
        return text / 60  # a bare number is seconds
    units = {"h": 60.0, "hour": 60.0, "hours": 60.0, "m": 1.0, "min": 1.0, "minute": 1.0}
    units |= {"minutes": 1.0, "mins": 1.0, "s": 1 / 60, "second": 1 / 60, "seconds": 1 / 60}
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text.lower())
    assert parts and all(u in units for _, u in parts), f"not a duration: {text!r}"
    return sum(float(n) * units[u] for n, u in parts)


def github_job(path: Path = GITHUB) -> Job:
    doc = _load(path)
    (job,) = doc["jobs"].values()
    steps = [
        Step(s.get("name", ""), s["run"], str(s.get("if", "")).strip() == "always()")
        for s in job["steps"]
        if "run" in s
    ]
    uploads = [
        s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")
    ]
    assert len(uploads) == 1, f"{path.name}: expected one actions/upload-artifact step"
    upload = uploads[0]
    assert str(upload.get("if", "")).strip() == "always()", (
        f"{path.name}: the reports must be uploaded also when the gate fails (if: always())"
    )
    return Job(
        steps=steps,
        env={k: str(v) for k, v in (job.get("env") or {}).items()},
        timeout_minutes=float(job["timeout-minutes"]),
        artifacts=[p.strip() for p in upload["with"]["path"].splitlines() if p.strip()],
        extra={"shell": ((job.get("defaults") or {}).get("run") or {}).get("shell")},
    )


def gitlab_job(path: Path = GITLAB) -> Job:
    doc = _load(path)
    jobs = [v for v in doc.values() if isinstance(v, dict) and "script" in v]
    assert len(jobs) == 1, f"{path.name}: expected one job"
    job = jobs[0]
    lines = [*(job.get("before_script") or []), *job["script"]]
    artifacts = job.get("artifacts") or {}
    return Job(
        steps=[Step("script", "\n".join(lines))],
        env={k: str(v) for k, v in (job.get("variables") or {}).items()},
        timeout_minutes=_minutes(job["timeout"]),
        artifacts=list(artifacts.get("paths") or []),
        junit=(artifacts.get("reports") or {}).get("junit"),
        extra={"expose_as": artifacts.get("expose_as"), "when": artifacts.get("when")},
    )


JOBS = {"github-actions.yml": github_job, "gitlab-ci.yml": gitlab_job}


def run_commands(job: Job) -> list[list[str]]:
    """The ``acl-conformance run`` command lines of the job (continuations joined)."""
    found = []
    for step in job.steps:
        for line in step.script.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[:2] == ["acl-conformance", "run"]:
                found.append(words)
    return found


def _option(words: list[str], name: str) -> str | None:
    return words[words.index(name) + 1] if name in words else None


# -- what the examples say, read ------------------------------------------------------


def test_the_yaml_reader_reads_what_the_examples_use_and_refuses_the_rest() -> None:
    sample = (
        "# a comment\n"
        "job:\n"
        "  timeout: 60 minutes  # trailing\n"
        "  n: 3\n"
        "  script:\n"
        "    - |\n"
        "      if true; then\n"
        "        echo '# not a comment'\n"
        "      fi\n"
        "    # between items\n"
        "    - acl-conformance run --report-dir r\n"
        "  steps:\n"
        "    - uses: x@v1\n"
        "      with:\n"
        '        v: "3.11"\n'
        "    - name: 'it''s'\n"
        "  empty:\n"
    )
    assert yaml_subset.load(sample) == {
        "job": {
            "timeout": "60 minutes",
            "n": 3,
            "script": [
                "if true; then\n  echo '# not a comment'\nfi\n",
                "acl-conformance run --report-dir r",
            ],
            "steps": [{"uses": "x@v1", "with": {"v": "3.11"}}, {"name": "it's"}],
            "empty": None,
        }
    }
    for bad in ("a: [1, 2]\n", "a: >\n  folded\n", "a: 1\n   b: 2\n", "a: 1\na: 2\n"):
        with pytest.raises(yaml_subset.YamlSubsetError):
            yaml_subset.load(bad)
    assert _minutes("1h 30m") == 90 and _minutes("60 minutes") == 60 and _minutes(3600) == 60


@pytest.mark.parametrize("name", sorted(JOBS))
def test_the_job_has_time_limits_that_let_the_report_be_written(name: str) -> None:
    job = JOBS[name]()
    (run,) = run_commands(job)
    call_timeout = _option(run, "--call-timeout")
    budget = _option(run, "--time-budget")
    assert call_timeout is not None, (
        f"{name}: give --call-timeout (a hung call must not hold the job)"
    )
    assert budget is not None, f"{name}: give --time-budget, so that the run ends before the job"
    assert 0 < float(budget) < job.timeout_minutes, (
        f"{name}: --time-budget {budget} min must end the run before the job's own timeout "
        f"({job.timeout_minutes:g} min), or the CI kills it with no report written"
    )


@pytest.mark.parametrize("name", sorted(JOBS))
def test_the_suite_comes_from_a_variable_not_a_placeholder(name: str) -> None:
    job = JOBS[name]()
    text = "\n".join(s.script for s in job.steps)
    assert all(f"${v}" in text or f"${{{v}" in text for v in VARIABLES), (
        f"{name}: the install step should read {' and '.join(VARIABLES)}"
    )
    assert "://" not in text, f"{name}: an address written into the commands fails as pasted"
    if name == "github-actions.yml":
        for v in VARIABLES:
            assert re.fullmatch(rf"\$\{{\{{\s*vars\.{v}\s*\}}\}}", job.env.get(v, "")), (
                f"{name}: env {v} should come from the repository's variables (vars.{v})"
            )
    else:
        assert not set(VARIABLES) & set(job.env), (
            f"{name}: a value in the file would hide the project's CI/CD variable"
        )


def test_github_shows_report_md_and_uploads_junit_and_html() -> None:
    job = github_job()
    summary = [s for s in job.steps if "$GITHUB_STEP_SUMMARY" in s.script]
    assert summary and summary[0].always, "report.md goes to $GITHUB_STEP_SUMMARY, if: always()"
    assert "report.md" in summary[0].script
    for f in ("junit.xml", "report.html"):
        assert any(p.endswith(f) for p in job.artifacts), f"the artifact lacks {f}"


def test_gitlab_reads_junit_and_exposes_the_html() -> None:
    job = gitlab_job()
    assert job.junit and job.junit.endswith("junit.xml"), "artifacts:reports:junit: junit.xml"
    assert job.extra["expose_as"], "artifacts:expose_as: a link from the merge request"
    assert job.extra["when"] == "always", "artifacts:when: always (the gate may fail)"
    assert any(p.endswith("report.html") for p in job.artifacts), "artifacts:paths: report.html"
    for p in job.artifacts:
        # GitLab's rules for exposed paths: no ./, a folder ends with /, no globs
        assert not p.startswith("./") and "*" not in p and "$" not in p, p


# -- the examples, run ----------------------------------------------------------------


def _shell(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``script`` as both CIs run a step: bash, stopping at the first failing command."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def play(
    job: Job, cwd: Path, env: dict[str, str]
) -> list[tuple[Step, subprocess.CompletedProcess[str] | None]]:
    """Each step in order; after a failure only the ``always`` ones (None: skipped)."""
    done: list[tuple[Step, subprocess.CompletedProcess[str] | None]] = []
    failed = False
    for step in job.steps:
        if failed and not step.always:
            done.append((step, None))
            continue
        out = _shell(step.script, cwd, env)
        failed = failed or out.returncode != 0
        done.append((step, out))
    return done


def _clean_env(path: list[Path]) -> dict[str, str]:
    """The environment of a CI machine: no pip configuration of this one, no venv active."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "PYTEST_", "ACL_CONFORMANCE_", "GITHUB_"))
        and k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    env["PATH"] = os.pathsep.join([*map(str, path), env.get("PATH", "")])
    return env


def _repository(tmp_path: Path) -> Path:
    """A backend's repository as the examples assume it: the adapter package in adapter/."""
    repo = tmp_path / "repo"
    shutil.copytree(TEMPLATE, repo / "adapter", ignore=IGNORED)
    return repo


@pytest.fixture(scope="module")
def suite_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as a user's variable names it (a copy: pip builds in the folder)."""
    src = tmp_path_factory.mktemp("source") / "acl-conformance"
    shutil.copytree(ROOT, src, ignore=IGNORED)
    return src


@pytest.fixture
def ci_python(tmp_path: Path) -> Path:
    """A fresh venv, as setup-python or the job's image gives: empty but for what pip needs
    to build and install offline (this interpreter's packages, through a .pth file: the
    suite's dependencies are then found installed, and nothing is downloaded)."""
    import importlib.util

    if importlib.util.find_spec("setuptools") is None or importlib.util.find_spec("pip") is None:
        pytest.skip("pip and setuptools are needed to install the suite offline")
    env_dir = tmp_path / "venv"
    return outer_venv(env_dir).parent


def _offline(env: dict[str, str]) -> dict[str, str]:
    """pip as a CI machine would run it, but from what is installed here: no index, no
    isolated build environment to download (``PIP_NO_BUILD_ISOLATION=0`` turns isolation
    off: pip reads its ``no-`` options inverted), no configuration file of this machine."""
    return env | {
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def _tail(done: list[tuple[Step, subprocess.CompletedProcess[str] | None]]) -> str:
    return "\n".join(
        f"--- {s.name}: "
        + ("skipped" if o is None else f"exit {o.returncode}\n{o.stdout[-2500:]}{o.stderr[-2500:]}")
        for s, o in done
    )


@pytest.mark.parametrize("name", sorted(JOBS))
def test_the_example_runs_as_pasted_and_leaves_its_reports(
    name: str, tmp_path: Path, suite_source: Path, ci_python: Path
) -> None:
    job = JOBS[name]()
    repo = _repository(tmp_path)
    summary = tmp_path / "step-summary.md"
    env = _offline(_clean_env([ci_python])) | {
        "ACL_CONFORMANCE_SOURCE": str(suite_source),
        "PYTEST_ADDOPTS": QUICK,
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    done = play(job, repo, env)
    assert all(o is not None and o.returncode == 0 for _, o in done), _tail(done)

    # the suite the job ran is the one the variable named, installed into the job's venv
    where = subprocess.run(
        [
            str(ci_python / "python"),
            "-c",
            "import acl_conformance; print(acl_conformance.__file__)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    ).stdout.strip()
    assert Path(where).is_relative_to(ci_python.parent), f"the suite was imported from {where}"

    (run,) = run_commands(job)
    report_dir = repo / str(_option(run, "--report-dir"))
    for f in REPORTS:
        assert (report_dir / f).is_file(), f"{name}: no {f} in {report_dir}\n{_tail(done)}"
    report = json.loads((report_dir / "report.json").read_text())
    assert report["execution_target"]["adapter"] == _option(run, "--adapter")
    assert report["gate"]["result"] == "pass", report["gate"]
    assert report["run"]["requirements_selected"] == ["KIND-OUT-OF-ENUM"], "the run was not short"
    for p in job.artifacts:
        if p.rstrip("/").endswith("traces"):
            continue  # written only when something failed
        assert (repo / p).exists(), f"{name}: the CI keeps {p}, which the run did not write"
    junit = job.junit or next(p for p in job.artifacts if p.endswith("junit.xml"))
    suite = ET.parse(repo / junit).getroot().find("testsuite")
    assert (
        suite is not None
        and suite.get("failures") == "0"
        and len(list(suite.iter("testcase"))) == 1
    )
    if "$GITHUB_STEP_SUMMARY" in "\n".join(s.script for s in job.steps):
        assert summary.read_text(encoding="utf-8") == (report_dir / "report.md").read_text(
            encoding="utf-8"
        ), "the step summary should be report.md"


@pytest.mark.parametrize("name", sorted(JOBS))
def test_without_the_variable_the_job_stops_and_names_it(name: str, tmp_path: Path) -> None:
    """As pasted, before anyone set the variable: the first command says what to set, and
    nothing is installed from a guessed address."""
    job = JOBS[name]()
    repo = _repository(tmp_path)
    shims = tmp_path / "shims"
    shims.mkdir()
    called = tmp_path / "called"
    for tool in ("python", "python3", "pip", "acl-conformance"):
        shim = shims / tool
        shim.write_text(f'#!/bin/sh\necho "{tool} $*" >> {shlex.quote(str(called))}\n')
        shim.chmod(0o755)
    env = _clean_env([shims]) | {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    done = play(job, repo, env)
    first = done[0][1]
    assert first is not None and first.returncode != 0, f"{name}: the job went on without a source"
    said = first.stdout + first.stderr
    assert "ACL_CONFORMANCE_SOURCE" in said, f"{name}: the message should name the variable: {said}"
    assert not called.exists(), f"{name}: ran {called.read_text()!r} with no source set"


def test_ci_md_shows_the_github_workflow_as_it_is() -> None:
    """docs/ci.md quotes the GitHub Actions example in full: the quote is the file."""
    doc = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    example = GITHUB.read_text(encoding="utf-8")
    body = example[example.index("name: acl-conformance") :]
    assert body in blocks, "docs/ci.md's copy of examples/ci/github-actions.yml is out of date"
