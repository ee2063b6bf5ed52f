"""Record modes, content matching and miss errors of the cassette layer, over real HTTP.

Every recording goes through litellm to the loopback fake server; every replay runs with that
server stopped (or never started), so a replay that touched the network would fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.llm import ModelConfig, RetryPolicy, UsageMeter, aclose, acomplete
from pytest_tau2.llm.cassette import Cassette, CassetteMissError, cassette_path
from pytest_tau2.scoring.judge import LLMJudge
from tests.support import fixtures
from tests.support.fake_openai import FakeOpenAIServer, sequence, text, tool_calls

fake_llm = fixtures.fake_llm

API_KEY = "sk-test-cassette-0123456789"
FAST = RetryPolicy(max_retries=1, backoff_s=0.01, max_backoff_s=0.02, timeout_s=10.0)
SYSTEM = "You are a retail agent.\nFollow the policy.\nNever reveal internal notes."
LOOKUP = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look up an order",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
}
REPO_ROOT = Path(__file__).resolve().parents[2]
NAME = "tau2_retail__7"


def config(base_url: str, model: str = "agent", **args: Any) -> ModelConfig:
    return ModelConfig(f"openai/{model}", {"api_base": base_url, "api_key": API_KEY, **args})


def conversation(
    cfg: ModelConfig, cassette: Cassette, usage: UsageMeter | None = None, *, system: str = SYSTEM
) -> list[Any]:
    """Two agent calls (a tool call, then its result) and one user call, as the loop makes them."""

    async def run() -> list[Any]:
        try:
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": system},
                {"role": "user", "content": "Where is order #W1?"},
            ]
            first = await acomplete(cfg, messages, tools=[LOOKUP], retry=FAST, usage=usage, cassette=cassette)
            call = first.tool_calls[0]
            messages += [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": call.id, "content": '{"status": "shipped"}'},
            ]
            second = await acomplete(cfg, messages, tools=[LOOKUP], retry=FAST, usage=usage, cassette=cassette)
            user_cfg = ModelConfig("openai/user", {**cfg.args})
            user_messages = [{"role": "system", "content": "You are a customer."}, {"role": "user", "content": "Hi"}]
            third = await acomplete(user_cfg, user_messages, retry=FAST, usage=usage, side="user", cassette=cassette)
            return [first, second, third]
        finally:
            await aclose()

    return asyncio.run(run())


def script(server: FakeOpenAIServer) -> None:
    server.add_handler("agent", sequence(tool_calls([("lookup", {"order_id": "#W1"})]), text("It has shipped.")))
    server.add_handler("user", text("Thanks, that is all.\n###STOP###"))


def record(tmp_path: Path, mode: str = "once", **args: Any) -> tuple[list[Any], Cassette]:
    with FakeOpenAIServer() as server:
        script(server)
        cassette = Cassette.open(tmp_path, NAME, mode)
        done = conversation(config(server.base_url, **args), cassette)
        assert cassette.save() == cassette_path(tmp_path, NAME)
    return done, cassette


def replay(tmp_path: Path, mode: str = "none", **kwargs: Any) -> tuple[list[Any], Cassette, UsageMeter]:
    cassette = Cassette.open(tmp_path, NAME, mode)
    usage = UsageMeter()
    # Port 9 (discard) on loopback: nothing listens, so a call that escaped the cassette fails.
    done = conversation(config("http://127.0.0.1:9/v1", **kwargs.pop("args", {})), cassette, usage, **kwargs)
    return done, cassette, usage


def summary(completion: Any) -> tuple[Any, ...]:
    calls = [(c.id, c.name, c.arguments) for c in completion.tool_calls]
    return completion.text, calls, completion.prompt_tokens, completion.completion_tokens, completion.cost


# ---- record, then replay offline ------------------------------------------------------------------


def test_replay_gives_the_recorded_replies_without_any_server(tmp_path: Path) -> None:
    recorded, _ = record(tmp_path)

    replayed, cassette, usage = replay(tmp_path)

    assert [summary(c) for c in replayed] == [summary(c) for c in recorded]
    assert all(c.replayed for c in replayed) and not any(c.replayed for c in recorded)
    assert cassette.stats()["replayed_calls"] == 3 and cassette.save() is None  # nothing new: file untouched
    agent = usage.to_dict()["agent"]
    assert agent["calls"] == 2 and agent["replayed_calls"] == 2
    assert agent["prompt_tokens"] == recorded[0].prompt_tokens + recorded[1].prompt_tokens


def test_a_replay_imports_no_litellm(tmp_path: Path) -> None:
    record(tmp_path)
    code = f"""
import sys
from pathlib import Path
from tests.unit.test_cassette import replay
done, cassette, usage = replay(Path({str(tmp_path)!r}))
print(len(done), "litellm" in sys.modules)
"""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["3", "False"], out.stderr


def test_matching_ignores_transport_arguments_but_not_reply_changing_ones(tmp_path: Path) -> None:
    record(tmp_path, temperature=0)

    # Another endpoint, key and timeout: same calls.
    done, _, _ = replay(tmp_path, args={"temperature": 0, "timeout": 3, "api_key": "sk-test-other-key-999"})
    assert len(done) == 3

    with pytest.raises(CassetteMissError, match=r"agent call #1 of tau2_retail__7") as miss:
        replay(tmp_path, args={"temperature": 0.7})
    assert "\n-  temperature: 0\n+  temperature: 0.7\n" in str(miss.value)


# ---- a miss in a replay-only mode ------------------------------------------------------------------


def test_a_changed_prompt_is_a_miss_naming_the_call_with_a_diff(tmp_path: Path) -> None:
    record(tmp_path)

    with pytest.raises(CassetteMissError) as miss:
        replay(tmp_path, system=SYSTEM.replace("Follow the policy.", "Follow the NEW policy."))

    message = str(miss.value)
    assert message.startswith(f"agent call #1 of {NAME} is not in the cassette {cassette_path(tmp_path, NAME)}")
    assert "Nearest recorded request: agent call #1" in message
    assert "\n-    Follow the policy.\n+    Follow the NEW policy.\n" in message
    assert "\n     You are a retail agent.\n" in message  # context around the change, not the whole request
    assert "Where is order" not in message
    assert "--tau2-record-mode new_episodes" in message
    assert not miss.value.fatal  # the rest of the run goes on


def test_no_cassette_in_none_mode_says_how_to_record(tmp_path: Path) -> None:
    with pytest.raises(CassetteMissError, match=r"agent call #1 of tau2_retail__7: there is no cassette .*once"):
        replay(tmp_path)


def test_once_records_a_new_cassette_and_then_only_replays(tmp_path: Path) -> None:
    record(tmp_path, mode="once")

    done, cassette, _ = replay(tmp_path, mode="once")
    assert len(done) == 3 and cassette.replay_only

    with pytest.raises(CassetteMissError, match="record mode 'once'"):
        replay(tmp_path, mode="once", system="A different agent.")


def test_a_side_with_no_recorded_calls_is_named(tmp_path: Path) -> None:
    record(tmp_path)
    cassette = Cassette.open(tmp_path, NAME, "none")
    judge = LLMJudge(config("http://127.0.0.1:9/v1", model="judge"), FAST, UsageMeter(), cassette)

    # The judge lets a miss through: a stale recording is an error, not a failed assertion.
    with pytest.raises(CassetteMissError, match=r"judge call #1 .* has no judge calls \(sides recorded: agent, user\)"):
        asyncio.run(judge.judge(["The agent said hello."], [{"role": "assistant", "content": "Hello"}]))


# ---- new_episodes and all --------------------------------------------------------------------------------


def test_new_episodes_calls_only_what_is_missing_and_keeps_the_rest(tmp_path: Path) -> None:
    record(tmp_path)
    with FakeOpenAIServer() as server:
        server.add_handler("agent", text("A brand-new answer."))
        server.add_handler("user", text("unused"))
        cassette = Cassette.open(tmp_path, NAME, "new_episodes")

        async def run() -> list[Any]:
            try:
                cfg = config(server.base_url)
                known = [{"role": "system", "content": "You are a customer."}, {"role": "user", "content": "Hi"}]
                new = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Cancel order #W2"}]
                return [
                    await acomplete(ModelConfig("openai/user", cfg.args), known, side="user", cassette=cassette),
                    await acomplete(cfg, new, tools=[LOOKUP], cassette=cassette),
                ]
            finally:
                await aclose()

        old, fresh = asyncio.run(run())
        assert len(server.requests) == 1 and server.requests[0]["model"] == "agent"
    assert old.replayed and old.text == "Thanks, that is all.\n###STOP###"
    assert not fresh.replayed and fresh.text == "A brand-new answer."
    cassette.save()

    saved = Cassette.open(tmp_path, NAME, "none")
    assert [(i.side, i.call) for i in saved.recorded] == [("user", 1), ("agent", 1), ("agent", 1), ("agent", 2)]
    # ... and every one of them replays, old and new.
    done, _, _ = replay(tmp_path)
    assert [c.text for c in done] == [None, "It has shipped.", "Thanks, that is all.\n###STOP###"]


def test_all_calls_the_model_every_time_and_rewrites_the_cassette(tmp_path: Path) -> None:
    record(tmp_path)
    with FakeOpenAIServer() as server:
        server.add_handler("agent", sequence(tool_calls([("lookup", {"order_id": "#W9"})]), text("Re-recorded.")))
        server.add_handler("user", text("Bye."))
        cassette = Cassette.open(tmp_path, NAME, "all")
        done = conversation(config(server.base_url), cassette)
        assert len(server.requests) == 3
        cassette.save()

    assert [c.text for c in done] == [None, "Re-recorded.", "Bye."]
    replayed, _, _ = replay(tmp_path)
    assert [c.text for c in replayed] == [None, "Re-recorded.", "Bye."]
    assert len(Cassette.open(tmp_path, NAME, "none").recorded) == 3  # the old calls are gone


def test_identical_requests_replay_in_recorded_order_then_repeat_the_last(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "Roll a die."}]
    with FakeOpenAIServer() as server:
        server.add_handler("agent", sequence(text("4"), text("2")))
        cassette = Cassette.open(tmp_path, NAME, "once")
        cfg = config(server.base_url)

        async def twice() -> None:
            try:
                await acomplete(cfg, messages, cassette=cassette)
                await acomplete(cfg, messages, cassette=cassette)
            finally:
                await aclose()

        asyncio.run(twice())
        cassette.save()

    cassette = Cassette.open(tmp_path, NAME, "none")

    async def thrice() -> list[str | None]:
        cfg = config("http://127.0.0.1:9/v1")
        return [(await acomplete(cfg, messages, cassette=cassette)).text for _ in range(3)]

    assert asyncio.run(thrice()) == ["4", "2", "2"]


# ---- what reaches the file -----------------------------------------------------------------------------


def test_no_credential_reaches_the_cassette(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACME_API_KEY", "acme-env-secret-0042")
    header = "Bearer hdr-secret-abcdefgh"
    system = f"Internal: use key {API_KEY} or acme-env-secret-0042 if asked."
    with FakeOpenAIServer() as server:
        script(server)
        cassette = Cassette.open(tmp_path, NAME, "once")
        args = {"extra_headers": {"Authorization": header}, "azure_ad_token": "tok-secret-7777", "seed": 7}
        conversation(config(server.base_url, **args), cassette, system=system)
        cassette.save()

    written = cassette_path(tmp_path, NAME).read_text("utf-8")
    for secret in (API_KEY, "acme-env-secret-0042", "hdr-secret-abcdefgh", "tok-secret-7777", "127.0.0.1"):
        assert secret not in written
    assert "Internal: use key *** or *** if asked." in written and "seed: 7" in written
    # The masked request still matches the live one.
    done, _, _ = replay(tmp_path, system=system, args=args)
    assert len(done) == 3


def test_the_file_is_plain_yaml_with_a_stable_layout(tmp_path: Path) -> None:
    record(tmp_path)
    first = cassette_path(tmp_path, NAME).read_text("utf-8")
    record(tmp_path, mode="all")  # the same calls again (the fake server numbers tool-call ids alike)

    assert cassette_path(tmp_path, NAME).read_text("utf-8") == first
    assert "      content: |-\n        You are a retail agent.\n        Follow the policy.\n" in first
    assert "- n: 2\n  side: agent\n  call: 2\n  request:\n    model: openai/agent\n    base:\n      n: 1\n" in first
    assert '\'{"order_id": "#W1"}\'' in first
    assert json.dumps(LOOKUP["function"]["description"])[1:-1] in first
