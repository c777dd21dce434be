"""conformance/ is a few folders by concern, each saying in its docstring what it is for
and what it may import ("May import: ..."); the imports of its modules keep to that, and
few modules stand directly in conformance/."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT / "conformance"
FOLDERS = sorted(p.parent.name for p in CONFORMANCE.glob("*/__init__.py"))


def allowed(folder: str) -> set[str]:
    """The packages a folder's docstring says its modules may import."""
    doc = ast.get_docstring(ast.parse((CONFORMANCE / folder / "__init__.py").read_text())) or ""
    found = re.search(r"May import:(.*?)\.\s*$", doc, re.S)
    assert found, f"conformance/{folder}/__init__.py does not say what it may import"
    return {name.strip() for name in found.group(1).replace("\n", " ").split(",")}


def imported(folder: str) -> dict[str, list[str]]:
    """Each package (``reference_impl``, ``conformance.harness``, ...) the folder's modules
    import, with where; every import counts (TYPE_CHECKING and function level too)."""
    out: dict[str, list[str]] = {}
    for path in sorted((CONFORMANCE / folder).rglob("*.py")):
        parts = path.relative_to(CONFORMANCE).parts
        package = ["acl_conformance", "conformance", *parts[:-1]]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                dotted = [*base, *(node.module.split(".") if node.module else [])]
            else:
                dotted = (node.module or "").split(".")
            if dotted[0] != "acl_conformance":
                continue
            if dotted[1:2] == ["conformance"] and len(dotted) > 2:
                target = f"conformance.{dotted[2]}"
            else:
                target = dotted[1] if len(dotted) > 1 else "acl_conformance"
            if target != f"conformance.{folder}":
                out.setdefault(target, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def test_the_folders_are_found() -> None:
    assert {"harness", "authoring", "session", "gating", "traces", "plugin"} <= set(FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_folder_imports_only_what_its_docstring_allows(folder: str) -> None:
    may = allowed(folder)
    wrong = {k: v for k, v in imported(folder).items() if k not in may}
    assert not wrong, f"conformance/{folder} may import {sorted(may)}; also imports {wrong}"


def test_few_modules_stand_directly_in_conformance() -> None:
    modules = sorted(p.name for p in CONFORMANCE.glob("*.py"))
    assert len(modules) <= 12, modules


def test_the_rule_catches_a_forbidden_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check itself: a folder that may import only reference_impl, importing the
    harness, is caught."""
    folder = tmp_path / "conformance" / "made_up"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        '"""A made-up folder.\n\nMay import: reference_impl.\n"""\n'
    )
    (folder / "m.py").write_text(
        "from acl_conformance.conformance.harness.harness import Harness\n"
    )
    here = sys.modules[__name__]
    monkeypatch.setattr(here, "CONFORMANCE", tmp_path / "conformance")
    monkeypatch.setattr(here, "ROOT", tmp_path)
    assert allowed("made_up") == {"reference_impl"}
    assert set(imported("made_up")) == {"conformance.harness"}
