"""The simulator shares constants with reference_impl, and no logic.

Two checks: (1) statically, every import in the simulator's files and in the
adapter contract that reaches into ``acl_conformance.reference_impl`` names
``constants`` only, and nothing imports dynamically; (2) in fresh
interpreters, importing the simulator loads no ``reference_impl`` module that
importing ``reference_impl.constants`` alone would not load, and the
simulator still imports when every ``reference_impl`` module but
``constants`` is made unimportable.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIM_FILES = sorted((ROOT / "adapters" / "simulator").glob("*.py"))
CHECKED = [*SIM_FILES, ROOT / "adapters" / "base.py"]
MODEL = "acl_conformance.reference_impl"
ALLOWED = f"{MODEL}.constants"


def package_of(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("").parts
    assert rel[0] == "adapters"
    return ".".join(("acl_conformance", *rel[:-1]))


def model_imports(source: str, package: str) -> list[str]:
    """Every module or name reached in reference_impl, as a dotted absolute name."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(MODEL)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            if module == MODEL:
                found += [f"{MODEL}.{a.name}" for a in node.names]
            elif module.startswith(MODEL + "."):
                found.append(module)
    return found


def dynamic_imports(source: str) -> list[str]:
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            if name in ("import_module", "__import__", "exec", "eval", "find_spec"):
                calls.append(name)
    return calls


def test_the_files_are_found() -> None:
    assert len(SIM_FILES) >= 8
    assert any("constants" in "".join(model_imports(p.read_text(), package_of(p))) for p in CHECKED)


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.name)
def test_only_constants_are_imported_from_the_model(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    for name in model_imports(source, package_of(path)):
        assert name == ALLOWED, f"{path.name} imports {name} from the model"
    assert dynamic_imports(source) == [], f"{path.name} imports dynamically"


@pytest.mark.parametrize(
    "source, package, expected",
    [
        (
            "from acl_conformance.reference_impl import model",
            "acl_conformance.adapters",
            [f"{MODEL}.model"],
        ),
        ("import acl_conformance.reference_impl.memory", "x", [f"{MODEL}.memory"]),
        (
            "from ...reference_impl.order import f",
            "acl_conformance.adapters.simulator",
            [f"{MODEL}.order"],
        ),
        ("from ..reference_impl import constants", "acl_conformance.adapters", [ALLOWED]),
        ("from acl_conformance.reference_impl.constants import SIZE_MAX", "x", [ALLOWED]),
        ("from .streams import Stream", "acl_conformance.adapters.simulator", []),
    ],
)
def test_the_checker_sees_every_form_of_import(
    source: str, package: str, expected: list[str]
) -> None:
    assert model_imports(source, package) == expected


def test_the_checker_sees_dynamic_imports() -> None:
    assert dynamic_imports("import importlib\nimportlib.import_module('x')") == ["import_module"]
    assert dynamic_imports("__import__('x')") == ["__import__"]


def _loaded_after(statement: str) -> set[str]:
    code = (
        "import json, sys\n"
        f"{statement}\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({MODEL!r}))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_the_simulator_loads_nothing_beyond_what_constants_loads() -> None:
    baseline = _loaded_after(f"import {ALLOWED}")
    with_sim = _loaded_after("import acl_conformance.adapters.simulator")
    assert ALLOWED in with_sim
    assert with_sim <= baseline, f"the simulator pulls in {sorted(with_sim - baseline)}"


BLOCKED_RUN = f"""
import importlib.abc, importlib.util, json, sys, types

# Stand in for the package, so that its __init__ (which imports the model) does not run,
# and refuse every module of it but constants: the simulator must still import.
spec = importlib.util.find_spec({MODEL!r})
stub = types.ModuleType({MODEL!r})
stub.__path__ = list(spec.submodule_search_locations)
sys.modules[{MODEL!r}] = stub

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith({MODEL!r} + ".") and name != {ALLOWED!r}:
            raise ImportError("blocked: " + name)
        return None

sys.meta_path.insert(0, Block())
import acl_conformance.adapters.simulator as sim
s = sim.Simulator()
assert s.set_device(0) == 0
s.close()
print(json.dumps(sorted(m for m in sys.modules if m.startswith({MODEL!r}))))
"""


def test_the_simulator_runs_with_every_model_module_but_constants_blocked() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUN], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout.strip().splitlines()[-1])) == {MODEL, ALLOWED}


def test_the_blocking_harness_can_fail() -> None:
    # The same harness refuses a model module, so the test above is not vacuous.
    code = BLOCKED_RUN.replace(
        "import acl_conformance.adapters.simulator as sim",
        f"import {MODEL}.model\nimport acl_conformance.adapters.simulator as sim",
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "blocked" in out.stderr
