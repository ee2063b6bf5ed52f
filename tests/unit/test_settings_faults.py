"""Option values no run can use are refused naming the option; settings never show a credential."""

from __future__ import annotations

import json
import traceback

import pytest

from pytest_tau2.settings import MINIMUMS, OPTIONS, Settings, resolve

FLOAT_OPTIONS = [o.name for o in OPTIONS if o.kind == "float"]
KEY = "plainkey-Zq8xW3vLk0pY"  # no provider shape: only masking by name can hide it


def flag(name: str) -> str:
    return "--tau2-" + name.replace("_", "-")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
@pytest.mark.parametrize("name", FLOAT_OPTIONS)
def test_non_finite_numbers_are_refused(name: str, value: str) -> None:
    with pytest.raises(ValueError) as caught:
        resolve({name: value}, {}, {})
    assert str(caught.value) == f"{flag(name)} (ini tau2_{name}) must be a finite number, got {value!r}"


@pytest.mark.parametrize("name", FLOAT_OPTIONS)
def test_non_finite_numbers_from_the_ini_file_are_refused_too(name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{flag(name)} \(ini tau2_{name}\) must be a finite number"):
        resolve({}, {name: "nan"}, {})


@pytest.mark.parametrize(("name", "minimum"), sorted(MINIMUMS.items()))
def test_values_below_the_minimum_are_refused(name: str, minimum: float) -> None:
    below = minimum - 1
    kind = next(o.kind for o in OPTIONS if o.name == name)
    text = str(int(below)) if kind == "int" else str(below)
    with pytest.raises(ValueError, match=rf"^{flag(name)} \(ini tau2_{name}\) must be at least {minimum:g}, got"):
        resolve({name: text}, {}, {})


@pytest.mark.parametrize("name", ["llm_timeout", "agent_timeout", "max_duration", "llm_retries", "trials"])
def test_negative_durations_and_counts_are_named(name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{flag(name)} "):
        resolve({name: "-1"}, {}, {})


def test_finite_values_still_pass() -> None:
    values = resolve({"llm_timeout": "2.5", "agent_timeout": "1e3", "max_duration": "60"}, {}, {})
    assert (values["llm_timeout"], values["agent_timeout"], values["max_duration"]) == (2.5, 1000.0, 60.0)


def _settings() -> Settings:
    return Settings(
        agent_args=json.dumps({"api_key": KEY, "temperature": 0}),
        judge_args=json.dumps({"api_base": f"https://judge:{KEY}-pw@h/v1"}),
        user_args='{"extra_headers": {"Authorization": "' + KEY + '"}, broken',
        agent_url=f"ws://bot:{KEY}@127.0.0.1:8765",
        extra={"service_token": KEY},
    )


def test_settings_repr_masks_every_credential() -> None:
    settings = _settings()
    shown = repr(settings)
    assert KEY not in shown and KEY not in str(settings)
    assert "ws://bot:***@127.0.0.1:8765" in shown
    assert '\\"api_key\\": \\"***\\"' in shown or '"api_key": "***"' in shown
    assert "temperature" in shown and "llm_timeout=120.0" in shown


def test_a_traceback_with_locals_shows_no_credential() -> None:
    settings = _settings()

    def fails(tau2_settings: Settings) -> None:
        raise RuntimeError("boom")

    try:
        fails(settings)
    except RuntimeError as exc:
        text = "".join(traceback.TracebackException.from_exception(exc, capture_locals=True).format())
    assert "boom" in text and "tau2_settings = Settings(" in text
    assert KEY not in text


def test_settings_secrets_lists_what_the_run_was_given() -> None:
    found = _settings().secrets()
    assert KEY in found and f"{KEY}-pw" in found
    assert Settings().secrets() == []
