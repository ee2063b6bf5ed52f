"""The README's examples, as a new user types them after the set-up the README gives.

Every ``pytest`` line of the examples block collects what its comment promises (options
valid, at least one scenario selected); the handful and the external-bot examples run for
real (the bot: the reference one, as the README suggests, on a free port). The set-up block
installs from the clone, names the one line for the data folder, and the README says how to
get the data otherwise.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from pytest_tau2.bot.agents import oracle_factory
from pytest_tau2.bot.server import BotServer, ServerThread
from pytest_tau2.bot.session import BotConfig
from pytest_tau2.mcp.kind import MCP_INSTALL
from pytest_tau2.settings import Settings
from tests.docs.doc_blocks import PAGES, REPO, Block, clean_env, read_blocks
from tests.support.tau2_data import DATA_DIR, requires_data

README = REPO / "README.md"


def _examples() -> Block:
    return next(b for b in read_blocks(README) if b.lang == "" and b.text.startswith("pytest -k tau2_retail "))


def _pytest_lines() -> list[list[str]]:
    lines, pending = [], ""
    for raw in _examples().text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        words = shlex.split(pending + raw, comments=True)
        pending = ""
        if words and words[0] == "pytest":
            lines.append(words)
    return lines


def _pytest(words: list[str], tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # Files the example writes go to tmp_path, not into the repository.
    words = [f"--junitxml={tmp_path / 'results.xml'}" if w.startswith("--junitxml") else w for w in words]
    return subprocess.run(
        [sys.executable, "-m", *words, "-p", "no:randomly", f"--tau2-results-dir={tmp_path / 'results'}", *extra],
        cwd=REPO,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_setup_installs_from_the_clone_and_gives_the_data_line() -> None:
    setup = next(b for b in read_blocks(README) if "pip install -e " in b.text)
    lines = [line.split("#")[0].strip() for line in setup.text.splitlines()]
    assert "python3 -m venv .venv && . .venv/bin/activate" in lines
    # with the mcp extra: the MCP example among the first ones works after this set-up
    assert MCP_INSTALL in lines and any("--tau2-agent mcp:" in line for line in _examples().text.splitlines())
    extras = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["optional-dependencies"]
    assert [d for d in extras["mcp"] if d.startswith("mcp")]
    assert any(line.startswith("export TAU2_DATA_DIR=") for line in lines)
    text = README.read_text("utf-8")
    assert "not published on PyPI" in text and "pytest-tau2 data fetch" in text


def test_no_page_offers_to_install_the_unpublished_package_by_name() -> None:
    """``pip install pytest-tau2`` installs nothing (the name is not on PyPI); install from the clone."""
    for page in PAGES:
        assert not re.search(r"pip install pytest-tau2(?![\w/.-])", page.read_text("utf-8")), page


@requires_data("retail", "airline", "telecom")
@pytest.mark.parametrize("words", _pytest_lines(), ids=lambda words: " ".join(words[:3]))
def test_each_example_collects_what_it_promises(words: list[str], tmp_path: Path) -> None:
    done = _pytest(words, tmp_path, "--collect-only", "-q")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    collected = re.findall(r"test_scenario\[(\w+)\]", done.stdout)
    expression = words[words.index("-k") + 1]
    assert collected and all(name.startswith(expression.split()[0].split("__")[0]) for name in collected)
    expected = {"tau2_retail": 114, "tau2_airline": 50, "restaurant": 6}.get(expression)
    assert expected is None or len(collected) == expected, f"{expression}: {len(collected)} scenarios"


@requires_data("retail")
def test_the_handful_example_runs_with_every_sub_result_shown(tmp_path: Path) -> None:
    words = next(w for w in _pytest_lines() if "-v" in w)
    done = _pytest(words, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "test_scenario[tau2_retail__24] PASSED" in done.stdout
    assert re.search(r"test_scenario\[tau2_retail__0\] SUBPASSED\S* ?\[?db_state_match", done.stdout)


def test_the_external_bot_example_runs_against_the_reference_bot(tmp_path: Path) -> None:
    words = next(w for w in _pytest_lines() if any(x.startswith("ws://") for x in w))
    import scenarios  # noqa: F401  (the bot serves what its process registered, as pytest-tau2 bot does)

    settings = Settings(eval_data_root=str(REPO / "data"), data_dir=str(DATA_DIR))
    with ServerThread(BotServer(BotConfig(settings, oracle_factory()), port=0)) as url:
        done = _pytest([url if w.startswith("ws://") else w for w in words], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "6 passed" in done.stdout
    assert f"agent=websocket:{url}" in done.stdout


def test_without_the_mcp_sdk_the_hint_names_the_setups_own_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The package is not on PyPI: the hint names the set-up's command, and the SDK's own package."""
    from pytest_tau2.errors import SettingsError
    from pytest_tau2.run.participants import validate_settings

    monkeypatch.setitem(sys.modules, "mcp", None)  # importlib.util.find_spec("mcp") is None: not installed
    with pytest.raises(SettingsError) as refused:
        validate_settings(Settings(agent="mcp:python examples/mcp_agent/minimal_agent.py"))
    message = str(refused.value)
    assert MCP_INSTALL in message and 'pip install "mcp>=2.3,<3"' in message
    assert "pytest-tau2[mcp]" not in message


def test_the_mcp_example_runs_after_the_setup(tmp_path: Path) -> None:
    """The MCP line runs as written (the SDK came with the set-up's extra): every scenario gets a
    verdict, none an error. The minimal agent is a stub that never acts, so the verdicts are fails."""
    pytest.importorskip("mcp", reason="the set-up's [mcp] extra is not installed here")
    words = next(w for w in _pytest_lines() if any(x.startswith("mcp:") for x in w))
    done = _pytest(words, tmp_path)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-2000:]
    assert " error" not in done.stdout.splitlines()[-1], done.stdout[-3000:]
    assert re.search(r"\b6 (failed|passed)", done.stdout.splitlines()[-1]), done.stdout[-3000:]
    assert "agent=mcp:python examples/mcp_agent/minimal_agent.py" in done.stdout


@requires_data("retail", "airline", "telecom", "mock", "banking_knowledge")
def test_the_readmes_scenario_count_is_what_pytest_tau2_list_counts() -> None:
    listed = subprocess.run(
        [sys.executable, "-m", "pytest_tau2.cli", "list"], cwd=REPO, env=clean_env(), capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    total = re.search(r"^(\d+) scenarios in \d+ domains$", listed.stdout, re.MULTILINE)
    assert total, listed.stdout[-2000:] + listed.stderr[-2000:]
    said = re.findall(r"for the (\d+) scenarios here", README.read_text("utf-8"))
    assert said == [total[1]]


def test_no_example_writes_a_file_git_would_see() -> None:
    """A file an example writes lands under tau2-results/ (ignored), not as an untracked file in the clone."""
    ignored = [line.strip() for line in (REPO / ".gitignore").read_text("utf-8").splitlines()]
    for words in _pytest_lines():
        for word in words:
            if word.startswith("--junitxml="):
                target = word.split("=", 1)[1]
                assert any(target.startswith(i) or target == i for i in ignored), target
