"""conformance/ is a few folders by concern, each saying in its docstring what it is for
and what it may import ("May import: ..."); the imports of its modules (every import, as
tests/test_import_graph.py finds them) keep to that, and few modules stand directly in
conformance/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from test_import_graph import NAMESPACE
from test_import_graph import import_graph

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT / "conformance"
FOLDERS = sorted(p.parent.name for p in CONFORMANCE.glob("*/__init__.py"))


def allowed(init: Path) -> set[str]:
    """The packages a folder's ``__init__.py`` docstring says its modules may import."""
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    found = re.search(r"May import:(.*?)\.\s*$", doc, re.S)
    assert found, f"{init} does not say what its folder may import"
    return {name.strip() for name in found.group(1).replace("\n", " ").split(",")}


def area(module: str) -> str:
    """Where a module stands: ``conformance.<folder>``, or a top-level package."""
    parts = module.split(".")[1:]
    if parts[:1] == ["conformance"] and len(parts) > 2:
        return f"conformance.{parts[1]}"
    return parts[0] if parts else NAMESPACE


def imported(graph: dict[str, dict[str, int]], folder: str) -> dict[str, list[str]]:
    """Each area the folder's modules import, with the importing module and line."""
    here = f"conformance.{folder}"
    out: dict[str, list[str]] = {}
    for module, edges in graph.items():
        if area(module) != here:
            continue
        for target, line in edges.items():
            if area(target) != here:
                out.setdefault(area(target), []).append(f"{module}:{line}")
    return out


def test_the_folders_are_found() -> None:
    assert {"harness", "authoring", "session", "gating", "traces", "plugin"} <= set(FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_folder_imports_only_what_its_docstring_allows(folder: str) -> None:
    may = allowed(CONFORMANCE / folder / "__init__.py")
    wrong = {k: v for k, v in imported(import_graph(), folder).items() if k not in may}
    assert not wrong, f"conformance/{folder} may import {sorted(may)}; also imports {wrong}"


def test_few_modules_stand_directly_in_conformance() -> None:
    modules = sorted(p.name for p in CONFORMANCE.glob("*.py"))
    assert len(modules) <= 12, modules


def test_the_rule_catches_a_forbidden_import(tmp_path: Path) -> None:
    """The check itself: a folder that may import only reference_impl, importing the
    harness, is caught; its own modules and the reference model are not counted."""
    init = tmp_path / "__init__.py"
    init.write_text('"""A made-up folder.\n\nMay import: reference_impl,\nadapters.\n"""\n')
    graph = {
        f"{NAMESPACE}.conformance.made_up.m": {
            f"{NAMESPACE}.conformance.harness.harness": 3,
            f"{NAMESPACE}.conformance.made_up.n": 4,
            f"{NAMESPACE}.reference_impl.model": 5,
        }
    }
    assert allowed(init) == {"reference_impl", "adapters"}
    found = imported(graph, "made_up")
    assert found == {
        "conformance.harness": [f"{NAMESPACE}.conformance.made_up.m:3"],
        "reference_impl": [f"{NAMESPACE}.conformance.made_up.m:5"],
    }
    assert set(found) - allowed(init) == {"conformance.harness"}
