"""The vendor's examples work: the template adapter package installs, registers its entry
point and passes ci mode against its expectations file (and fails the gate on a stale
entry); the CI workflows run only commands and options the CLI has.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from outer_venv import outer_venv

# Its tests share a costly module fixture: one worker makes it, once (tox: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_examples")

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "examples" / "template-adapter"
WORKFLOWS = sorted((ROOT / "examples" / "ci").glob("*.yml"))
REQUIREMENT = "KIND-REJECTED"
"""The run is narrowed to one requirement's tests: the point is the adapter's path through
the suite (entry point, options, the gate), not the whole catalogue."""


# -- the template adapter ------------------------------------------------------------


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the template package, built from a copy of it (an in-tree
    build would leave build/ in the repository), offline and without downloads.

    The venv sees this interpreter's packages (acl-conformance, setuptools, pip) through a
    .pth file that adds its site directory: ``--system-site-packages`` would give the base
    interpreter's, not those of the venv the tests run in."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools is needed to build the template package without isolation")
    base = tmp_path_factory.mktemp("template")
    src = base / "template-adapter"
    shutil.copytree(TEMPLATE, src, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    env_dir = base / "venv"
    python = outer_venv(env_dir)
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q", str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return env_dir


def _run_ci(venv: Path, expectations: Path, report_dir: Path) -> subprocess.CompletedProcess[str]:
    cmd = [
        str(venv / "bin" / "python"),
        "-m",
        "acl_conformance.conformance.command_line.cli",
        "run",
        "--adapter",
        "template",
        "--mode",
        "ci",
        "--expectations",
        str(expectations),
        "--report-dir",
        str(report_dir),
        "--requirement",
        REQUIREMENT,
        "--jobs",
        "1",
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def test_the_template_passes_ci_mode_with_its_expectations_file(venv: Path, tmp_path: Path) -> None:
    out = _run_ci(venv, TEMPLATE / "expectations.txt", tmp_path / "report")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["gate"]["result"] == "pass"
    assert "template adapter over" in report["execution_target"]["backend_version"]
    assert (tmp_path / "report" / "junit.xml").is_file()
    assert (tmp_path / "report" / "report.html").is_file()


def test_a_stale_entry_fails_the_gate(venv: Path, tmp_path: Path) -> None:
    stale = tmp_path / "expectations.txt"
    stale.write_text(f"{REQUIREMENT}   was broken once; fixed since, the entry was left\n")
    out = _run_ci(venv, stale, tmp_path / "report")
    assert out.returncode == 1, out.stdout[-3000:] + out.stderr[-3000:]
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["gate"]["result"] == "fail"
    assert any("stale" in r for r in report["gate"]["reasons"]), report["gate"]


def test_the_template_expectations_file_parses() -> None:
    from acl_conformance.conformance.gating.expectations import Expectations

    assert Expectations.load(TEMPLATE / "expectations.txt").entries == []


# -- the CI workflows ----------------------------------------------------------------


def commands(text: str) -> list[str]:
    """Every ``acl-conformance`` command a workflow file runs: ``run:`` values and their
    block lines (GitHub), ``script:`` items (GitLab), ``\\`` continuations joined."""
    found: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            continue
        line = re.sub(r"^-\s+", "", line)
        line = re.sub(r"^run:\s*", "", line)
        if pending:
            line = pending + " " + line
            pending = ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        if line.startswith("acl-conformance "):
            found.append(line)
    return found


def _help(sub: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acl_conformance.conformance.command_line.cli", sub, "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def unknown_options(command: str) -> list[str]:
    """What of ``command`` the CLI does not have: the subcommand, or an option its help
    does not list."""
    words = shlex.split(command)
    sub = words[1]
    shown = _help(sub)
    if shown.returncode != 0:
        return [sub]
    options = [w.split("=", 1)[0] for w in words[2:] if w.startswith("--")]
    return [
        o for o in options if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", shown.stdout)
    ]


def test_there_are_workflows() -> None:
    assert {p.name for p in WORKFLOWS} == {
        "github-actions.yml",
        "gitlab-ci.yml",
        "github-actions-shards.yml",
        "gitlab-ci-shards.yml",
    }


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_commands_exist(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = commands(text)
    runs = [c for c in found if shlex.split(c)[1] == "run"]
    assert runs, f"{path.name} runs no acl-conformance run"
    for c in runs:
        words = shlex.split(c)
        assert words[words.index("--mode") + 1] == "ci", c
        assert "--expectations" in words and "--report-dir" in words, c
    for c in found:
        assert unknown_options(c) == [], f"{path.name}: {c}"
    # The reports are published.
    assert "junit.xml" in text and "report.html" in text


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_yaml(path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    assert isinstance(yaml.safe_load(path.read_text(encoding="utf-8")), dict)


def test_the_workflow_checks_can_fail() -> None:
    sample = (
        "      - name: run\n"
        "        run: |\n"
        "          acl-conformance run --adapter x --mode ci \\\n"
        "            --expectations e.txt --no-such-option 3\n"
        "    - acl-conformance nosuchcommand --report-dir r\n"
    )
    found = commands(sample)
    assert found == [
        "acl-conformance run --adapter x --mode ci --expectations e.txt --no-such-option 3",
        "acl-conformance nosuchcommand --report-dir r",
    ]
    assert unknown_options(found[0]) == ["--no-such-option"]
    assert unknown_options(found[1]) == ["nosuchcommand"]
