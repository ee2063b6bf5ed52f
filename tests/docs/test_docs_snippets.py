"""Every code block of README.md and docs/ is tested, as tests/docs/doc_blocks.py describes.

Python blocks run (or are checked against the file they abridge, or the module they list);
data blocks parse; the options named in shell blocks exist. Blocks that are files of an
example project are run by that page's test (tests/docs/test_doc_pages.py); the last test
here checks that each of them has one.
"""

from __future__ import annotations

import ast
import configparser
import functools
import importlib
import inspect
import json
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.docs.doc_blocks import (
    CONSUMED,
    OTHER_MODES,
    PROSE_LANGS,
    PYTHON_MODES,
    REPO,
    SHELL_LANGS,
    Block,
    all_blocks,
    clean_env,
    commands,
    next_value,
    options_of,
)
from tests.support.tau2_data import DATA_DIR, has_data, skip_reason

BLOCKS = all_blocks()


def _of(*, langs: tuple[str, ...], modes: tuple[str, ...]) -> list[Block]:
    return [b for b in BLOCKS if b.lang in langs and b.mode in modes]


def _params(blocks: list[Block]) -> list[object]:
    return [pytest.param(b, id=b.id) for b in blocks]


# ---- python ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", _params(_of(langs=("python",), modes=("", "run"))))
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    env = clean_env(PYTEST_ADDOPTS=f"--tau2-results-dir={tmp_path / 'results'}")
    if block.options.get("env") == "mirror":
        if not has_data():
            pytest.skip(skip_reason())
        env.update(TAU2_DATA_URL=DATA_DIR.as_uri(), XDG_CACHE_HOME=str(tmp_path / "cache"), HOME=str(tmp_path))
        env.pop("TAU2_DATA_DIR")
    cwd = REPO if block.options.get("cwd") == "repo" else tmp_path
    done = subprocess.run(
        [sys.executable, "-c", block.text],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{block.where} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def _source_line(line: str) -> str | None:
    """What an excerpt line must match in the file: None for the page's own words and gaps."""
    stripped = line.strip()
    if not stripped or stripped == "..." or stripped.startswith("#"):
        return None
    return re.sub(r"\s+#\s.*$", "", stripped)


@pytest.mark.parametrize("block", _params(_of(langs=("python",), modes=("excerpt",))))
def test_excerpt_matches_its_file_in_order(block: Block) -> None:
    source = [line.strip() for line in (REPO / block.argument).read_text("utf-8").splitlines()]
    position = 0
    for line in block.text.splitlines():
        wanted = _source_line(line)
        if wanted is None:
            continue
        pattern = re.compile(".*".join(map(re.escape, wanted.split("..."))) + "$")
        found = next((i for i in range(position, len(source)) if pattern.match(source[i])), None)
        assert found is not None, f"{block.where}: {wanted!r} is not in {block.argument} (after line {position})"
        position = found + 1


@pytest.mark.parametrize("block", _params(_of(langs=("python",), modes=("signatures",))))
def test_signatures_match_the_module(block: Block) -> None:
    module = importlib.import_module(block.argument)
    for node in ast.parse(block.text).body:
        if isinstance(node, ast.FunctionDef):
            actual = inspect.signature(getattr(module, node.name))
            shown = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
            shown += [f"*{node.args.vararg.arg}"] if node.args.vararg else []
            shown += [f"**{node.args.kwarg.arg}"] if node.args.kwarg else []
            real = [
                {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(p.kind, "") + name
                for name, p in actual.parameters.items()
            ]
            assert sorted(shown) == sorted(real), f"{block.where}: {node.name}{actual} is documented as {shown}"
        elif isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            for target in targets:
                assert isinstance(target, ast.Name) and hasattr(module, target.id), f"{block.where}: {ast.dump(target)}"
        elif not isinstance(node, ast.Expr):
            raise AssertionError(f"{block.where}: a signatures block holds only defs and names")


# ---- data --------------------------------------------------------------------------------------------


def _without_elisions(text: str) -> str:
    """A data example may leave part out with a line that is only ``...``."""
    return "\n".join(line for line in text.splitlines() if line.strip() != "...")


@pytest.mark.parametrize("block", _params(_of(langs=("json",), modes=("",))))
def test_json_block_parses(block: Block) -> None:
    text = _without_elisions(block.text).strip()
    for attempt in (text, "{" + text + "}"):  # a value, or the members of an object
        try:
            json.loads(attempt)
            return
        except json.JSONDecodeError:
            pass
    for number, line in enumerate(text.splitlines(), block.line + 1):  # JSON Lines
        try:
            json.loads(line)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{block.page.name}:{number}: not JSON, JSON Lines or object members: {exc}") from None


@pytest.mark.parametrize("block", _params(_of(langs=("toml", "ini", "xml", "yaml"), modes=("",))))
def test_config_and_xml_blocks_parse(block: Block) -> None:
    if block.lang == "yaml":
        import yaml  # PyYAML: installed with litellm

        yaml.safe_load(_without_elisions(block.text))
    elif block.lang == "toml":
        tomllib.loads(block.text)
    elif block.lang == "ini":
        configparser.ConfigParser().read_string(block.text)
    else:
        ET.fromstring(block.text)


# ---- shell ---------------------------------------------------------------------------------------------


@functools.cache
def _known_options(help_args: tuple[str, ...]) -> frozenset[str]:
    done = subprocess.run(
        [sys.executable, "-m", *help_args], cwd=REPO, env=clean_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"python -m {' '.join(help_args)} failed: {done.stderr[-2000:]}"
    return frozenset(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", done.stdout))


def _alias(name: str, known: frozenset[str]) -> bool:
    """pytest's help shows one of ``--junitxml``/``--junit-xml`` (names equal but for dashes)."""
    return not name.startswith("--tau2") and name.replace("-", "") in {k.replace("-", "") for k in known}


SHELL = [b for b in _of(langs=SHELL_LANGS, modes=("", "run-in-project")) if commands(b)]


@pytest.mark.parametrize("block", _params(SHELL))
def test_shell_commands_use_existing_options(block: Block) -> None:
    for command in commands(block):
        known = _known_options(command.help)
        unknown = [name for name, _ in options_of(command.words) if name not in known and not _alias(name, known)]
        assert not unknown, f"{block.where}: {command.line!r}: {' '.join(command.help[:-1])} has no {unknown}"
        for name, _ in options_of(command.words):
            if re.fullmatch(r"--tau2-\w+-args", name):
                value = json.loads(next_value(command.words, name) or "")
                assert isinstance(value, dict), f"{block.where}: {name} must be a JSON object"


def test_shell_checks_find_the_readme_commands() -> None:
    readme = [b for b in SHELL if b.page.name == "README.md"]
    lines = [c.line for b in readme for c in commands(b)]
    assert any(line.startswith("pytest -k tau2_airline -n 8") for line in lines)
    assert any(line.startswith("pytest-tau2 list") for line in lines)


# ---- every block is covered --------------------------------------------------------------------------------


def test_every_block_has_a_test() -> None:
    untested = [
        b.where
        for b in BLOCKS
        if not (
            (b.lang == "python" and b.mode in (*PYTHON_MODES, ""))
            or (b.lang in ("json", "toml", "ini", "xml", "yaml") and b.mode in ("", "checked-by"))
            or b.lang in SHELL_LANGS + PROSE_LANGS
        )
    ]
    assert not untested, f"no test for these blocks (language or mode): {untested}"


def test_every_project_block_is_used_by_a_page_test() -> None:
    marked = {
        (b.page.relative_to(REPO).as_posix(), b.mode, b.argument) for b in BLOCKS if b.mode in ("file", *OTHER_MODES)
    }
    consumed = {(page, mode, argument) for page, mode, argument, _ in CONSUMED}
    assert marked == consumed, f"marked but untested: {marked - consumed}; tested but not marked: {consumed - marked}"
    tests = set(
        re.findall(r"^def (test_\w+)", (REPO / "tests" / "docs" / "test_doc_pages.py").read_text("utf-8"), re.M)
    )
    assert {test for *_, test in CONSUMED} <= tests
