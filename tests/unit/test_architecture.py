"""Structural rules of the package (docs/architecture.md): no import cycles, first-level packages
layered one way, small modules, pytest only in the adapter, private names of pytest/xdist/execnet/litellm
only in ``compat*`` modules.

The import graph is read from the source with :mod:`ast`: every ``import``/``from ... import``
anywhere in a module (function-level imports included, since they still bind the two modules
together), except those under ``if TYPE_CHECKING:``. Importing ``a.b.c`` also runs the
``__init__`` of ``a.b``, so that edge is counted too. A second graph counts the
``TYPE_CHECKING`` imports as well: a circle closed only through them is still two modules that
cannot be understood apart, and the package has none.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
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
    ("stats", "storage", "speech"),
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


# ---- private names of other projects: only in the compat modules -----------------------------------

FOREIGN = frozenset({"pytest", "_pytest", "xdist", "execnet", "litellm"})
"""Projects whose private names only ``compat*`` modules may use (plugin/compat_pytest.py,
plugin/compat_xdist.py, plugin/compat_execnet.py, llm/compat_litellm.py)."""
FRAME_ATTRIBUTES = frozenset({"tb_frame", "f_locals", "f_globals", "f_back", "f_code", "_getframe", "currentframe"})
"""Frame inspection reads another project's locals: a private interface too."""
OWN_PRIVATE_STRINGS = frozenset({"_initializing"})
"""Private attribute names read by ``getattr`` that belong to Python itself, not to a foreign project
(``ModuleSpec._initializing``: environment/imports.py)."""


@functools.cache
def foreign_globals() -> frozenset[str]:
    """Private names that the foreign packages' top-level modules define (``litellm._async_success_callback``):
    a string naming one is a ``getattr`` waiting to happen."""
    names: set[str] = set()
    for package in FOREIGN:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        tree = ast.parse(Path(spec.origin).read_text("utf-8"))
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            names.update(t.id for t in targets if isinstance(t, ast.Name) and _private(t.id))
    return frozenset(names)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.endswith("__")  # dunders are Python's protocol, not a project's


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _defined_names(cls: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
    return names


def foreign_private_uses(tree: ast.AST, package_classes: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Where ``tree`` touches a private name of pytest, xdist, execnet or litellm: ``_pytest`` at
    all; an import path or imported name starting with ``_``; ``<foreign module>._name``;
    ``getattr(obj, "_name")`` (and has/set/delattr) on anything but ``self``/``cls``; frame
    inspection; ``self._name`` in a class that inherits it from outside the package."""
    found: list[str] = []
    bound = set(FOREIGN)  # local names standing for a foreign module or one of its members
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in FOREIGN:
                    bound.add(alias.asname or parts[0])
                    if parts[0] == "_pytest" or any(_private(p) for p in parts):
                        found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            parts = node.module.split(".")
            if parts[0] in FOREIGN:
                bound.update(alias.asname or alias.name for alias in node.names)
                names = [a.name for a in node.names]
                if parts[0] == "_pytest" or any(_private(p) for p in parts) or any(_private(n) for n in names):
                    found.append(f"line {node.lineno}: from {node.module} import {', '.join(names)}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in FRAME_ATTRIBUTES:
                found.append(f"line {node.lineno}: frame inspection (.{node.attr})")
            elif _private(node.attr) and _root_name(node.value) in bound:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and node.args[1].value not in OWN_PRIVATE_STRINGS
            and not (isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls"))
        ):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ClassDef) and node.bases:
            if any(ast.unparse(b).split(".")[-1] in package_classes for b in node.bases):
                continue  # its inherited names are the package's own
            defined = _defined_names(node)
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id in ("self", "cls")
                    and _private(sub.attr)
                    and sub.attr not in defined
                ):
                    found.append(f"line {sub.lineno}: {ast.unparse(sub)} (inherited by {node.name})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in foreign_globals():
            found.append(f"line {node.lineno}: {node.value!r} (a private global of a foreign module)")
    return sorted(found, key=lambda text: (int(text.split()[1].rstrip(":")), text))


def test_private_names_of_other_projects_stay_in_the_compat_modules() -> None:
    trees = {_module_name(p): ast.parse(p.read_text("utf-8")) for p in PACKAGE.rglob("*.py")}
    classes = {n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    offenders = {
        name: uses
        for name, tree in sorted(trees.items())
        if not name.rsplit(".", 1)[-1].startswith("compat") and (uses := foreign_private_uses(tree, classes))
    }
    assert not offenders, "private names of pytest/xdist/execnet/litellm outside the compat modules:\n" + "\n".join(
        f"{name}: {'; '.join(uses)}" for name, uses in offenders.items()
    )


def test_the_private_name_check_sees_every_kind() -> None:
    source = (
        "import litellm\n"
        "from _pytest.junitxml import xml_key\n"
        "from litellm._internal_context import internal_sub_call\n"
        "from xdist.scheduler import LoadScheduling\n"
        "litellm._async_success_callback\n"
        "getattr(gateway, '_io', None)\n"
        "getattr(self, '_own', None)\n"
        "CALLBACKS = ('success_callback', '_async_success_callback')\n"
        "tb.tb_frame.f_locals\n"
        "class Deep(LoadScheduling):\n"
        "    _mine = 1\n"
        "    def schedule(self):\n"
        "        self._mine, self._send_tests(node, 1)\n"
        "class Tool(OwnBase):\n"
        "    def run(self):\n"
        "        return self._inherited_from_our_own_base\n"
    )
    found = foreign_private_uses(ast.parse(source), {"OwnBase"})
    assert found == [
        "line 2: from _pytest.junitxml import xml_key",
        "line 3: from litellm._internal_context import internal_sub_call",
        "line 5: litellm._async_success_callback",
        "line 6: getattr(gateway, '_io', None)",
        "line 8: '_async_success_callback' (a private global of a foreign module)",
        "line 9: frame inspection (.f_locals)",
        "line 9: frame inspection (.tb_frame)",
        "line 13: self._send_tests (inherited by Deep)",
    ]
