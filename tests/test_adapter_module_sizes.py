"""The simulator's and the variants' modules stay small: one job each, under 400 lines."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 400
MODULES = sorted(
    [
        *(ROOT / "adapters" / "simulator").glob("*.py"),
        *(ROOT / "adapters" / "variants").glob("*.py"),
    ]
)


def test_the_modules_are_found() -> None:
    names = {p.name for p in MODULES}
    assert {"simulator.py", "core.py", "mutants.py", "mutant_base.py"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_module_is_under_the_limit(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines < LIMIT, f"{path.relative_to(ROOT)} has {lines} lines (split it by job)"
