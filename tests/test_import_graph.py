"""No import circle in the shipped packages: the graph is built from the source.

Every ``acl_conformance.*`` module is a node (``X/Y.py`` is ``acl_conformance.X.Y``, as
setup.py's ``PACKAGE_DIRS`` maps it); every import statement anywhere in a module is an
edge: at the top, inside a function, under ``if TYPE_CHECKING:`` (a circle that only
the type checker walks is still a circle a reader must hold in their head).  Relative
imports are resolved; ``from package import name`` is an edge to the submodule when
``name`` is one, else to the package.  Importing a submodule runs its package's
``__init__`` too, but that is not counted as an edge (every module would otherwise form
a circle with its own package).

One case per package: it fails naming a circle that passes through that package.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Collection
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NAMESPACE = "acl_conformance"


def _package_dirs() -> dict[str, Path]:
    """Package name -> its folder, as setup.py maps them."""
    spec = importlib.util.spec_from_file_location("_acl_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # its setup() call is under ``if __name__ == "__main__"``
    return {name: ROOT / folder for name, folder in setup.PACKAGE_DIRS.items()}


def _modules() -> dict[str, Path]:
    """Every shipped module by its dotted name (a package by its ``__init__.py``)."""
    out: dict[str, Path] = {}
    for package, folder in _package_dirs().items():
        if package == NAMESPACE:
            files = sorted(folder.glob("*.py"))  # the other packages are mapped themselves
        else:
            files = sorted(folder.rglob("*.py"))
        for path in files:
            rel = path.relative_to(folder).with_suffix("").parts
            if any(part.startswith(".") or part == "__pycache__" for part in rel):
                continue
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join((package, *rel))] = path
    return out


MODULES = _modules()


def _resolve(module: str, path: Path, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import ...`` in ``module``."""
    if level == 0:
        return name or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{name}" if name else package


def _targets(
    module: str, path: Path, modules: Collection[str] = MODULES.keys()
) -> Iterator[tuple[str, int]]:
    """(imported module of ``modules``, line) for every import statement in ``module``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name:
                    yield name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    yield sub, node.lineno
                elif base in modules:
                    yield base, node.lineno


def import_graph() -> dict[str, dict[str, int]]:
    """Module -> {module it imports: the line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for module, path in MODULES.items():
        edges: dict[str, int] = {}
        for target, line in _targets(module, path):
            if target != module:
                edges.setdefault(target, line)
        graph[module] = edges
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def one_circle(graph: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """A shortest circle through the first module of ``component``, as the modules in order
    (the first again at the end)."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    return [*paths[v], start]
                if w in members and w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no circle through {start}")  # pragma: no cover


def describe(graph: dict[str, dict[str, int]], circle: list[str]) -> str:
    short = [m.removeprefix(NAMESPACE + ".") for m in circle]
    steps = [
        f"{a} (line {graph[circle[k]][circle[k + 1]]}) -> {short[k + 1]}"
        for k, a in enumerate(short[:-1])
    ]
    return "import circle: " + ", ".join(steps)


PACKAGES = sorted(
    {m.split(".")[1] for m in MODULES if m.count(".") >= 1 and m.split(".")[1] != "__main__"}
)


def test_the_graph_is_found() -> None:
    assert {"reference_impl", "adapters", "conformance", "reports"} <= set(PACKAGES)
    graph = import_graph()
    model = f"{NAMESPACE}.reference_impl.model"
    assert model in graph and f"{NAMESPACE}.reference_impl.apply" in graph[model]


def test_every_kind_of_import_is_an_edge(tmp_path: Path) -> None:
    """Absolute and relative, at the top, in a function, under TYPE_CHECKING; a name
    imported from a package is an edge to its submodule when it is one."""
    (tmp_path / "m.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import p.a.x\n"
        "from . import b\n"
        "from .c import thing\n"
        "from .. import not_a_module\n"
        "if TYPE_CHECKING:\n"
        "    from .d import D\n"
        "def f():\n"
        "    from p.e import g\n"
        "    import os\n"
    )
    modules = {"p", "p.a", "p.e", "p.s", "p.s.b", "p.s.c", "p.s.d", "p.s.m"}
    found = sorted(_targets("p.s.m", tmp_path / "m.py", modules))
    assert found == [("p", 5), ("p.a", 2), ("p.e", 9), ("p.s.b", 3), ("p.s.c", 4), ("p.s.d", 7)]


def test_a_circle_is_found_and_named() -> None:
    graph = {"p.a": {"p.b": 3}, "p.b": {"p.c": 5}, "p.c": {"p.a": 7, "p.d": 8}, "p.d": {}}
    (component,) = circles(graph)
    assert component == ["p.a", "p.b", "p.c"]
    circle = one_circle(graph, component)
    assert circle == ["p.a", "p.b", "p.c", "p.a"]
    assert describe(graph, circle) == (
        "import circle: p.a (line 3) -> p.b, p.b (line 5) -> p.c, p.c (line 7) -> p.a"
    )


@pytest.mark.parametrize("package", [*PACKAGES, NAMESPACE])
def test_no_import_circle(package: str) -> None:
    """No circle passes through a module of ``package`` (``acl_conformance``: the root)."""
    graph = import_graph()
    if package == NAMESPACE:
        mine = {m for m in graph if m.count(".") == 0 or m == f"{NAMESPACE}.__main__"}
    else:
        mine = {m for m in graph if m.split(".")[1:2] == [package]}
    found = [c for c in circles(graph) if mine & set(c)]
    assert not found, "\n".join(
        describe(graph, one_circle(graph, c))
        + f"\n  (every module in this knot: {', '.join(m.removeprefix(NAMESPACE + '.') for m in c)})"
        for c in found
    )
