"""The sharded CI examples (``examples/ci/github-actions-shards.yml``,
``examples/ci/gitlab-ci-shards.yml``) run as pasted: every shard job of the matrix (or of
``parallel:``), then the merge job, in a copy of a backend's repository with the template
adapter, the suite installed from the variable a user sets (a copy of this checkout).

The CI's own parts are played by the test, as in ``test_ci_examples_run.py``: the matrix
value or ``CI_NODE_INDEX``/``CI_NODE_TOTAL``, and GitHub's artifacts (each shard's upload
is copied into the folder the merge job's download names).  The suite is installed once,
by the first job's install step, and the other jobs skip theirs (the same command).  The
run is narrowed through ``PYTEST_ADDOPTS`` (one requirement's tests, few examples).
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml_subset
from test_ci_examples_run import EXAMPLES
from test_ci_examples_run import QUICK
from test_ci_examples_run import REPORTS
from test_ci_examples_run import Step
from test_ci_examples_run import _clean_env
from test_ci_examples_run import _offline
from test_ci_examples_run import _repository
from test_ci_examples_run import _shell
from test_ci_examples_run import ci_python  # noqa: F401 (a fixture)
from test_ci_examples_run import suite_source  # noqa: F401 (a fixture)

GITHUB = EXAMPLES / "github-actions-shards.yml"
GITLAB = EXAMPLES / "gitlab-ci-shards.yml"


def _load(path: Path) -> dict[str, Any]:
    """The example as the project's YAML reader reads it (``fail-fast: false`` stays the
    string ``false`` there; GitHub reads a boolean)."""
    doc = yaml_subset.load(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _steps(job: dict[str, Any], matrix: dict[str, str]) -> list[Step]:
    """A GitHub job's ``run:`` steps, with ``${{ matrix.X }}`` filled in."""
    out = []
    for s in job["steps"]:
        if "run" not in s:
            continue
        script = s["run"]
        for k, v in matrix.items():
            script = script.replace(f"${{{{ matrix.{k} }}}}", v)
        out.append(Step(s.get("name", ""), script, str(s.get("if", "")) == "always()"))
    return out


def _ok(step: Step, cwd: Path, env: dict[str, str]) -> None:
    out = _shell(step.script, cwd, env)
    assert out.returncode == 0, (
        f"{step.name}: exit {out.returncode}\n{out.stdout[-3000:]}{out.stderr[-3000:]}"
    )


def _merged(report_dir: Path, count: int) -> None:
    for f in REPORTS:
        assert (report_dir / f).is_file(), f
    report = json.loads((report_dir / "report.json").read_text())
    assert report["run"]["shards"]["count"] == count
    assert report["gate"]["result"] == "pass", report["gate"]
    assert report["run"]["requirements_selected"] == ["KIND-OUT-OF-ENUM"], "the run was not short"
    assert "Merged from" in (report_dir / "report.md").read_text()
    suite = ET.parse(report_dir / "junit.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "0"


def test_the_sharded_examples_run_as_pasted_and_merge_into_one_report(
    tmp_path: Path,
    suite_source: Path,  # noqa: F811
    ci_python: Path,  # noqa: F811
) -> None:
    env = _offline(_clean_env([ci_python])) | {
        "ACL_CONFORMANCE_SOURCE": str(suite_source),
        "PYTEST_ADDOPTS": QUICK,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "step-summary.md"),
    }

    # GitHub Actions: the matrix's shards, each uploading; the merge job downloading all.
    doc = _load(GITHUB)
    shard_job, merge_job = doc["jobs"]["shard"], doc["jobs"]["merge"]
    repo = _repository(tmp_path / "github")
    upload = next(s for s in shard_job["steps"] if "upload-artifact" in s.get("uses", ""))
    download = next(s for s in merge_job["steps"] if "download-artifact" in s.get("uses", ""))
    installed = False
    ks = [str(k) for k in shard_job["strategy"]["matrix"]["shard"]]
    for k in ks:
        for step in _steps(shard_job, {"shard": k}):
            if step.name.startswith("Install") and installed:
                continue  # one venv plays every job's machine
            _ok(step, repo, env)
            installed = True
        # the upload of this shard, as the merge job's download lays it out
        name = upload["with"]["name"].replace("${{ matrix.shard }}", k)
        assert name.startswith(download["with"]["pattern"].rstrip("*"))
        paths = [p.strip() for p in upload["with"]["path"].splitlines() if p.strip()]
        root = os.path.commonpath(paths)  # upload-artifact keeps paths below their common root
        target = repo / download["with"]["path"] / name
        for p in paths:
            if (repo / p).exists():
                dest = target / os.path.relpath(p, root)
                dest.parent.mkdir(parents=True, exist_ok=True)
                if (repo / p).is_dir():
                    shutil.copytree(repo / p, dest)
                else:
                    shutil.copy2(repo / p, dest)
        shutil.rmtree(repo / root)  # the next shard runs on a fresh machine
    for step in _steps(merge_job, {}):
        if not step.name.startswith("Install"):
            _ok(step, repo, env)
    _merged(repo / "acl-conformance-report", len(ks))
    summary = (tmp_path / "step-summary.md").read_text()
    assert summary == (repo / "acl-conformance-report" / "report.md").read_text()

    # GitLab: the parallel job's shards, then the merge job (artifacts in one folder).
    doc = _load(GITLAB)
    shard_job, merge_job = doc["acl-conformance-shards"], doc["acl-conformance"]
    repo = _repository(tmp_path / "gitlab")
    n = int(shard_job["parallel"])
    for k in range(1, n + 1):
        node = env | {"CI_NODE_INDEX": str(k), "CI_NODE_TOTAL": str(n)}
        for line in shard_job["script"]:
            if "pip install" not in line:  # installed above
                _ok(Step(f"shard {k}", line), repo, node)
    for p in shard_job["artifacts"]["paths"]:
        assert (repo / p).exists(), p
    for line in merge_job["script"]:
        if "pip install" not in line:
            _ok(Step("merge", line), repo, env)
    _merged(repo / "acl-conformance-report", n)
    assert (repo / merge_job["artifacts"]["reports"]["junit"]).is_file()


@pytest.mark.parametrize("path", [GITHUB, GITLAB])
def test_a_sharded_example_installs_from_the_variable(path: Path) -> None:
    text = path.read_text()
    assert "ACL_CONFORMANCE_SOURCE" in text and "ACL_CONFORMANCE_INDEX_URL" in text
    assert "://" not in text.replace("git+https://<host>", "")
