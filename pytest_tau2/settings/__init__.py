"""Every ``--tau2-*`` option in one table, resolved once: CLI > ini > environment > default.

The plugin registers options and ini keys from :data:`OPTIONS` (declared in ``settings/options.py``),
and builds one frozen :class:`Settings` per run (shipped to xdist workers as plain values).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, cast

from pytest_tau2.llm.secrets import mask_args, mask_json_text, mask_url, redact, secret_items, secrets_in_json
from pytest_tau2.settings.options import OPTIONS as OPTIONS  # the table, re-exported: every reader imports it from here
from pytest_tau2.settings.options import Option as Option
from pytest_tau2.settings.options import OptionValue as OptionValue


@dataclass(frozen=True)
class Settings:
    scenarios: str | None = None
    shard: str | None = None
    agent: str | None = None
    user: str | None = None
    agent_model: str | None = None
    agent_args: str | None = None
    user_model: str | None = None
    user_args: str | None = None
    judge_model: str | None = None
    judge_args: str | None = None
    judge_prompt: str = "ours"
    agent_url: str | None = None
    agent_timeout: float = 120.0
    data_dir: str | None = None
    allow_unpinned_data: bool = False
    eval_data_root: str = "data"
    results_dir: str = "tau2-results"
    resume: str | None = None
    save_db: bool = False
    min_agent_turns: int = 3
    max_turns: int | None = None
    max_duration: float | None = None
    max_tool_errors: int = 10
    max_user_steps: int = 200
    max_tokens: int | None = None
    max_cost: float | None = None
    max_messages: int | None = None
    budget: float | None = None
    price: str | None = None
    estimate: bool = False
    estimate_file: str | None = None
    estimate_from: str | None = None
    llm_retries: int = 3
    llm_timeout: float = 120.0
    llm_transport: str = "auto"
    concurrency: int = 1
    max_connections: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    rate_limit_timeout: float = 120.0
    progress_interval: float | None = None
    telecom_tasks: str = "base"
    retrieval: str = "bm25"
    embedding_model: str | None = None
    embedding_args: str | None = None
    reranker_model: str | None = None
    reranker_args: str | None = None
    trials: int = 1
    seed: int = 300
    speech_complexity: str | None = None
    verdict: str = "six-signal"
    record_mode: str | None = None
    cassette_dir: str | None = None
    ci_level: float = 0.95
    baseline: str | None = None
    fail_on_regression: bool = False
    alpha: float = 0.05
    fail_under: float | None = None
    fail_under_bound: str = "estimate"
    junit_properties: str = "suite"
    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form values for plugins and conftests built on pytest-tau2 (shipped to xdist workers)."""

    @property
    def agent_kind(self) -> str:
        """The agent actually used: explicit choice, else litellm with a model, else the oracle."""
        if self.agent:
            return self.agent
        if self.agent_url:
            return "websocket"
        return "litellm" if self.agent_model else "oracle"

    @property
    def recording(self) -> str | None:
        """The record mode in force (none, once, new_episodes, all), or None when cassettes are off."""
        return None if self.record_mode in (None, "", "off") else self.record_mode

    @property
    def user_kind(self) -> str:
        if self.user:
            return self.user
        return "litellm" if self.user_model else "scripted"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def __repr__(self) -> str:
        # What tracebacks (also ``pytest -l``) and JUnit files show: credentials masked.
        shown = ", ".join(f"{f.name}={_masked(f.name, getattr(self, f.name))!r}" for f in fields(self))
        return f"Settings({shown})"

    def secrets(self) -> list[str]:
        """The credentials this run was given: model arguments' keys and URL passwords (for redaction)."""
        found = [
            value
            for text in (self.agent_args, self.user_args, self.judge_args, self.embedding_args, self.reranker_args)
            for value in secrets_in_json(text)
        ]
        found += [value for _, value in secret_items({"agent_url": self.agent_url or "", "extra": self.extra})]
        return found

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Settings:
        """The settings :meth:`to_dict` gave (shipped to a worker): field names and values as written."""
        return cls(**cast("dict[str, Any]", data))


def _masked(name: str, value: object) -> object:
    if isinstance(value, str) and name.endswith("_args"):
        return mask_json_text(value)
    if isinstance(value, str) and "://" in value:
        return mask_url(value)
    if isinstance(value, dict):
        return mask_args(value)
    return value


def shown(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """``text`` as a message about options may show it: credentials masked."""
    return redact(text, secrets)


def coerce(option: Option, raw: OptionValue | list[str]) -> OptionValue:
    """Turn a CLI/ini/env string into the option's type, with an error naming the option."""
    if isinstance(raw, list | tuple):  # a repeatable flag given several times
        raw = ",".join(str(value) for value in raw if value is not None and str(value) != "") or None
    if raw is None or raw == "":
        return option.default
    if option.kind == "str" or not isinstance(raw, str):
        if option.kind == "bool" and not isinstance(raw, bool):
            return bool(raw)
        return raw
    try:
        if option.kind == "int":
            return int(raw)
        if option.kind == "float":
            number = float(raw)
            if math.isfinite(number):
                return number
        if option.kind == "bool":
            value = raw.strip().lower()
            if value in ("1", "true", "yes", "on"):
                return True
            if value in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
    except ValueError:
        raise ValueError(f"{option.flag} (ini {option.ini}) expects {option.kind}, got {raw!r}") from None
    if option.kind == "float":  # float() accepts "nan" and "inf"; no duration or limit is either
        raise ValueError(f"{option.flag} (ini {option.ini}) must be a finite number, got {raw!r}")
    return raw


# Lower bounds of numeric options (inclusive); a value below is a usage error naming the option.
MINIMUMS: dict[str, float] = {
    "min_agent_turns": 0,
    "max_turns": 1,
    "max_duration": 0.001,
    "max_tool_errors": 1,
    "max_user_steps": 1,
    "max_tokens": 1,
    "max_cost": 0.0,
    "max_messages": 1,
    "budget": 0.0,
    "llm_retries": 0,
    "llm_timeout": 0.001,
    "agent_timeout": 0.001,
    "concurrency": 1,
    "max_connections": 1,
    "rpm": 0.001,
    "tpm": 1,
    "rate_limit_timeout": 0.001,
    "progress_interval": 0,
    "trials": 1,
}

# Options that take one word of a fixed set; anything else is a usage error naming the option.
CHOICES: dict[str, tuple[str, ...]] = {
    "record_mode": ("none", "once", "new_episodes", "all", "off"),
    "llm_transport": ("auto", "litellm"),
    "junit_properties": ("suite", "testcase", "none"),
    "fail_under_bound": ("estimate", "lower"),
    "judge_prompt": ("ours", "upstream"),
    "speech_complexity": (  # tau2's speech presets (speech/presets.py PRESETS)
        "control",
        "regular",
        "control_audio",
        "control_accents",
        "control_behavior",
        "control_audio_accents",
        "control_audio_behavior",
        "control_accents_behavior",
    ),
}

# Options that are a share or a level: strictly between 0 and 1 (fail_under: 0 and 1 allowed).
FRACTIONS: dict[str, tuple[float, float, bool]] = {
    "ci_level": (0.0, 1.0, False),
    "alpha": (0.0, 1.0, False),
    "fail_under": (0.0, 1.0, True),
}


def resolve(cli: dict[str, Any], ini: dict[str, Any], environ: dict[str, str] | None = None) -> dict[str, Any]:
    """CLI > ini > environment > default, per option."""
    environ = dict(os.environ) if environ is None else environ
    values: dict[str, Any] = {}
    for option in OPTIONS:
        for source in (cli.get(option.name), ini.get(option.name), environ.get(option.env) if option.env else None):
            if source is not None and source != "" and source is not False:
                values[option.name] = coerce(option, source)
                break
        else:
            values[option.name] = option.default
        minimum = MINIMUMS.get(option.name)
        value = values[option.name]
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{option.flag} (ini {option.ini}) must be a finite number, got {value!r}")
        if minimum is not None and value is not None and value < minimum:
            raise ValueError(f"{option.flag} (ini {option.ini}) must be at least {minimum:g}, got {value!r}")
        bounds = FRACTIONS.get(option.name)
        if bounds is not None and value is not None:
            low, high, inclusive = bounds
            inside = low <= value <= high if inclusive else low < value < high
            if not inside:
                word = "from" if inclusive else "strictly between"
                raise ValueError(
                    f"{option.flag} (ini {option.ini}) must be {word} {low:g} {'to' if inclusive else 'and'} "
                    f"{high:g} (e.g. 0.95 for 95%), got {value!r}"
                )
        choices = CHOICES.get(option.name)
        if choices is not None and value is not None and value not in choices:
            raise ValueError(f"{option.flag} (ini {option.ini}) must be one of {', '.join(choices)}, got {value!r}")
    if values.get("shard") is not None:
        from pytest_tau2.report.shards import parse_shard

        try:
            values["shard"] = str(parse_shard(str(values["shard"])))
        except ValueError as exc:
            raise ValueError(f"--tau2-shard (ini tau2_shard) {exc}") from None
    return values
