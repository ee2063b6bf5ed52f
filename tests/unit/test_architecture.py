"""Structural rules of the package (docs/architecture.md): no import cycles, first-level packages
layered one way, small modules, pytest only in the adapter.

The import graph is read from the source with :mod:`ast`: every ``import``/``from ... import``
anywhere in a module (function-level imports included, since they still bind the two modules
together), except those under ``if TYPE_CHECKING:``. Importing ``a.b.c`` also runs the
``__init__`` of ``a.b``, so that edge is counted too. A second graph counts the
``TYPE_CHECKING`` imports as well: a circle closed only through them is still two modules that
cannot be understood apart, and the package has none.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_tau2"
ADAPTER = "pytest_tau2.plugin"
"""The pytest adapter: the only package that imports pytest, _pytest or xdist."""
MAX_LINES = 500


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool, *, type_checking: bool = False) -> set[str]:
    """The modules ``module`` imports; those under ``if TYPE_CHECKING:`` only with ``type_checking``."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and not type_checking and _is_type_checking(child):
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


def test_no_import_cycles_counting_type_checking() -> None:
    found = cycles(import_graph(type_checking=True))
    assert not found, "import cycles counting TYPE_CHECKING imports:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_type_checking_imports_are_counted_only_when_asked() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_tau2.llm.client import X\n"
    tree = ast.parse(source)
    assert "pytest_tau2.llm.client" not in _imports(tree, "pytest_tau2.llm.usage", False)
    assert "pytest_tau2.llm.client" in _imports(tree, "pytest_tau2.llm.usage", False, type_checking=True)


def test_cycle_finder_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_type_checking_graph_counts_type_checking_imports() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_tau2.b import B\n")
    assert "pytest_tau2.b" not in _imports(tree, "pytest_tau2.a", False)
    assert "pytest_tau2.b" in _imports(tree, "pytest_tau2.a", False, type_checking=True)
    graph = import_graph(type_checking=True)
    assert "pytest_tau2.conversation.loop" in graph["pytest_tau2.scoring.table"]  # only under TYPE_CHECKING there
    assert "pytest_tau2.conversation.loop" not in import_graph()["pytest_tau2.scoring.table"]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_size(path: Path) -> None:
    lines = len(path.read_text("utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)} has {lines} lines (limit {MAX_LINES}): split it"


def test_only_the_adapter_imports_pytest() -> None:
    offenders = sorted(
        name
        for name, path in ((_module_name(p), p) for p in PACKAGE.rglob("*.py"))
        if name != ADAPTER
        and not name.startswith(ADAPTER + ".")
        and {"pytest", "_pytest", "xdist"}
        & {t.split(".")[0] for t in _imports(ast.parse(path.read_text("utf-8")), name, False)}
    )
    assert not offenders, f"modules outside the pytest adapter import pytest: {offenders}"


DOOR = ("pytest_tau2.run", "pytest_tau2.report", "pytest_tau2.settings", "pytest_tau2.errors", ADAPTER)
"""What the adapter may import of the package: the engine only through run/ (docs/architecture.md)."""


def test_the_adapter_reaches_the_engine_through_run_only() -> None:
    graph = import_graph()
    offenders = {
        name: sorted(t for t in targets if not any(t == d or t.startswith(d + ".") for d in DOOR))
        for name, targets in graph.items()
        if name == ADAPTER or name.startswith(ADAPTER + ".")
    }
    offenders = {name: targets for name, targets in offenders.items() if targets}
    assert not offenders, f"the adapter imports the engine past run/: {offenders}"


def test_the_package_root_keeps_only_the_public_api() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert root == ["__init__.py", "cli.py", "errors.py"]  # settings/ is a package: the option table and its resolution


LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli", ""),
    ("plugin",),
    ("bot", "mcp"),
    ("run",),
    ("tau2_format",),
    ("report",),
    ("domains",),
    ("scenario",),
    ("scoring",),
    ("conversation",),
    ("settings",),
    ("llm",),
    ("data",),
    ("environment",),
    ("extension",),
    ("stats", "storage"),
    ("errors",),
)
"""The first-level packages (and root modules: ``""`` is the package's own ``__init__``, the public
API) from the top down: a module imports only from packages in layers below its own, never from
one above nor from a neighbour in its layer (docs/architecture.md, "Layers"). Every import
counts: at module level, inside a function, and under ``if TYPE_CHECKING:``."""


def _first_level(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layer_of() -> dict[str, int]:
    return {name: depth for depth, names in enumerate(LAYERS) for name in names}


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """``a.b -> c.d (LOW imports HIGH)`` for each import that does not point down the layers."""
    layer = _layer_of()
    found = []
    for source, targets in sorted(graph.items()):
        here = _first_level(source)
        for target in sorted(targets):
            there = _first_level(target)
            if here != there and layer[there] <= layer[here]:
                found.append(f"{source} -> {target} ({here or 'pytest_tau2'} imports {there or 'pytest_tau2'})")
    return found


def test_every_first_level_package_has_a_layer() -> None:
    present = {_first_level(name) for name in import_graph()}
    assert present == set(_layer_of()), "add new packages to LAYERS (and docs/architecture.md)"


def test_packages_import_only_the_layers_below_them() -> None:
    found = layer_violations(import_graph(type_checking=True))
    assert not found, "imports that point up or sideways (tests/unit/test_architecture.py LAYERS):\n" + "\n".join(found)


def test_the_layer_check_sees_an_import_that_points_up() -> None:
    graph = {"pytest_tau2.scoring.verdict": {"pytest_tau2.scenario.base"}, "pytest_tau2.bot.kind": {"pytest_tau2.mcp"}}
    assert layer_violations(graph) == [
        "pytest_tau2.bot.kind -> pytest_tau2.mcp (bot imports mcp)",
        "pytest_tau2.scoring.verdict -> pytest_tau2.scenario.base (scoring imports scenario)",
    ]
    tree = ast.parse("def f():\n    from pytest_tau2.run.trial import Trial\n")  # a function-level import counts
    assert "pytest_tau2.run.trial" in _imports(tree, "pytest_tau2.report.files", False)


def test_no_knot_among_first_level_packages() -> None:
    packages: dict[str, set[str]] = {}
    for source, targets in import_graph(type_checking=True).items():
        packages.setdefault(_first_level(source), set()).update(
            _first_level(t) for t in targets if _first_level(t) != _first_level(source)
        )
    assert not cycles(packages), cycles(packages)


PARTICIPANT_TABLE_IMPORTS = 12
"""run/participants.py is the table of participant kinds: the kinds that need more live elsewhere."""


def test_the_participant_table_imports_few_modules() -> None:
    name = "pytest_tau2.run.participants"
    path = PACKAGE / "run" / "participants.py"
    imported = _imports(ast.parse(path.read_text("utf-8")), name, False, type_checking=True)
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    ours = {t for t in imported if t in modules and t != name}
    own_packages = {t for t in ours if any(o.startswith(t + ".") for o in ours)}  # ``from a import b``: b counts
    assert len(ours - own_packages) <= PARTICIPANT_TABLE_IMPORTS, sorted(ours - own_packages)
