"""The extension tables: a seventh success signal, a new participant kind, shipped predicates,
and caches keyed by everything that changes their value."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import jsonschema
import pytest

from pytest_tau2 import EndConversationTool, Reply, Scenario, SuccessSignal, list_registered_predicates
from pytest_tau2.errors import ScenarioDefinitionError, SettingsError
from pytest_tau2.llm.usage import UsageMeter
from pytest_tau2.report.metrics import build_metrics, metrics_schema
from pytest_tau2.report.summary import render
from pytest_tau2.run import participants, run_scenario
from pytest_tau2.run.seeding import _GOLD_CACHE, gold_replay
from pytest_tau2.run.trial import Trial
from pytest_tau2.scoring.signals import (
    SIGNALS,
    Check,
    ScoringInput,
    SignalResult,
    SignalSpec,
    docs_table,
    register_signal,
    unregister_signal,
)
from pytest_tau2.settings import Settings

DOCS = Path(__file__).resolve().parents[2] / "docs"


# ---- a seventh signal: one entry plus its compute function ----------------------------------------


def _polite(inp: ScoringInput) -> SignalResult:
    said = [m.get("content") or "" for m in inp.conversation.transcript if m.get("role") == "assistant"]
    ok = any("thank" in text.lower() for text in said)
    return SignalResult(ok, [Check("polite", "polite", ok, "" if ok else "the agent never thanked the caller")])


POLITE = SignalSpec(
    "polite", "is_polite", "Polite", "bool", _polite, "the agent thanked the caller at least once", "never"
)


@pytest.fixture
def polite() -> Iterator[SignalSpec]:
    register_signal(POLITE)
    yield POLITE
    unregister_signal("polite")


class Rude(Scenario):
    name = "unittables__rude"

    @property
    def success_signals(self) -> tuple[Any, ...]:  # type: ignore[override]
        return (SuccessSignal.CLEAN_EXIT, POLITE.signal)


class Curt:
    """Says one thing, then hangs up with the exit tool."""

    def __init__(self) -> None:
        self.steps = 0

    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        from pytest_tau2 import ToolCall

        self.steps += 1
        if self.steps == 1:
            return Reply(text="What?")
        return Reply(tool_calls=[ToolCall(EndConversationTool.name, {})])


class Caller:
    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        return Reply(text="I want a pizza.")


def test_a_seventh_signal_reaches_verdict_metrics_schema_and_summary(polite: SignalSpec, tmp_path: Path) -> None:
    settings = Settings(eval_data_root=str(tmp_path), min_agent_turns=0)
    outcome = asyncio.run(run_scenario(Rude(), agent=Curt(), user=Caller(), settings=settings))
    assert outcome.signals["polite"] is False
    assert outcome.verdict.failed == ["is_polite"] and outcome.is_successful is False
    assert [c.id for c in outcome.checks if c.signal == "polite"] == ["polite"]
    metrics = build_metrics(
        outcome, models={"agent": None, "user": None, "judge": None}, data_pin=None,
        token_usage=UsageMeter().to_dict(), agent_kind="python:x", user_kind="python:y",
    )  # fmt: skip
    assert metrics["is_polite"] is False
    jsonschema.validate(metrics, metrics_schema(), cls=jsonschema.Draft202012Validator)
    assert "is_polite" in metrics_schema()["required"]
    assert "  Polite: 0/1 (0.0%)" in render([metrics])
    assert "| `POLITE` | `is_polite` | bool | never |" in docs_table()


def test_a_plain_string_is_not_a_success_signal(polite: SignalSpec) -> None:
    with pytest.raises(ScenarioDefinitionError, match=r"success_signals=.'polite'"):

        class Typo(Scenario):
            name = "unittables__typo"
            success_signals = ("polite",)  # type: ignore[assignment]


def test_a_signal_cannot_take_another_signals_metrics_field() -> None:
    with pytest.raises(ValueError, match="clean_exit"):
        register_signal(SignalSpec("exit2", "clean_exit", "Exit", "bool", _polite, "x", "never"))
    assert "exit2" not in SIGNALS


def test_built_in_signals_cannot_be_removed() -> None:
    with pytest.raises(ValueError, match="built-in"):
        unregister_signal("clean_exit")


def test_docs_signal_table_is_generated_from_the_signal_table() -> None:
    assert docs_table() in (DOCS / "scoring.md").read_text("utf-8"), "regenerate with scoring.signals.docs_table()"


# ---- participant kinds ------------------------------------------------------------------------------


class Echo:
    async def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Reply:
        return Reply(text="echo")


def test_a_package_adds_an_agent_kind_with_an_argument() -> None:
    kind = participants.ParticipantKind("echo", "agent", lambda ctx, arg: Echo(), argument="WORD")
    participants.register_participant_kind(kind)
    try:
        settings = Settings(agent="echo:hello")
        participants.validate_settings(settings)
        assert participants.agent_kind(settings) == (kind, "hello")
        assert participants.describe_agent(settings) == "echo:hello"
        with pytest.raises(SettingsError, match="echo:WORD"):
            participants.validate_settings(Settings(agent="nope"))
        with pytest.raises(ValueError, match="already registered"):
            participants.register_participant_kind(participants.ParticipantKind("echo", "agent", kind.build))
    finally:
        participants._KINDS.unregister(("agent", "echo"))


def test_a_participant_no_kind_built_is_named_by_its_class(tmp_path: Path) -> None:
    settings = Settings(eval_data_root=str(tmp_path))
    trial = Trial(Rude(), settings)
    assert trial.describe("agent", trial.agent) == "oracle"
    # named by its class, at a version: the source hash unless it sets tau2_version (report/identity.py)
    assert trial.describe("agent", Echo()).startswith(f"python:{__name__}.Echo@sha256:")


def test_the_bot_server_modules_do_not_import_pytest() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pytest_tau2.bot.server, pytest_tau2.bot.agents, pytest_tau2.run.pipeline;"
        "sys.exit(1 if 'pytest' in sys.modules or '_pytest' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ---- predicates and caches ---------------------------------------------------------------------------


def test_shipped_predicates_are_listed_before_anything_imports_their_domain() -> None:
    import subprocess
    import sys

    code = "from pytest_tau2 import list_registered_predicates as l; print(len(l().get('tau2_telecom', [])))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert int(out) >= 10
    assert list_registered_predicates("tau2_telecom")["tau2_telecom"]


class Stocked(Scenario):
    name = "unittables__stocked"
    success_signals: ClassVar[tuple[SuccessSignal, ...]] = (SuccessSignal.DB_STATE_MATCH,)

    def setup_shared_state(self, state: dict[str, Any], side: str) -> None:
        state["db_path"] = "db.json"

    def gold_actions(self) -> list[dict[str, Any]]:
        return []


def test_the_gold_cache_is_keyed_by_the_data_root(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for root, stock in ((one, 1), (two, 2)):
        root.mkdir()
        (root / "db.json").write_text(f'{{"stock": {stock}}}')
    first = gold_replay(Stocked(), Settings(eval_data_root=str(one)))
    second = gold_replay(Stocked(), Settings(eval_data_root=str(two)))
    assert first is not None and second is not None
    assert first.hashes != second.hashes
    assert sum(1 for key in _GOLD_CACHE if key[1] == "unittables__stocked") == 2
