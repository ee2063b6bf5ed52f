"""``pytest-tau2 data view [--from CHECKOUT|URL] [--into FILE]``: the tau2 view file (``agent_view.json``, what
``--tau2-prompts upstream`` sends) derived from a checkout of upstream tau2-bench at the pin.

Upstream's code is *read*, never imported or run: its Python files (from a checkout, or fetched
from a raw-file host, GitHub's at the pin by default) are parsed with :mod:`ast`, and
from the parse tree come the agent's instruction and system-prompt template (``LLMAgent``'s module
constants), the user simulator's template, each domain's tool methods (name, docstring, parameters
with their annotations and defaults, in upstream's toolkit order) and banking_knowledge's
discoverable tools' docstrings. The tool schemas are then built the way upstream's ``Tool`` builds
them (the docstring parsed by ``docstring_parser``, the parameters made a pydantic model named
``parameters``, its JSON schema), with the annotation types rebuilt from the parse tree (builtins,
``typing`` forms, the domain's pydantic models and enums). The guideline texts are upstream's data
files; the policies come from the tau2 data folder, as the run reads them.

The text this writes is upstream's; it is data, like the tau2 data folder, and never part of this
repository.
"""

from __future__ import annotations

import argparse
import ast
import enum
import json
import re
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pytest_tau2.environment.jsontypes import JSONObject
from pytest_tau2.errors import DataError

ToolkitRef = tuple[str, str]
"""(module path under ``src/tau2/``, class name) of a toolkit."""

# Facts about upstream at the pin: which toolkit class each domain's agent and user get
# (banking_knowledge with its bm25 retrieval variant), where the prompt constants live.
TOOLKITS: dict[str, tuple[ToolkitRef, ToolkitRef | None]] = {
    "retail": (("domains/retail/tools.py", "RetailTools"), None),
    "airline": (("domains/airline/tools.py", "AirlineTools"), None),
    "mock": (("domains/mock/tools.py", "MockTools"), ("domains/mock/user_tools.py", "MockUserTools")),
    "telecom": (("domains/telecom/tools.py", "TelecomTools"), ("domains/telecom/user_tools.py", "TelecomUserTools")),
    "banking_knowledge": (
        ("domains/banking_knowledge/retrieval_toolkits.py", "KnowledgeToolsWithKBSearch"),
        ("domains/banking_knowledge/tools.py", "KnowledgeUserTools"),
    ),
}
AGENT_MODULE = "agent/llm_agent.py"
USER_MODULE = "user/user_simulator.py"
GUIDELINES = {
    "plain": "simulation_guidelines.md",
    "tools": "simulation_guidelines_tools.md",
    "voice": "simulation_guidelines_voice.md",
    "voice_tools": "simulation_guidelines_voice_tools.md",
}
"""The user simulator's guideline files (upstream's data): without / with tools, and the voice ones."""
SOURCE_URL = "https://raw.githubusercontent.com/sierra-research/tau2-bench"
"""Where ``pytest-tau2 data view`` reads upstream's source files when given no checkout (+ ``/<commit>``)."""
BANKING_DISCOVERABLE: dict[str, ToolkitRef] = {
    "agent": ("domains/banking_knowledge/tools.py", "KnowledgeTools"),
    "user": ("domains/banking_knowledge/tools.py", "KnowledgeUserTools"),
}


class Source:
    """Upstream's ``src/tau2`` package, parsed on demand (one tree per module)."""

    def __init__(self, checkout: Path | str) -> None:
        """``checkout``: a folder (a checkout of upstream), or the http(s) URL of one (a raw-file
        host such as ``https://raw.githubusercontent.com/sierra-research/tau2-bench/<commit>``)."""
        self.url = str(checkout).rstrip("/") if str(checkout).startswith(("http://", "https://")) else None
        self.root = Path(checkout) / "src" / "tau2"
        if self.url is None and not self.root.is_dir():
            raise DataError(f"{checkout}: not a tau2-bench checkout (no src/tau2/ folder)")
        self._trees: dict[str, ast.Module] = {}
        self._types: dict[tuple[str, str], object] = {}

    def where(self, module: str) -> str:
        return f"{self.url}/src/tau2/{module}" if self.url else str(self.root / module)

    def tree(self, module: str) -> ast.Module:
        if module not in self._trees:
            try:
                text = _download(self.where(module)) if self.url else (self.root / module).read_text("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise DataError(f"{self.where(module)}: cannot be read ({exc})") from None
            try:
                self._trees[module] = ast.parse(text, self.where(module))
            except SyntaxError as exc:
                raise DataError(f"{self.where(module)}: not Python ({exc})") from None
        return self._trees[module]

    def top(self, module: str, name: str) -> ast.stmt | None:
        for node in self.tree(module).body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == name:
                return node
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return node
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                return node
        return None

    def locate(self, module: str, name: str) -> tuple[str, ast.stmt]:
        """Where ``name`` as seen from ``module`` is defined (following ``from tau2.x import name``)."""
        found = self.top(module, name)
        if found is not None:
            return module, found
        for node in self.tree(module).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tau2."):
                if any((alias.asname or alias.name) == name for alias in node.names):
                    return self.locate(node.module.removeprefix("tau2.").replace(".", "/") + ".py", name)
        raise DataError(f"{self.where(module)}: cannot find the definition of {name!r}")

    def string(self, module: str, name: str) -> str:
        node = self.top(module, name)
        if not isinstance(node, ast.Assign):
            raise DataError(f"{self.where(module)}: no module constant {name}")
        return _string(node.value, f"{module}:{name}")

    # ---- types ----------------------------------------------------------------------------------

    def annotation(self, module: str, node: ast.expr | None) -> object:
        """The Python type an annotation denotes (rebuilt, never evaluated)."""
        if node is None:
            return Any
        if isinstance(node, ast.Constant):
            return None if node.value is None else node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.annotation(module, node.left) | self.annotation(module, node.right)  # type: ignore[operator]
        if isinstance(node, ast.Subscript):
            base = self.annotation(module, node.value)
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if base is typing.Literal:
                return typing.Literal[tuple(_literal(i) for i in items)]
            if base is typing.Annotated:
                return typing.Annotated[self.annotation(module, items[0]), *(self.value(module, i) for i in items[1:])]
            args = tuple(self.annotation(module, i) for i in items)
            return base[args if len(args) > 1 else args[0]]  # type: ignore[index]
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name in _BUILTIN_TYPES:
            return _BUILTIN_TYPES[name]
        if name is None:
            raise DataError(f"{self.where(module)}: an annotation this reader does not know: {ast.unparse(node)}")
        return self.named_type(module, name)

    def named_type(self, module: str, name: str) -> object:
        where, node = self.locate(module, name)
        key = (where, name)
        if key not in self._types:
            if isinstance(node, ast.Assign):  # a type alias: Literal[...], Annotated[...]
                self._types[key] = self.annotation(where, node.value)
            elif isinstance(node, ast.ClassDef):
                self._types[key] = self._class(where, node)
            else:
                raise DataError(f"{self.where(where)}: {name} is not a type")
        return self._types[key]

    def _class(self, module: str, node: ast.ClassDef) -> object:
        bases = [ast.unparse(b) for b in node.bases]
        if "Enum" in bases or "enum.Enum" in bases:
            members = {
                s.targets[0].id: _literal(s.value)
                for s in node.body
                if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)
            }
            mixin = (str,) if "str" in bases else ()
            return enum.Enum(node.name, members, type=mixin[0] if mixin else None)
        import pydantic

        parent: Any = pydantic.BaseModel
        config: dict[str, object] = {}
        for base in bases:
            if base == "BaseModelNoExtra":
                config["extra"] = "forbid"
            elif base != "BaseModel":
                parent = self.named_type(module, base)
        fields: dict[str, Any] = {}
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                default = self.value(module, statement.value) if statement.value is not None else ...
                fields[statement.target.id] = (self.annotation(module, statement.annotation), default)
            elif isinstance(statement, ast.Assign) and ast.unparse(statement.targets[0]) == "model_config":
                config.update(cast("dict[str, object]", self.value(module, statement.value)))
        model = pydantic.create_model(
            node.name,
            __base__=parent,
            __doc__=ast.get_docstring(node, clean=True),
            **fields,
        )
        if config:
            model.model_config.update(config)
            model.model_rebuild(force=True)
        return model

    def value(self, module: str, node: ast.expr | None) -> object:
        """A default value or a ``Field(...)``/``ConfigDict(...)`` call, rebuilt."""
        import pydantic

        if node is None:
            return None
        if isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            makers: dict[str, Callable[..., object]] = {"Field": pydantic.Field, "ConfigDict": dict}
            make = makers.get(called)
            if make is None:
                raise DataError(f"{self.where(module)}: a call this reader does not know: {ast.unparse(node)}")
            args = [self.value(module, a) for a in node.args]
            kwargs = {k.arg: self.value(module, k.value) for k in node.keywords if k.arg}
            return make(*args, **kwargs)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):  # Enum.MEMBER
            return getattr(self.named_type(module, node.value.id), node.attr)
        return _literal(node)

    # ---- toolkits -------------------------------------------------------------------------------

    def toolkit_methods(self, ref: ToolkitRef, *, discoverable: bool = False) -> list[tuple[str, ast.FunctionDef]]:
        """A toolkit's tool methods in upstream's order: each class of its MRO in turn, its own
        methods in definition order, a name met again keeping its first place."""
        seen: dict[str, tuple[str, ast.FunctionDef]] = {}
        for module, cls in self._mro(*ref):
            for statement in cls.body:
                if isinstance(statement, ast.FunctionDef) and statement.name not in seen:
                    marks = [ast.unparse(d) for d in statement.decorator_list]
                    tool = any(m.startswith("is_tool(") for m in marks)
                    found = any(m.startswith("is_discoverable_tool(") for m in marks)
                    if found if discoverable else tool:
                        seen[statement.name] = (module, statement)
        return list(seen.values())

    def _mro(self, module: str, name: str) -> list[tuple[str, ast.ClassDef]]:
        where, node = self.locate(module, name)
        if not isinstance(node, ast.ClassDef):
            raise DataError(f"{self.where(where)}: {name} is not a class")
        parents = [ast.unparse(b) for b in node.bases if ast.unparse(b) not in ("ToolKitBase", "object")]
        chains = [self._mro(where, p) for p in parents] + [[self._mro(where, p)[0] for p in parents]]
        merged: list[tuple[str, ast.ClassDef]] = [(where, node)]
        while any(chains):  # C3 linearisation, as Python orders the bases
            for chain in chains:
                head = chain[0] if chain else None
                if head and not any(head in c[1:] for c in chains):
                    break
            else:
                raise DataError(f"{self.where(where)}: {name} has no consistent method order")
            merged.append(head)
            chains = [[c for c in chain if c != head] for chain in chains if chain]
            chains = [c for c in chains if c]
        return merged


_BUILTIN_TYPES: dict[str, object] = {
    "str": str, "int": int, "float": float, "bool": bool, "dict": dict, "list": list, "tuple": tuple,
    "Dict": dict, "List": list, "Tuple": tuple, "Any": Any, "Optional": typing.Optional, "Union": typing.Union,
    "Literal": typing.Literal, "Annotated": typing.Annotated, "None": None,
}  # fmt: skip


def _download(url: str) -> str:
    """One source file over HTTP(S), as text (an error: OSError, which the caller names)."""
    import urllib.request

    with urllib.request.urlopen(url, timeout=60) as reply:
        return cast(bytes, reply.read()).decode("utf-8")


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise DataError(f"not a literal value: {ast.unparse(node)}") from None


def _string(node: ast.expr, where: str) -> str:
    """A string constant, possibly ``"...".strip()`` or ``a + b``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _string(node.left, where) + _string(node.right, where)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("strip", "lstrip", "rstrip")
        and not node.args
    ):
        return cast(str, getattr(_string(node.func.value, where), node.func.attr)())
    raise DataError(f"{where}: not a string constant ({ast.unparse(node)[:80]})")


def tool_schema(source: Source, module: str, method: ast.FunctionDef) -> JSONObject:
    """What upstream's ``Tool(func).openai_schema`` gives for one method (see the module doc)."""
    import docstring_parser
    import pydantic

    doc = docstring_parser.parse(ast.get_docstring(method, clean=False) or "")
    described = {p.arg_name: p for p in doc.params}
    positional = method.args.args[1:]  # without self
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(method.args.defaults))
    defaults += list(method.args.defaults)
    fields: dict[str, Any] = {}
    for arg, default_node in zip(positional, defaults, strict=True):
        default: Any = ... if default_node is None else source.value(module, default_node)
        if arg.arg in described:
            default = pydantic.Field(default, description=described[arg.arg].description)
        fields[arg.arg] = (source.annotation(module, arg.annotation), default)
    parameters = pydantic.create_model("parameters", **fields)
    short, long = doc.short_description or "", doc.long_description or ""
    description = (short + "\n\n" + long if long else short) or method.name
    return {"type": "function",
            "function": {"name": method.name, "description": description,
                         "parameters": parameters.model_json_schema()}}  # fmt: skip


def _split_at(lines: list[str], heading: str) -> tuple[list[str], list[str] | None]:
    """The lines before the first line that is ``heading`` alone (blank around it allowed), and those
    after it (None: no such line, or nothing follows it)."""
    for index, line in enumerate(lines[1:-1], start=1):
        if line.strip() == heading:
            return lines[:index], lines[index + 1 :]
    return lines, None


def default_success_message(tree: ast.Module) -> str:
    """The success message upstream's card parser falls back on (a docstring without ``Returns:``),
    read from its module: the string first assigned to ``success_message`` there."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "success_message" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise DataError("upstream's banking tools module assigns no default success_message (not the pinned source?)")


def discoverable_text(method: ast.FunctionDef, default_success: str = "") -> JSONObject:
    """A discoverable tool's card, from its docstring by upstream's rule: the text before an
    ``Args:`` line is the description; in the Args section each line ``name (type[, optional]):
    text`` is a parameter (type ``string`` when none is given); the first line after a
    ``Returns:`` line there is the success message (else ``default_success``, upstream's fallback)."""
    lines = (ast.get_docstring(method, clean=True) or "").split("\n")
    head, rest = _split_at(lines, "Args:")
    parameters: JSONObject = {}
    success = default_success
    if rest is not None:
        args, returns = _split_at(rest, "Returns:")
        if returns is not None:
            success = "\n".join(returns).strip().split("\n")[0].strip()
        for line in args:
            found = _PARAMETER.fullmatch(line.strip())
            if found is None:
                continue
            kind = found["kind"] or "string"
            optional = "optional" in kind.lower()
            parameters[found["name"]] = {
                "type": _OPTIONAL.sub("", kind).strip() or "string",
                "description": found["text"].strip(),
                "required": not optional,
            }
    return {"description": "\n".join(head).strip(), "parameters": parameters, "success_message": success}


_PARAMETER = re.compile(r"(?P<name>\w+)\s*(?:\((?P<kind>[^)]+)\))?\s*:\s*(?P<text>.+)")
_OPTIONAL = re.compile(r",?\s*optional", re.IGNORECASE)


def derive(checkout: Path | str, data_dir: Path, pin: str) -> JSONObject:
    """The view, as ``../shared/tau2-view/agent_view.json`` holds it, plus banking_knowledge's
    discoverable tools (``domains.banking_knowledge.discoverable_tools``)."""
    from pytest_tau2.domains.tau2_common import upstream_view

    source = Source(checkout)
    guidelines = {}
    for key, name in GUIDELINES.items():
        candidates = [data_dir / "tau2" / "user_simulator" / name]
        if source.url is None:
            candidates.insert(0, Path(checkout) / "data" / "tau2" / "user_simulator" / name)
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            raise DataError(f"no {name} in {' or '.join(str(c.parent) for c in candidates)}")
        guidelines[key] = found.read_text("utf-8")  # as upstream reads them (a persona mark stays)
    view: dict[str, Any] = {
        "agent_instruction": source.string(AGENT_MODULE, "AGENT_INSTRUCTION"),
        "agent_system_prompt_template": source.string(AGENT_MODULE, "SYSTEM_PROMPT"),
        "user_system_prompt_template": source.string(USER_MODULE, "SYSTEM_PROMPT"),
        "user_guidelines": guidelines,
        "generated_by": "pytest-tau2 data view: derived from upstream tau2's source at the pin (read, not run)",
        "pin": pin,
        "domains": {},
    }
    policies = _policies(data_dir)
    for domain, (agent_ref, user_ref) in TOOLKITS.items():
        entry: dict[str, Any] = {
            "tools": [tool_schema(source, m, f) for m, f in source.toolkit_methods(agent_ref)],
            "user_tools": [tool_schema(source, m, f) for m, f in source.toolkit_methods(user_ref)] if user_ref else [],
            "policy": policies[domain],
        }
        entry["agent_system_prompt"] = upstream_view.agent_system_prompt(cast(Any, view), policies[domain])
        view["domains"][domain] = entry
    fallback = default_success_message(source.tree(BANKING_DISCOVERABLE["user"][0]))
    view["domains"]["banking_knowledge"]["discoverable_tools"] = {
        side: {f.name: discoverable_text(f, fallback) for _, f in source.toolkit_methods(ref, discoverable=True)}
        for side, ref in BANKING_DISCOVERABLE.items()
    }
    return view


def _policies(data_dir: Path) -> Mapping[str, str]:
    """Each domain's policy as the run builds it (banking_knowledge: its bm25 prompt)."""
    import pytest_tau2.domains.tau2_sources  # noqa: F401  (registers the tau2 domains)
    from pytest_tau2.domains.tau2_common.base import Tau2BaseScenario
    from pytest_tau2.scenario.registry import all_scenarios
    from pytest_tau2.settings import Settings

    settings = Settings(data_dir=str(data_dir), results_dir="unused", prompts="seed")  # banking: bm25, the default
    scenarios = all_scenarios(settings)
    out = {}
    for domain in TOOLKITS:
        name = next((n for n in scenarios if n.startswith(f"tau2_{domain}__")), None)
        if name is None:
            raise DataError(f"{data_dir}: no {domain} scenario (is the tau2 data complete?)")
        scenario = cast(Tau2BaseScenario, scenarios[name]().bind(settings))
        out[domain] = scenario.policy_text()
    return out


def checkout_commit(checkout: Path) -> str | None:
    """The commit a git checkout is at (None when it is no git checkout or git is missing)."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=30, check=False)  # fmt: skip
    except OSError:
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def write(view: Mapping[str, object], into: Path) -> None:
    """The view as JSON, keys in upstream's order (tool schemas as upstream sends them)."""
    into.parent.mkdir(parents=True, exist_ok=True)
    into.write_text(json.dumps(view, indent=2, ensure_ascii=False) + "\n", "utf-8")


def main(argv: Sequence[str] | None = None, prog: str = "pytest-tau2 data view") -> int:
    """Derive the view from a checkout and write it; 1 with one line naming the problem."""
    from pytest_tau2.data.manifest import PIN_COMMIT, PIN_SOURCE
    from pytest_tau2.data.resolve import ENV_DATA_DIR, resolve_data_dir
    from pytest_tau2.domains.tau2_common.upstream_view import view_path

    parser = argparse.ArgumentParser(
        prog=prog, description="Derive the tau2 view file (what --tau2-prompts upstream sends) from upstream's source."
    )
    parser.add_argument("--from", dest="checkout", default=f"{SOURCE_URL}/{PIN_COMMIT}",
                        help=f"a checkout of {PIN_SOURCE} at {PIN_COMMIT[:12]}, or the URL of one on a raw-file "
                             "host; read, never run (default: GitHub's raw files at the pin)")  # fmt: skip
    parser.add_argument("--data-dir", default=None, help=f"folder holding tau2/ (default: ${ENV_DATA_DIR}, then cache)")
    parser.add_argument("--into", type=Path, default=None,
                        help="where to write it (default: $TAU2_VIEW_FILE, else tau2-view/agent_view.json beside "
                             "the data folder, where runs look for it)")  # fmt: skip
    args = parser.parse_args(argv)
    root = resolve_data_dir(args.data_dir)
    if root is None:
        print(f"{prog}: no tau2 data folder (set ${ENV_DATA_DIR} or --data-dir)", file=sys.stderr)
        return 1
    into: Path = args.into or view_path(root)
    try:
        write(derive(args.checkout, root, PIN_COMMIT), into)
    except (DataError, OSError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    commit = None if str(args.checkout).startswith(("http://", "https://")) else checkout_commit(Path(args.checkout))
    if commit is not None and commit != PIN_COMMIT:
        print(f"warning: {args.checkout} is at {commit[:12]}, not the pin {PIN_COMMIT[:12]}", file=sys.stderr)
    print(f"wrote {into}", file=sys.stderr)
    return 0
