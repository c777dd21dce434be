"""The wheel: one namespace at the top of site-packages, every package listed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIRS = {
    "reference_impl": "acl_conformance.reference_impl",
    "adapters": "acl_conformance.adapters",
    "conformance": "acl_conformance.conformance",
    "reports": "acl_conformance.reports",
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)]
    if importlib.util.find_spec("setuptools") and importlib.util.find_spec("wheel"):
        cmd.insert(4, "--no-build-isolation")  # faster, and works offline
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    (whl,) = out.glob("acl_conformance-*.whl")
    return whl


def test_wheel_top_level_names(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert top - dist_info == {"acl_conformance"}, f"top-level names in the wheel: {sorted(top)}"
    for generic in ("adapters", "reports", "conformance", "reference_impl"):
        assert generic not in top


def test_every_source_package_is_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "acl_conformance/__init__.py" in names
    for folder, dotted in SOURCE_DIRS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if rel.parts and rel.parts[0] == "_root":
                continue  # the namespace root, packaged as acl_conformance itself
            pkg = dotted.replace(".", "/") + ("/" + rel.as_posix() if rel.parts else "")
            assert f"{pkg}/__init__.py" in names, (
                f"{init.parent} is not packaged (pyproject packages)"
            )
            assert f"{pkg}/py.typed" in names


def test_console_script_declared(wheel: Path) -> None:
    zf = zipfile.ZipFile(wheel)
    (ep,) = [n for n in zf.namelist() if n.endswith("entry_points.txt")]
    text = zf.read(ep).decode()
    assert "acl-conformance = acl_conformance.conformance.cli:main" in text


def test_pyproject_lists_every_package() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    assert "acl_conformance" in listed
    for folder, dotted in SOURCE_DIRS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if rel.parts and rel.parts[0] == "_root":
                continue
            name = ".".join([dotted, *rel.parts])
            assert name in listed, f"{name} missing from [tool.setuptools] packages"


def test_report_schema_and_build_info_are_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "acl_conformance/reports/schema/report-1.schema.json" in names
    assert "acl_conformance/reports/schema/report-2.schema.json" in names
    assert "acl_conformance/_build_info.json" in names


def test_reproducer_prelude_is_in_the_wheel(wheel: Path) -> None:
    zf = zipfile.ZipFile(wheel)
    name = "acl_conformance/conformance/reproducer_prelude.c"
    assert name in set(zf.namelist())
    assert zf.read(name) == (ROOT / "conformance" / "reproducer_prelude.c").read_bytes()
