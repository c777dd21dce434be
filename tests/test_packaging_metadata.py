"""The wheel's metadata: an SPDX license with its file, classifiers, project URLs, and a
build that warns about none of it.

The build runs on a copy of the source tree (an in-tree build writes ``build/``,
which another test building the wheel at the same time would share).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPDX_SETUPTOOLS = 77
"""The first setuptools that takes ``project.license`` as an SPDX string."""
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".tox", ".venv*", "build", "dist", "*.egg-info", ".hypothesis", "__pycache__",
    ".mypy_cache", ".ruff_cache", ".pytest_cache", "acl-conformance-report",
)  # fmt: skip


def _setuptools_major() -> int:
    if importlib.util.find_spec("setuptools") is None or importlib.util.find_spec("wheel") is None:
        return 0
    match = re.match(r"\d+", importlib.metadata.version("setuptools"))
    return int(match.group()) if match else 0


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the wheel, everything the build printed, verbosely)."""
    src = tmp_path_factory.mktemp("src") / "acl-conformance"
    shutil.copytree(ROOT, src, ignore=COPY_IGNORE)
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(src)]
    if _setuptools_major() >= SPDX_SETUPTOOLS:
        cmd.insert(4, "--no-build-isolation")  # faster, and works offline
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    (whl,) = out.glob("acl_conformance-*.whl")
    return whl, log


def _metadata(whl: Path) -> Message:
    zf = zipfile.ZipFile(whl)
    (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
    return Parser().parsestr(zf.read(name).decode("utf-8"))


def license_warnings(log: str) -> list[str]:
    """The lines of a build log that warn about the license, deprecated metadata, or data
    folders that are not listed as packages ("... would be ignored", "absent from the
    `packages` configuration")."""
    found = []
    for line in log.splitlines():
        low = line.lower()
        unlisted = "would be ignored" in low or "absent from the `packages`" in low
        if (
            unlisted
            or "deprecat" in low
            or ("licen" in low and ("warn" in low or "supersede" in low))
        ):
            found.append(line.strip())
    return found


def test_the_build_warns_about_no_license_or_deprecated_metadata(
    build: tuple[Path, str],
) -> None:
    _, log = build
    assert license_warnings(log) == []


def test_the_warning_check_can_fail() -> None:
    log = (
        "  /x/_apply_pyprojecttoml.py:82: SetuptoolsDeprecationWarning: `project.license` "
        "as a TOML table is deprecated\n"
        "  adding license file 'LICENSE'\n"
        "  SetuptoolsWarning: License classifiers have been superseded by license expressions\n"
        "  Package 'acl_conformance.adapters.cann.agent' is absent from the `packages` "
        "configuration.\n"
    )
    assert len(license_warnings(log)) == 3


def test_license_is_an_spdx_expression_with_its_file(build: tuple[Path, str]) -> None:
    whl, _ = build
    meta = _metadata(whl)
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["License"] is None  # the old free-text field is not used
    names = zipfile.ZipFile(whl).namelist()
    (licence,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    text = zipfile.ZipFile(whl).read(licence).decode("utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert text == (ROOT / "LICENSE").read_text(encoding="utf-8")


def test_classifiers_and_urls(build: tuple[Path, str]) -> None:
    meta = _metadata(build[0])
    classifiers = set(meta.get_all("Classifier") or [])
    assert {
        "Framework :: Pytest",
        "Framework :: Hypothesis",
        "Programming Language :: Python :: 3",
        "Topic :: Software Development :: Testing",
    } <= classifiers
    # The SPDX expression says the license; a License :: classifier beside it is an error
    # for setuptools >= 77.
    assert not [c for c in classifiers if c.startswith("License ::")]
    urls = {u.split(",", 1)[0] for u in meta.get_all("Project-URL") or []}
    assert {"Homepage", "Documentation", "Issues"} <= urls
