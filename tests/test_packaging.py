"""The wheel: one namespace at the top of site-packages, every package listed."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

# Its tests share a costly module fixture: one worker makes it, once (tox: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_packaging")

ROOT = Path(__file__).resolve().parent.parent


def _setup_constant(name: str) -> Any:
    """A literal assigned at the top level of setup.py (read, not run: setup.py builds)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"setup.py assigns no {name}")


PACKAGE_DIRS: dict[str, str] = _setup_constant("PACKAGE_DIRS")
SOURCE_DIRS = {folder: dotted for dotted, folder in PACKAGE_DIRS.items() if folder != dotted}


def _setuptools_at_least(major: int) -> bool:
    try:
        from importlib.metadata import version

        return int(version("setuptools").split(".")[0]) >= major
    except Exception:
        return False


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)]
    # pyproject's SPDX license needs setuptools 77: an older one builds in isolation.
    if _setuptools_at_least(77) and importlib.util.find_spec("wheel"):
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
            pkg = dotted.replace(".", "/") + ("/" + rel.as_posix() if rel.parts else "")
            assert f"{pkg}/__init__.py" in names, (
                f"{init.parent} is not packaged (setup.py packages())"
            )
            assert f"{pkg}/py.typed" in names


def test_console_script_declared(wheel: Path) -> None:
    zf = zipfile.ZipFile(wheel)
    (ep,) = [n for n in zf.namelist() if n.endswith("entry_points.txt")]
    text = zf.read(ep).decode()
    assert "acl-conformance = acl_conformance.conformance.command_line.cli:main" in text


def test_the_folder_mapping_is_stated_once() -> None:
    """acl_conformance.X.Y is X/Y.py: setup.py's PACKAGE_DIRS, one line per folder, and
    nothing in pyproject.toml repeats it."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" not in cfg and "package-dir" not in cfg
    assert PACKAGE_DIRS["acl_conformance"] == "acl_conformance"
    assert sorted(p.name for p in (ROOT / "acl_conformance").glob("*.py")) == [
        "__init__.py",
        "__main__.py",
    ], "the acl_conformance/ folder holds only the namespace root"
    for dotted, folder in PACKAGE_DIRS.items():
        assert dotted == "acl_conformance" or dotted == f"acl_conformance.{folder}"
    design = " ".join((ROOT / "docs" / "design.md").read_text().split())
    assert "`acl_conformance.X.Y` is `X/Y.py`" in design


def _imports(path: Path) -> list[tuple[int, str | None, int]]:
    """(line, module, level) of every ``from ... import`` of a module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            out.append((node.lineno, node.module, node.level))
    return out


def test_imports_are_relative_inside_a_folder_and_absolute_across() -> None:
    """A module imports its own folder's modules as ``from .x`` and every other folder's
    by the full name ``acl_conformance...``, so an import says where the file is.  The
    suite's test modules are the exception: pytest may import them under a name of its
    own (rootdir-based), where only full names resolve."""
    wrong = []
    for dotted, folder in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parent.name == "suite" and path.name.startswith("test_"):
                continue
            pkg = ".".join([dotted, *path.parent.relative_to(ROOT / folder).parts])
            for line, module, level in _imports(path):
                where = f"{path.relative_to(ROOT)}:{line}"
                if level > 1:
                    wrong.append(f"{where}: from {'.' * level}{module or ''} (another folder)")
                elif level == 0 and module and module.startswith(pkg + "."):
                    rest = module[len(pkg) + 1 :]
                    if "." not in rest:
                        wrong.append(f"{where}: from {module} (same folder: from .{rest})")
                elif level == 0 and module == pkg and path.name != "__main__.py":
                    wrong.append(f"{where}: from {module} (same folder: from .)")
    assert not wrong, "imports against the layout rule:\n" + "\n".join(wrong)


def test_report_schema_and_build_info_are_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "acl_conformance/reports/schema/report-1.schema.json" in names
    assert "acl_conformance/reports/schema/report-2.schema.json" in names
    assert "acl_conformance/reports/schema/report-4.schema.json" in names
    assert "acl_conformance/_build_info.json" in names


def test_reproducer_prelude_is_in_the_wheel(wheel: Path) -> None:
    zf = zipfile.ZipFile(wheel)
    name = "acl_conformance/conformance/traces/reproducer_prelude.c"
    assert name in set(zf.namelist())
    assert zf.read(name) == (ROOT / "conformance" / "traces" / "reproducer_prelude.c").read_bytes()
