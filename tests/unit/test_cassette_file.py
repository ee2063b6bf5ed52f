"""The cassette file format, the record-mode options, usage marked as replayed, URL credentials."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_tau2.llm import Completion, ModelConfig, ToolCallRequest, UsageMeter, redact
from pytest_tau2.llm.cassette import (
    Cassette,
    CassetteError,
    Lookup,
    cassette_path,
    describe_mode,
    reply_changing_args,
)
from pytest_tau2.llm.cassette_file import Interaction, load, match_key, write
from pytest_tau2.settings import OPTIONS, Settings, resolve

TRICKY = [
    "trailing spaces  \nand a tab\there",
    "\nleading newline",
    "ends with newlines\n\n",
    "yes",
    "null",
    "1.0",
    "- not a list",
    "# not a comment",
    "unicode: café ✓ 日本",
    "carriage\r\nreturn",
    "",
    "   indented first line\nsecond",
    "quotes ' and \" and \\ backslash",
]


def _request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"model": "openai/agent", "args": {"seed": 3}, "tools": tools, "messages": messages}


def _interaction(side: str, call: int, request: dict[str, Any], content: str | None = "ok") -> Interaction:
    reply = {
        "content": content,
        "model": "agent",
        "usage": {"prompt_tokens": 1, "completion_tokens": 2},
        "cost_usd": 0.5,
    }
    return Interaction(side, call, request, reply, match_key(request))


def test_every_string_survives_the_round_trip_exactly(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": text} for text in TRICKY]
    calls = [_interaction("agent", 1, _request(messages), content=text) for text in TRICKY]
    path = tmp_path / "c.yaml"

    write(path, "tau2_retail__1", calls)
    loaded = load(path)

    assert [i.request for i in loaded] == [c.request for c in calls]
    assert [i.reply["content"] for i in loaded] == TRICKY
    assert [i.key for i in loaded] == [c.key for c in calls]


def test_requests_are_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}]
    system = {"role": "system", "content": "policy line 1\npolicy line 2\n" * 50}
    turns = [{"role": "user", "content": f"turn {i}"} for i in range(30)]
    calls = [_interaction("agent", i + 1, _request([system, *turns[: i + 1]], tools)) for i in range(30)]
    calls.insert(5, _interaction("user", 1, _request([{"role": "system", "content": "customer"}])))
    path = tmp_path / "c.yaml"

    write(path, "x__1", calls)

    text = path.read_text("utf-8")
    assert text.count("policy line 1") == 50  # the prompt once (50 lines of it), not once per call
    assert text.count("name: t") == 1
    assert [i.request for i in load(path)] == [c.request for c in calls]
    entry = yaml.safe_load(text)["calls"][7]
    assert entry["request"]["base"] == {"n": 7, "messages": 7, "tools": True}
    assert entry["request"]["messages"] == [{"role": "user", "content": "turn 6"}]


def test_a_prompt_with_blanks_at_line_ends_is_still_a_literal_block(tmp_path: Path) -> None:
    prompt = "# Guidelines \nBe brief.  \n  indented\nlast line "
    tabbed = "a tab\there\nstays quoted"
    path = tmp_path / "c.yaml"
    messages = [{"role": "system", "content": prompt}, {"role": "user", "content": tabbed}]

    write(path, "x__1", [_interaction("user", 1, _request(messages))])

    text = path.read_text("utf-8")
    assert "content: |-\n        # Guidelines \n        Be brief.  \n          indented\n" in text  # line for line
    assert 'content: "a tab\\there\\nstays quoted"' in text
    assert load(path)[0].request["messages"] == messages


def test_a_hook_that_strips_line_end_blanks_does_not_break_matching(tmp_path: Path) -> None:
    prompt = "Policy line one.   \nPolicy line two.\t\nEnd. "
    request = _request([{"role": "system", "content": prompt}])
    path = tmp_path / "c.yaml"
    write(path, "x__1", [_interaction("agent", 1, request)])

    path.write_text("\n".join(line.rstrip() for line in path.read_text("utf-8").splitlines()) + "\n", "utf-8")

    assert load(path)[0].key == match_key(request)
    assert match_key(request) != match_key(_request([{"role": "system", "content": "Policy line one. Changed."}]))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("calls: [\n", "cannot be read"),
        ("format: 2\ncalls: []\n", "expected 'format: 1' at the top, found 2"),
        ("format: 1\ncalls: {}\n", "'calls' must be a list, found dict"),
        (
            "format: 1\ncalls:\n- n: 1\n  side: agent\n  call: 1\n  reply: {}\n",
            "call n=1 is malformed (KeyError: 'request')",
        ),
        ("format: 1\ncalls:\n- n: 4\n", "call n=1 is malformed (ValueError: 'n' is 4, expected 1"),
        (
            "format: 1\ncalls:\n- n: 1\n  side: agent\n  call: 1\n  request: {model: m, base: {n: 1, messages: 0}}\n"
            "  reply: {}\n",
            "base n=1 is not an earlier call",
        ),
    ],
)
def test_a_malformed_cassette_names_the_file_and_the_call(tmp_path: Path, text: str, problem: str) -> None:
    path = cassette_path(tmp_path, "tau2_retail__3")
    path.parent.mkdir(parents=True)
    path.write_text(text, "utf-8")

    with pytest.raises(CassetteError) as error:
        Cassette.open(tmp_path, "tau2_retail__3", "none")

    assert str(path) in str(error.value) and problem in str(error.value)


def test_cassettes_live_under_their_domain() -> None:
    assert cassette_path("cassettes", "tau2_airline__12-t2") == Path("cassettes/tau2_airline/tau2_airline__12-t2.yaml")
    assert cassette_path("c", "adhoc") == Path("c/other/adhoc.yaml")


def test_the_run_header_line_names_the_mode_and_the_folder() -> None:
    assert describe_mode("none", "/repo/cassettes") == "record mode none (replay only) cassettes=/repo/cassettes"
    assert describe_mode("new_episodes", "c").startswith("record mode new_episodes (replay what matches, record")
    assert describe_mode("once", "c", uses_models=False) == (
        "record mode once: no model is configured, nothing to record or replay"
    )


def test_an_unknown_record_mode_is_refused() -> None:
    with pytest.raises(CassetteError, match="record mode 'sometimes' is not one of none, once, new_episodes, all"):
        Cassette.open("cassettes", "x__1", "sometimes")


def test_nothing_recorded_writes_nothing(tmp_path: Path) -> None:
    cassette = Cassette.open(tmp_path, "x__1", "all")
    assert cassette.save() is None and not cassette_path(tmp_path, "x__1").exists()


def test_recording_masks_what_the_reply_holds(tmp_path: Path) -> None:
    config = ModelConfig("openai/agent", {"api_key": "sk-test-in-reply-00000"})
    cassette = Cassette.open(tmp_path, "x__1", "once")
    found = cassette.lookup("agent", config, [{"role": "user", "content": "hi"}], None)
    reply = Completion("your key is sk-test-in-reply-00000", [ToolCallRequest("c1", "f", "{}")], 3, 4, None, "m", {})

    cassette.record(found, reply)
    cassette.save()

    text = cassette_path(tmp_path, "x__1").read_text("utf-8")
    assert "sk-test-in-reply-00000" not in text and "your key is ***" in text


# ---- arguments that are part of the match ----------------------------------------------------------------


def test_reply_changing_args_keep_sampling_and_drop_transport_and_credentials() -> None:
    config = ModelConfig(
        "openai/x",
        {
            "api_base": "http://u:p@host/v1",
            "api_key": "k-123456",
            "timeout": 5,
            "extra_headers": {"X": "y"},
            "temperature": 0,
            "max_tokens": 256,
            "seed": 1,
            "extra_body": {"token": "t-123456", "top_k": 5},
        },
    )
    assert reply_changing_args(config, {"type": "json_object"}) == {
        "temperature": 0,
        "max_tokens": 256,
        "seed": 1,
        "extra_body": {"top_k": 5},
        "response_format": {"type": "json_object"},
    }


def test_the_match_key_ignores_key_order_and_masked_credentials() -> None:
    one = _request([{"role": "user", "content": "key sk-test-abcdefgh1"}])
    other = {
        "messages": [{"content": "key ***", "role": "user"}],
        "tools": None,
        "args": {"seed": 3},
        "model": "openai/agent",
    }
    assert match_key(one) == match_key(other)
    assert match_key(one) != match_key({**one, "model": "openai/other"})


def test_lookup_counts_calls_per_side(tmp_path: Path) -> None:
    cassette = Cassette.open(tmp_path, "x__1", "all")
    config = ModelConfig("openai/a")
    seen = [cassette.lookup(side, config, [], None) for side in ("user", "agent", "agent", "judge", "agent")]
    assert [(s.side, s.call) for s in seen] == [("user", 1), ("agent", 1), ("agent", 2), ("judge", 1), ("agent", 3)]
    assert all(isinstance(s, Lookup) and s.completion is None for s in seen)


# ---- options ---------------------------------------------------------------------------------------------


def test_record_mode_options_resolve_and_validate() -> None:
    names = {o.name: o for o in OPTIONS}
    assert names["record_mode"].flag == "--tau2-record-mode" and names["cassette_dir"].ini == "tau2_cassette_dir"

    values = resolve({"record_mode": "new_episodes"}, {"record_mode": "none", "cassette_dir": "rec"}, {})
    assert values["record_mode"] == "new_episodes" and values["cassette_dir"] == "rec"
    assert Settings(record_mode=values["record_mode"]).recording == "new_episodes"
    # "off" on the command line overrides an ini file's mode.
    assert Settings(**resolve({"record_mode": "off"}, {"record_mode": "none"}, {})).recording is None
    assert Settings().recording is None

    with pytest.raises(ValueError, match=r"--tau2-record-mode \(ini tau2_record_mode\) must be one of none, once"):
        resolve({"record_mode": "replay"}, {}, {})


# ---- usage and URL credentials ---------------------------------------------------------------------------


def test_replayed_calls_are_counted_apart_and_survive_a_round_trip() -> None:
    meter = UsageMeter()
    meter.record("agent", Completion("a", [], 10, 2, 0.5, "m", {}, replayed=True))
    meter.record("agent", Completion("b", [], 5, 1, 0.25, "m", {}))

    data = meter.to_dict()

    assert data["agent"] == {
        "calls": 2,
        "prompt_tokens": 15,
        "completion_tokens": 3,
        "total_tokens": 18,
        "cost_usd": 0.75,
        "replayed_calls": 1,
    }
    assert "replayed_calls" not in data["user"]  # only where some calls were replayed
    assert UsageMeter.from_dict(data).to_dict() == data
    assert UsageMeter().merge(meter).side("agent").replayed_calls == 1


def test_a_password_in_a_url_argument_is_a_secret() -> None:
    config = ModelConfig("openai/x", {"api_base": "http://bob:pa55-W0rd-xyz@127.0.0.1:8080/v1", "api_key": "sk-abc"})

    assert "pa55-W0rd-xyz" in config.secrets()
    assert config.safe_dict()["args"]["api_base"] == "http://bob:***@127.0.0.1:8080/v1"
    assert "pa55-W0rd-xyz" not in redact("failed: http://bob:pa55-W0rd-xyz@127.0.0.1", config.secrets())
    assert ModelConfig("openai/x", {"api_base": "http://127.0.0.1:8080/v1"}).secrets() == []


def test_redaction_is_safe_while_another_thread_changes_the_environment() -> None:
    # Cassettes are written from the --tau2-concurrency loop thread while pytest's own thread
    # sets and deletes PYTEST_CURRENT_TEST.
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            os.environ["TAU2_RACE_PROBE_TOKEN"] = "abc123def456ghi"
            os.environ.pop("TAU2_RACE_PROBE_TOKEN", None)

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        for _ in range(20_000):
            redact("nothing secret here")
    finally:
        stop.set()
        thread.join()


def test_one_object_used_twice_is_written_twice_never_as_an_alias(tmp_path: Path) -> None:
    shared = {"role": "user", "content": "same message"}
    request = {"model": "openai/m", "args": {}, "tools": None, "messages": [shared, shared]}
    reply = {"content": "ok", "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    path = tmp_path / "c.yaml"
    write(path, "s", [Interaction("agent", 1, request, reply, match_key(request))])
    text = path.read_text("utf-8")
    assert "&id" not in text and "*id" not in text
    assert load(path)[0].request["messages"] == [shared, shared]


def test_a_cassette_with_aliases_is_refused_before_it_is_walked(tmp_path: Path) -> None:
    laughs: Any = ["lol"] * 9
    for _ in range(9):
        laughs = [laughs] * 9
    data = {"format": 1, "scenario": "s", "calls": [], "x": laughs}
    path = tmp_path / "bomb.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    assert len(path.read_bytes()) < 2000
    with pytest.raises(CassetteError, match=rf"cassette {path}: uses YAML aliases"):
        load(path)
