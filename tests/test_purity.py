"""reference_impl is pure: no threads, no I/O, nothing from the other parts of the suite."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODEL_FILES = sorted((ROOT / "reference_impl").rglob("*.py"))

ALLOWED_MODULES = {
    "__future__",
    "abc",
    "bisect",
    "collections",
    "collections.abc",
    "dataclasses",
    "enum",
    "functools",
    "itertools",
    "math",
    "types",
    "typing",
    "numpy",
    "numpy.typing",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__"}


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, 0) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append((node.module or "", node.level))
    return out


def test_model_files_found() -> None:
    assert len(MODEL_FILES) >= 8


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_only_pure_imports(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for module, level in _imports(tree):
        if level > 0:
            assert level == 1, f"{path.name}: relative import leaves reference_impl"
            continue
        assert module in ALLOWED_MODULES, f"{path.name} imports {module}: not allowed in the model"


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: p.name)
def test_no_io_calls(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, (
                f"{path.name}:{node.lineno} calls {node.func.id}()"
            )


def test_the_check_can_fail(tmp_path: Path) -> None:
    bad = "import threading\nfrom acl_conformance.adapters import base\nopen('x')\n"
    tree = ast.parse(bad)
    mods = [m for m, _ in _imports(tree)]
    assert "threading" in mods and "acl_conformance.adapters" in mods
    assert not set(mods) <= ALLOWED_MODULES
