"""The fenced code blocks of README.md and docs/, and how each one is tested.

A block's test is chosen by its language and by an optional directive, an HTML comment on the
line right above the opening fence (invisible when the page is rendered)::

    <!-- doctest: MODE [ARGUMENT] [key=value ...] -->

Python blocks:

``run`` (the default: no directive)
    The block is a complete program: it runs in a fresh interpreter (``python -c``) in an
    empty temporary folder, offline, with ``TAU2_DATA_DIR`` set, and must exit 0.
    ``cwd=repo`` runs it from the repository root instead (for snippets that say so);
    ``env=mirror`` points ``TAU2_DATA_URL`` at a local copy of the data and the user cache
    into the temporary folder (for snippets that download).
``excerpt PATH``
    The block abridges the repository file PATH: its lines appear there in order. ``...``
    stands for anything (a whole line, or part of one); comment lines and trailing comments
    are the page's own words and are not looked up.
``signatures MODULE``
    The block lists the public names of MODULE, as stubs (``def f(a: int) -> str: ...``):
    each name exists and each function has exactly the parameters shown.
``file PATH``
    The block is the file PATH of an example project that a test of that page builds and runs
    (tests/docs/test_doc_pages.py); ``checked-by NAME`` names such a test for blocks that
    are neither programs nor files.

Other blocks: ``json`` must parse (a JSON value, JSON Lines, or an object's members);
``toml``, ``ini``, ``yaml`` and ``xml`` must parse. In ``json`` and ``yaml`` examples a line
that is only ``...`` marks a part left out. Shell blocks (no language, ``console``,
``bash``, ``sh``, ``shell``) are checked line by line: every option of a ``pytest``,
``pytest-tau2`` or ``python -m pytest_tau2...`` command (and of a line that is only
``--tau2-*`` options) must be one the command accepts, and each ``--tau2-*-args`` value must
be a JSON object. ``run-in-project`` and ``layout`` mark shell and tree blocks that a page
test runs or builds. Blocks of other languages (``text``, ``mermaid``) are prose.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.tau2_data import DATA_DIR

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<lang>[\w+-]*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*doctest:\s*(?P<body>.*?)\s*-->\s*$")
PYTHON_MODES = ("run", "excerpt", "signatures", "file", "checked-by")
OTHER_MODES = ("run-in-project", "layout", "checked-by")
SHELL_LANGS = ("", "console", "bash", "sh", "shell")
PROSE_LANGS = ("text", "mermaid")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    """1-based line of the opening fence."""
    lang: str
    text: str
    mode: str = ""
    argument: str = ""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO).as_posix()}:{self.line}:{self.lang or 'plain'}"


def read_blocks(page: Path) -> list[Block]:
    lines = page.read_text("utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        end = next(
            (j for j in range(i + 1, len(lines)) if lines[j].startswith(opening["fence"]) and not lines[j].strip("`")),
            None,
        )
        if end is None:
            raise ValueError(f"{page}:{i + 1}: code block never closed")
        directive = DIRECTIVE.match(lines[i - 1]) if i > 0 else None
        mode, argument, options = _parse_directive(directive["body"] if directive else "", f"{page}:{i}")
        blocks.append(
            Block(page, i + 1, opening["lang"], "\n".join(lines[i + 1 : end]) + "\n", mode, argument, options)
        )
        i = end + 1
    return blocks


def _parse_directive(body: str, where: str) -> tuple[str, str, dict[str, str]]:
    words = body.split()
    if not words:
        return "", "", {}
    mode, rest = words[0], words[1:]
    if mode not in PYTHON_MODES + OTHER_MODES:
        raise ValueError(f"{where}: unknown doctest mode {mode!r}")
    argument = rest[0] if rest and "=" not in rest[0] else ""
    options = dict(word.split("=", 1) for word in rest[1 if argument else 0 :])
    return mode, argument, options


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a documented command: this machine's, minus the outer pytest's and tau2's
    variables, offline litellm, and the suite's tau2 data folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TAU2_"))}
    return {**env, "TAU2_DATA_DIR": str(DATA_DIR), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def all_blocks() -> list[Block]:
    return [block for page in PAGES for block in read_blocks(page)]


def find(page: str, mode: str, argument: str = "", index: int = 0) -> Block:
    """The ``index``-th block of ``page`` (relative to the repository) with this directive."""
    matching = [b for b in read_blocks(REPO / page) if b.mode == mode and b.argument == argument]
    if len(matching) <= index:
        raise LookupError(f"{page} has no block #{index} marked 'doctest: {mode} {argument}'")
    return matching[index]


# ---- shell lines -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """One command of a shell block: the program whose options it uses, and its words."""

    help: tuple[str, ...]
    """The arguments that print this program's options (after ``python -m``)."""
    words: list[str]
    line: str


def commands(block: Block) -> list[Command]:
    """The commands in a shell block whose options can be checked (prompts, comments, ``\\`` handled)."""
    found: list[Command] = []
    for line in _logical_lines(block.text):
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue  # not shell (an output line with an odd quote)
        while words and re.fullmatch(r"[A-Z][A-Z0-9_]*=\S*", words[0]):
            words = words[1:]  # VAR=value prefixes
        if not words:
            continue
        if words[0].startswith("--tau2-"):
            words = ["pytest", *words]  # a line of options for the pytest command above it
        program = _help_of(words)
        if program is not None:
            found.append(Command(program, words, line))
    return found


def _help_of(words: list[str]) -> tuple[str, ...] | None:
    """``python -m`` arguments that print the options of the command ``words`` (None: not ours)."""
    if words[0] in ("python", "python3") and len(words) > 2 and words[1] == "-m":
        module, rest = words[2], words[3:]
    elif words[0] == "pytest-tau2":
        module, rest = "pytest_tau2.cli", words[1:]
    elif words[0] == "pytest":
        module, rest = "pytest", []
    else:
        return None
    if module == "pytest":
        return ("pytest", "--help")  # test paths and -k expressions do not change its options
    if not module.startswith("pytest_tau2"):
        return None
    subcommands = [w for w in rest[:2] if not w.startswith("-")]
    if module == "pytest_tau2.cli":
        subcommands = subcommands[:2] if subcommands[:1] == ["data"] else subcommands[:1]
    elif module == "pytest_tau2.data":
        subcommands = subcommands[:1]
    else:
        subcommands = []
    return (module, *subcommands, "--help")


def _logical_lines(text: str) -> list[str]:
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.removeprefix("$ ").strip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def options_of(words: list[str]) -> list[tuple[str, str | None]]:
    """``--name[=value]`` and short ``-x`` options of a command, with an ``=`` value when given."""
    found: list[tuple[str, str | None]] = []
    for word in words[1:]:
        if word.startswith("--") and len(word) > 2:
            name, _, value = word.partition("=")
            found.append((name, value if "=" in word else None))
        elif re.fullmatch(r"-[A-Za-z]\S*", word):
            found.append((word[:2], None))
    return found


def next_value(words: list[str], option: str) -> str | None:
    """The value of ``option`` given as ``--opt=value`` or ``--opt value``."""
    for i, word in enumerate(words):
        if word.startswith(option + "="):
            return word.split("=", 1)[1]
        if word == option and i + 1 < len(words):
            return words[i + 1]
    return None


# ---- blocks that a page test uses ------------------------------------------------------------------

CONSUMED: tuple[tuple[str, str, str, str], ...] = (
    # (page, mode, argument, the test in tests/docs/test_doc_pages.py that uses the block)
    ("docs/authoring-scenarios.md", "layout", "", "test_bakery_project_runs_as_written"),
    ("docs/authoring-scenarios.md", "file", "my_scenarios/bakery.py", "test_bakery_project_runs_as_written"),
    ("docs/authoring-scenarios.md", "run-in-project", "", "test_bakery_project_runs_as_written"),
    ("docs/authoring-scenarios.md", "file", "conftest.py", "test_bakery_project_runs_as_written"),
    ("docs/evaluating-a-model.md", "file", "my_agent.py", "test_python_agent_fixture_override"),
    ("docs/evaluating-a-model.md", "file", "conftest.py", "test_python_agent_fixture_override"),
    ("docs/output-files.md", "file", "check_metrics.py", "test_metrics_files_validate_against_the_schema"),
    ("docs/tau2-retail.md", "file", "conftest.py", "test_overriding_one_retail_task"),
    ("docs/replay.md", "file", "make_replay.py", "test_gold_minus_last_write_recipe"),
    ("docs/replay.md", "run-in-project", "", "test_gold_minus_last_write_recipe"),
    ("docs/replay.md", "file", "to_replay.py", "test_transcripts_to_replay_recipe_on_a_model_run"),
    ("docs/db-state-predicates.md", "checked-by", "test_predicate_verdict_shape", "test_predicate_verdict_shape"),
)
