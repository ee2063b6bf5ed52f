"""Faults in the model layer, over real HTTP: malformed 200 replies, streaks of failures, refusals, secrets.

See docs/faults.md ("Faults in the model and bot layers").
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_tau2.errors import InfrastructureError
from pytest_tau2.llm import Completion, ModelConfig, RetryPolicy, aclose, acomplete, redact
from pytest_tau2.llm.faults import GIVE_UP_AFTER, reset_failure_streaks
from pytest_tau2.llm.secrets import SecretDict, could_be_secret, mask_json_text, mask_url, redact_data, secrets_in_json
from tests.support import fixtures
from tests.support.fake_openai import FakeOpenAIServer, error, raw, sequence, text

KEY = "plainkey-Zq8xW3vLk0pY"  # no provider shape: only the given-secret list can mask it
FAST = RetryPolicy(max_retries=2, backoff_s=0.01, max_backoff_s=0.02, timeout_s=10.0)
HELLO = [{"role": "user", "content": "Hello"}]

fake_llm = fixtures.fake_llm
llm_transport = fixtures.llm_transport
pytestmark = pytest.mark.usefixtures("llm_transport")  # every test on both transports


@pytest.fixture(autouse=True)
def _fresh_streaks() -> Iterator[None]:
    reset_failure_streaks()
    yield
    reset_failure_streaks()


def config(server: FakeOpenAIServer, model: str = "agent") -> ModelConfig:
    return ModelConfig(f"openai/{model}", {"api_base": server.base_url, "api_key": KEY})


def complete(cfg: ModelConfig) -> Completion:
    async def call() -> Completion:
        try:
            return await acomplete(cfg, HELLO, retry=FAST)
        finally:
            await aclose()

    return asyncio.run(call())


def fails(cfg: ModelConfig) -> InfrastructureError:
    with pytest.raises(InfrastructureError) as caught:
        complete(cfg)
    assert KEY not in str(caught.value)
    return caught.value


# ---- a 200 reply that is not a chat completion --------------------------------------------------------


COMPLETION_HEAD = {"id": "x", "object": "chat.completion", "created": 1, "model": "agent"}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({**COMPLETION_HEAD, "choices": []}, "the provider answered without a completion (choices: [])"),
        (
            {**COMPLETION_HEAD, "choices": [{"index": 0, "finish_reason": "stop"}]},
            # both transports: litellm refuses to convert it, and its refused body is read as the
            # wire path reads it (transport_litellm.py)
            "the provider's first choice has no message",
        ),
        (
            {**COMPLETION_HEAD, "choices": None},
            {"litellm": "not a list", "auto": "the provider answered without a completion (choices: None)"},
        ),
        ("<html>502 Bad Gateway</html>", "Expecting value"),
        ("", "Expecting value"),
    ],
    ids=["empty-choices", "no-message", "null-choices", "html", "empty-body"],
)
def test_a_malformed_200_reply_is_an_infrastructure_error(
    fake_llm: FakeOpenAIServer, body: str | dict[str, Any], says: str | dict[str, str], llm_transport: str
) -> None:
    fake_llm.add_handler("agent", raw(body))
    exc = fails(config(fake_llm))
    message = str(exc)
    assert "failed after 3 attempts (last malformed reply: " in message, message
    assert (says if isinstance(says, str) else says[llm_transport]) in message
    assert "Traceback" not in message  # litellm's embedded traceback is cut off
    assert not exc.fatal
    assert len(fake_llm.requests) == 3  # retried like a 5xx: a proxy hiccup may pass


def test_a_malformed_reply_then_a_good_one_passes(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", sequence(raw({**COMPLETION_HEAD, "choices": []}), text("Hi!")))
    assert complete(config(fake_llm)).text == "Hi!"


# ---- a model that stays down stops the run --------------------------------------------------------------


def test_a_persistent_500_stops_the_run_after_three_calls_in_a_row(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(500, "upstream is down"))
    cfg = config(fake_llm)
    errors = [fails(cfg) for _ in range(GIVE_UP_AFTER)]
    assert [e.fatal for e in errors] == [False] * (GIVE_UP_AFTER - 1) + [True]
    assert "Stopping the run: 3 calls in a row to this model failed after every retry." in str(errors[-1])
    assert len(fake_llm.requests) == GIVE_UP_AFTER * 3


def test_a_success_resets_the_streak(fake_llm: FakeOpenAIServer) -> None:
    down = error(500, "upstream is down")
    fake_llm.add_handler("agent", sequence(*[down] * 6, text("back"), *[down] * 6))
    cfg = config(fake_llm)
    assert [fails(cfg).fatal for _ in range(2)] == [False, False]
    assert complete(cfg).text == "back"
    assert [fails(cfg).fatal for _ in range(2)] == [False, False]


def test_streaks_are_counted_per_model(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(500, "agent down"))
    fake_llm.add_handler("judge", error(500, "judge down"))
    fails(config(fake_llm, "agent"))
    fails(config(fake_llm, "agent"))
    assert not fails(config(fake_llm, "judge")).fatal


def test_a_client_error_is_not_part_of_a_streak(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(400, "bad request"))
    assert [fails(config(fake_llm)).fatal for _ in range(GIVE_UP_AFTER + 1)] == [False] * (GIVE_UP_AFTER + 1)
    assert len(fake_llm.requests) == GIVE_UP_AFTER + 1  # and never retried


def test_a_refused_connection_stops_the_run_at_once() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = ModelConfig("openai/agent", {"api_base": f"http://127.0.0.1:{port}/v1", "api_key": KEY})
    exc = fails(cfg)
    assert exc.fatal
    assert "connection refused" in str(exc)


def test_rejected_credentials_are_fatal_and_not_retried(fake_llm: FakeOpenAIServer) -> None:
    fake_llm.add_handler("agent", error(401, "Incorrect API key provided"))
    assert fails(config(fake_llm)).fatal
    assert len(fake_llm.requests) == 1


# ---- records that hold a configuration --------------------------------------------------------------


def test_model_config_repr_masks_credentials() -> None:
    cfg = ModelConfig("openai/x", {"api_key": KEY, "api_base": "https://bob:pa55-W0rd-1@h/v1", "temperature": 0})
    text_ = repr(cfg)
    assert KEY not in text_ and "pa55-W0rd-1" not in text_
    assert "'temperature': 0" in text_ and "https://bob:***@h/v1" in text_ and "openai/x" in text_
    assert KEY not in str(cfg) and KEY not in f"{[cfg]}"


def test_secret_dict_repr_masks_what_pytest_l_prints() -> None:
    kwargs = SecretDict({"api_key": KEY, "model": "m", "extra_headers": {"Authorization": "Bearer xyz12345678"}})
    assert KEY not in repr(kwargs) and "xyz12345678" not in repr(kwargs)
    assert kwargs["api_key"] == KEY  # the call itself still gets the key


def test_option_errors_do_not_echo_keys_of_any_shape() -> None:
    bad = json.dumps({"api_key": KEY, "temperature": 0})[:-1] + ","  # invalid JSON
    with pytest.raises(ValueError) as caught:
        ModelConfig.from_option("openai/x", bad, option_name="--tau2-agent-args")
    assert KEY not in str(caught.value) and '"api_key": "***"' in str(caught.value)
    with pytest.raises(ValueError) as caught:
        ModelConfig.from_option(None, json.dumps({"api_key": KEY}), option_name="--tau2-judge-args")
    assert KEY not in str(caught.value)
    with pytest.raises(ValueError) as caught:
        not_an_object = json.dumps(["api_base", f"http://u:{KEY}@h"])
        ModelConfig.from_option("openai/x", not_an_object, option_name="--tau2-user-args")
    assert KEY not in str(caught.value)


def test_secrets_in_option_text() -> None:
    text_ = '{"api_key": "k-1234", "api_base": "http://u:pw-5678@h/v1", "extra_headers": {"X-Token": "t-9"}}'
    assert sorted(secrets_in_json(text_)) == ["k-1234", "pw-5678", "t-9"]
    assert secrets_in_json('{"api_key": "k-1234", broken') == ["k-1234"]
    assert secrets_in_json(None) == [] and secrets_in_json("[1]") == []
    assert mask_json_text('{"API_KEY": "k-1234"}') == '{"API_KEY": "***"}'


# ---- redaction on word boundaries --------------------------------------------------------------------


ORDINARY = [
    "risk-assessment-meeting",
    "Please ask-for-help at the desk-key-12 counter",
    "the task-force meeting is at 10:30",
    "mask-123456789 is a product code",
    "see https://example.com/path?x=1 and mailto:bob@example.com",
    "user@example.com wrote: sk-assessment-notes",
]


@pytest.mark.parametrize("sentence", ORDINARY)
def test_ordinary_text_is_left_intact(sentence: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FEATURE_TOKEN", "disabled")  # a setting, not a key: never masked
    assert redact(sentence) == sentence


def test_key_shapes_are_masked_as_whole_tokens() -> None:
    assert redact("key=sk-proj-Ab12Cd34Ef56 end") == "key=*** end"
    assert redact('"sk-ant-api03-abcDEF123456"') == '"***"'
    assert redact("google AIzaSyA1234567890abcdefghijklmnopqrstu") == "google ***"
    assert redact("Authorization: Bearer abc.def-ghi_jkl") == "Authorization: Bearer ***"
    assert redact("risk-assessment-meeting sk-abcdefgh1234") == "risk-assessment-meeting ***"


def test_given_secrets_are_masked_on_word_boundaries() -> None:
    assert redact("given hunter22 and hunter22.", ["hunter22"]) == "given *** and ***."
    assert redact("xhunter22y stays", ["hunter22"]) == "xhunter22y stays"
    assert redact("abc", ["abc"]) == "abc"  # too short to be told from a word


@pytest.mark.parametrize(
    "dummy", ["none", "None", "EMPTY", "x", "test", "sk-no-key", "not-needed", "ollama", "abc1234", "xxxxxxxxxxxx"]
)
def test_dummy_keys_are_never_redaction_patterns(dummy: str) -> None:
    """The documented ``"api_key": "none"`` of a local server (and its kin) masks no word anywhere."""
    text_ = f"None of the orders; none shipped. Key {dummy!r} given, {dummy} said: EMPTY box, x marks it."
    assert not could_be_secret(dummy)
    assert redact(text_, [dummy]) == text_
    assert redact_data({"content": text_}, [dummy]) == {"content": text_}


@pytest.mark.parametrize("real", ["hunter22-long", "Zq8xW3vLk0pYt7Rm", "a-long-words-only-passphrase"])
def test_values_that_could_be_keys_are_masked(real: str) -> None:
    assert could_be_secret(real)
    assert redact(f"echo {real}.", [real]) == "echo ***."


def test_credentials_in_url_queries_are_masked() -> None:
    assert mask_url("ws://h:8765/agent?token=abc123&lang=en") == "ws://h:8765/agent?token=***&lang=en"
    assert mask_url("https://h/v1?api-version=2024&api-key=K9x") == "https://h/v1?api-version=2024&api-key=***"
    assert (
        mask_url("https://b.s3/x?X-Amz-Credential=AK/1&X-Amz-Signature=f00d&x=1")
        == "https://b.s3/x?X-Amz-Credential=***&X-Amz-Signature=***&x=1"
    )
    assert (
        redact("failed: GET wss://h/a?sig=s1&password=p2 (403)") == "failed: GET wss://h/a?sig=***&password=*** (403)"
    )
    # a path a server echoes back (litellm: "no route for POST /v1/?api-key=Kchat/completions")
    assert redact("404 for POST /v1/?api-key=Kq1chat/completions") == "404 for POST /v1/?api-key=***"
    assert redact("http://h/v1?page=2&lang=en") == "http://h/v1?page=2&lang=en"
    cfg = ModelConfig("openai/m", {"api_base": "http://h/v1?api-key=Kq1234567", "api_key": "none"})
    assert cfg.safe_dict()["args"] == {"api_base": "http://h/v1?api-key=***", "api_key": "***"}
    assert cfg.secrets() == ["Kq1234567", "none"]
    assert redact_data({"said": "the key is Kq1234567"}, cfg.secrets()) == {"said": "the key is ***"}


def test_provider_key_environment_values_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "anthropic-value-0123456789")
    monkeypatch.setenv("MISTRAL_API_KEY", "Mistral0123456789abcdef")
    text_ = "echo anthropic-value-0123456789 and Mistral0123456789abcdef"
    assert redact(text_) == "echo *** and ***"


def test_url_passwords_are_masked_everywhere() -> None:
    assert mask_url("ws://bot:s3cret@127.0.0.1:8765/x") == "ws://bot:***@127.0.0.1:8765/x"
    assert redact("api_base=https://u:pw@host/v1 then ws://:tok@h") == "api_base=https://u:***@host/v1 then ws://:***@h"
    assert redact("ws://127.0.0.1:8765 has no userinfo") == "ws://127.0.0.1:8765 has no userinfo"


def test_a_cassette_lookup_does_not_show_the_secrets_it_masks(tmp_path: Any) -> None:
    from pytest_tau2.llm.cassette import Cassette

    cassette = Cassette.open(tmp_path, "faults__lookup", "all")
    cfg = ModelConfig("openai/agent", {"api_key": KEY, "api_base": "http://u:pw-123456@h/v1"})
    lookup = cassette.lookup("agent", cfg, HELLO, None, None)
    assert KEY in lookup.secrets  # kept for masking what is written ...
    assert KEY not in repr(lookup) and "pw-123456" not in repr(lookup)  # ... never shown


def test_redact_data_masks_secrets_anywhere_and_leaves_clean_data_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_tau2.llm.secrets import redact_data

    monkeypatch.setenv("ACME_API_KEY", "acmekey1234567890abcdef")
    clean = {"messages": [{"role": "user", "content": "Where is my order?"}], "turns": (1, 2.5, None)}
    assert redact_data(clean, [KEY]) is clean  # nothing to mask: not even copied
    dirty = {
        "messages": [
            {"role": "assistant", "content": f"my key is {KEY}."},
            {"role": "user", "content": "risk-assessment-meeting"},
            {"role": "tool", "content": ["url ws://bob:hunter2@host/x", "token sk-abcdef0123456789xyz"]},
        ],
        "env": "acmekey1234567890abcdef",
        "n": 3,
    }
    masked = redact_data(dirty, [KEY])
    text = json.dumps(masked)
    assert KEY not in text and "hunter2" not in text and "sk-abcdef0123456789xyz" not in text
    assert "acmekey1234567890abcdef" not in text
    assert masked["n"] == 3 and masked["messages"][0]["content"] == "my key is ***."
    assert masked["messages"][1]["content"] == "risk-assessment-meeting"
    with_base = {"agent": {"api_base": "http://127.0.0.1:8000/v1"}}  # a plain URL: nothing to mask
    assert redact_data(with_base, [KEY]) is with_base
    with_password = {"agent": {"api_base": "http://bob:hunter2@127.0.0.1:8000/v1"}}
    assert redact_data(with_password, [KEY]) == {"agent": {"api_base": "http://bob:***@127.0.0.1:8000/v1"}}
    quoted = 'ab"cd\\ef-secret-1'  # JSON would escape it: every string is checked
    assert redact_data({"a": [f"x {quoted} y"]}, [quoted]) == {"a": ["x *** y"]}


def test_redact_data_finds_secrets_next_to_what_orjson_refuses() -> None:
    """The search text is orjson's; a value it refuses (a lone surrogate, an integer beyond 64
    bits, non-string keys) is searched in the stdlib's text, and the secret is still masked."""
    from pytest_tau2.llm.secrets import redact_data

    for odd in ("\ud800", 2**70, {1: "one"}):
        dirty = {"odd": odd, "said": f"my key is {KEY}."}
        masked = redact_data(dirty, [KEY])
        assert masked["said"] == "my key is ***." and masked["odd"] == odd
        clean = {"odd": odd, "said": "nothing to hide"}
        assert redact_data(clean, [KEY]) is clean
