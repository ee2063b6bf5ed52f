"""Structural rules of the package (docs/architecture.md): no import cycles, small modules,
pytest only in the adapter.

The import graph is read from the source with :mod:`ast`: every ``import``/``from ... import``
anywhere in a module (function-level imports included, since they still bind the two modules
together), except those under ``if TYPE_CHECKING:``. Importing ``a.b.c`` also runs the
``__init__`` of ``a.b``, so that edge is counted too. A second graph counts the
``TYPE_CHECKING`` imports as well: a circle closed only for the type checker still ties the
modules' designs together, and the packages listed in :data:`NO_CYCLES_EVEN_FOR_TYPES` have none.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_tau2"
PYTEST_ADAPTER = {
    "pytest_tau2.plugin",
    "pytest_tau2.items",
    "pytest_tau2.concurrency",
    "pytest_tau2.invocation",
    "pytest_tau2.run_report",
    "pytest_tau2.worker_queue",
}
MAX_LINES = 500
NO_CYCLES_EVEN_FOR_TYPES = ("pytest_tau2.llm",)
"""Packages whose modules form no import circle even counting ``if TYPE_CHECKING:`` imports."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool, *, type_checking: bool = False) -> set[str]:
    """What ``module`` imports; ``type_checking``: also under ``if TYPE_CHECKING:``."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not type_checking:
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                found.add(target)
                found.update(f"{target}.{alias.name}" for alias in child.names)
            visit(child)

    visit(tree)
    return found


def import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"))
        targets = _imports(tree, name, path.name == "__init__.py", type_checking=type_checking)
        edges: set[str] = set()
        for target in targets:
            parts = target.split(".")
            for i in range(2, len(parts) + 1):  # a.b.c runs a.b's __init__ too (a is the root package)
                prefix = ".".join(parts[:i])
                if prefix in modules and prefix != name and not name.startswith(prefix + "."):
                    edges.add(prefix)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                connect(w)
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
            connect(v)
    return out


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles inside pytest_tau2:\n" + "\n".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize("package", NO_CYCLES_EVEN_FOR_TYPES)
def test_no_import_cycles_counting_type_checking(package: str) -> None:
    inside = {name for name in import_graph() if name == package or name.startswith(package + ".")}
    graph = {name: edges & inside for name, edges in import_graph(type_checking=True).items() if name in inside}
    found = cycles(graph)
    assert not found, f"import cycles inside {package}, counting TYPE_CHECKING imports:\n" + "\n".join(
        " <-> ".join(c) for c in found
    )


def test_type_checking_imports_are_counted_only_when_asked() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_tau2.llm.client import X\n"
    tree = ast.parse(source)
    assert "pytest_tau2.llm.client" not in _imports(tree, "pytest_tau2.llm.usage", False)
    assert "pytest_tau2.llm.client" in _imports(tree, "pytest_tau2.llm.usage", False, type_checking=True)


def test_cycle_finder_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_size(path: Path) -> None:
    lines = len(path.read_text("utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)} has {lines} lines (limit {MAX_LINES}): split it"


def test_only_the_adapter_imports_pytest() -> None:
    offenders = sorted(
        name
        for name, path in ((_module_name(p), p) for p in PACKAGE.rglob("*.py"))
        if name not in PYTEST_ADAPTER
        and {"pytest", "_pytest"} & {t.split(".")[0] for t in _imports(ast.parse(path.read_text("utf-8")), name, False)}
    )
    assert not offenders, f"modules outside the pytest adapter import pytest: {offenders}"
