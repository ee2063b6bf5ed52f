"""Every ``--tau2-*`` option in one table, resolved once: CLI > ini > environment > default.

The plugin registers options and ini keys from :func:`all_options`: the core table :data:`OPTIONS`
(declared in ``settings/options.py``) and the options a domain registers as an
:class:`OptionSection` (``register_option_section``), and builds one frozen :class:`Settings` per
run (shipped to xdist workers as plain values). The models of a run are resolved once per
Settings into typed :class:`~pytest_tau2.settings.roles.ModelRole` values: ``settings.roles``
(a :class:`~pytest_tau2.settings.roles.Roles`).
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pytest_tau2.extension.registry import Registry, load_builtin_extensions
from pytest_tau2.llm.secrets import mask_args, mask_json_text, mask_url, redact, secret_items, secrets_in_json
from pytest_tau2.settings.options import OPTIONS as OPTIONS  # the table, re-exported: every reader imports it from here
from pytest_tau2.settings.options import SECTIONS as SECTIONS
from pytest_tau2.settings.options import Option as Option
from pytest_tau2.settings.options import OptionValue as OptionValue

if TYPE_CHECKING:
    from pytest_tau2.settings.roles import Roles

T = TypeVar("T")


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
    review: bool = False
    review_model: str | None = None
    review_args: str | None = None
    review_mode: str = "full"
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
    trials: int = 1
    seed: int = 300
    prompts: str = "upstream"
    speech_complexity: str | None = None
    audio_pace: float = 1.0
    tts_model: str | None = None
    tts_args: str | None = None
    asr_model: str | None = None
    asr_args: str | None = None
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
    sections: dict[str, OptionValue] = field(default_factory=dict)
    """The values of the options extensions registered (a domain's :class:`OptionSection`), by
    option name; an option not here has its default. Read them typed: ``SECTION.of(settings)``."""

    @functools.cached_property
    def roles(self) -> Roles:
        """The run's models (agent, user, judges, cloud speech engines), parsed and priced once per Settings; a
        SettingsError naming the option when one is wrong (the adapter checks it at start)."""
        from pytest_tau2.settings.roles import resolve_roles  # the model config's module: not at pytest's start

        return resolve_roles(
            agent_model=self.agent_model,
            agent_args=self.agent_args,
            user_model=self.user_model,
            user_args=self.user_args,
            judge_model=self.judge_model,
            judge_args=self.judge_args,
            judge_prompt=self.judge_prompt,
            price=self.price,
            tts_model=self.tts_model,
            tts_args=self.tts_args,
            asr_model=self.asr_model,
            asr_args=self.asr_args,
        )

    def option(self, name: str) -> OptionValue:
        """The value of a registered section's option (its default when not given)."""
        if name in self.sections:
            return self.sections[name]
        return registered_option(name).default

    def cached(self, key: str, make: Callable[[], T]) -> T:
        """``make()`` once per Settings (a section's typed view; the Settings stay frozen and equal)."""
        cache = self.__dict__.setdefault("_views", {})
        if key not in cache:
            cache[key] = make()
        return cast(T, cache[key])

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
        texts = [self.agent_args, self.user_args, self.judge_args, self.review_args, self.tts_args, self.asr_args]
        texts += [value for name, value in self.sections.items() if name.endswith("_args") and isinstance(value, str)]
        found = [value for text in texts for value in secrets_in_json(text)]
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
        return {k: _masked(k, v) for k, v in mask_args(value).items()}
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

# Options that are a share or a level: strictly between 0 and 1 (fail_under: 0 and 1 allowed).
FRACTIONS: dict[str, tuple[float, float, bool]] = {
    "ci_level": (0.0, 1.0, False),
    "alpha": (0.0, 1.0, False),
    "fail_under": (0.0, 1.0, True),
}


def resolve(cli: dict[str, Any], ini: dict[str, Any], environ: dict[str, str] | None = None) -> dict[str, Any]:
    """CLI > ini > environment > default, per option: the core options by name, the registered
    sections' options under ``sections`` (the keyword arguments of :class:`Settings`)."""
    environ = dict(os.environ) if environ is None else environ
    values: dict[str, Any] = {}
    sections: dict[str, OptionValue] = {}
    core = {option.name for option in OPTIONS}
    for option in all_options():
        chosen, given = option.default, False
        for source in (cli.get(option.name), ini.get(option.name), environ.get(option.env) if option.env else None):
            if source is not None and source != "" and source is not False:
                chosen, given = coerce(option, source), True
                break
        check(option, chosen)
        if option.name in core:
            values[option.name] = chosen
        elif given:  # a section's option not given keeps its default (Settings.option)
            sections[option.name] = chosen
    values["sections"] = sections
    if values.get("shard") is not None:
        from pytest_tau2.settings.shards import parse_shard

        try:
            values["shard"] = str(parse_shard(str(values["shard"])))
        except ValueError as exc:
            raise ValueError(f"--tau2-shard (ini tau2_shard) {exc}") from None
    return values


def check(option: Option, value: OptionValue) -> None:
    """A ValueError naming the option when ``value`` is outside what it accepts."""
    minimum = MINIMUMS.get(option.name)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{option.flag} (ini {option.ini}) must be a finite number, got {value!r}")
    if minimum is not None and isinstance(value, int | float) and value < minimum:
        raise ValueError(f"{option.flag} (ini {option.ini}) must be at least {minimum:g}, got {value!r}")
    bounds = FRACTIONS.get(option.name)
    if bounds is not None and isinstance(value, int | float):
        low, high, inclusive = bounds
        inside = low <= value <= high if inclusive else low < value < high
        if not inside:
            word = "from" if inclusive else "strictly between"
            raise ValueError(
                f"{option.flag} (ini {option.ini}) must be {word} {low:g} {'to' if inclusive else 'and'} "
                f"{high:g} (e.g. 0.95 for 95%), got {value!r}"
            )
    if option.choices and value is not None and value not in option.choices:
        raise ValueError(f"{option.flag} (ini {option.ini}) must be one of {', '.join(option.choices)}, got {value!r}")


CHOICES: dict[str, tuple[str, ...]] = {option.name: option.choices for option in OPTIONS if option.choices}
"""The core options that take one word of a fixed set (read from the table's ``choices``)."""


# ---- options a domain registers -------------------------------------------------------------------


@dataclass(frozen=True)
class OptionSection(Generic[T]):
    """A domain's (or another extension's) own options, declared where the domain lives.

    ``options`` are declared to pytest in a ``--help`` group titled ``title`` and resolved like the
    core's (CLI > ini > environment > default; ``choices`` checked); their values travel in
    ``Settings.sections``. ``view`` turns the Settings into the section's typed value (its model
    roles parsed, its values checked): :meth:`of` makes it once per Settings, and the adapter makes
    it when the settings are resolved, so a wrong value is a usage error before any scenario runs.
    """

    name: str
    title: str
    options: tuple[Option, ...]
    view: Callable[[Settings], T]

    def of(self, settings: Settings) -> T:
        """The section's typed value for ``settings`` (made once per Settings)."""
        return settings.cached(f"section:{self.name}", lambda: self.view(settings))


OPTION_SECTIONS: Registry[str, OptionSection[Any]] = Registry(
    "option section",
    describe=lambda section: f"section {section.name!r} ({', '.join(o.flag for o in section.options)})",
)
"""Every registered option section by name (extension/registry.py)."""


def register_option_section(section: OptionSection[T], *, replace: bool = False) -> OptionSection[T]:
    """Add a section of options; a name of the core table or of another section is refused."""
    taken = {option.name for option in OPTIONS} | {
        option.name for other in OPTION_SECTIONS.registered() if other.name != section.name for option in other.options
    }
    clash = [option.flag for option in section.options if option.name in taken]
    if clash:
        raise ValueError(f"option section {section.name!r}: {', '.join(clash)} already declared")
    OPTION_SECTIONS.register(section.name, section, replace=replace)
    _by_name.cache_clear()
    return section


def option_sections() -> list[OptionSection[Any]]:
    """The registered sections (the built-in domains' first), without loading other extensions:
    the plugin declares them at every pytest start, which stays cheap."""
    load_builtin_extensions()
    return OPTION_SECTIONS.registered()


def all_options() -> tuple[Option, ...]:
    """The core table, then every registered section's options."""
    return OPTIONS + tuple(option for section in option_sections() for option in section.options)


@functools.cache
def _by_name() -> dict[str, Option]:
    return {option.name: option for option in all_options()}


def registered_option(name: str) -> Option:
    """The option called ``name`` (core or registered); a KeyError naming it when there is none."""
    found = _by_name().get(name)
    if found is None:
        _by_name.cache_clear()
        found = _by_name().get(name)
    if found is None:
        raise KeyError(f"no --tau2-* option {name!r}")
    return found


def check_sections(settings: Settings) -> None:
    """Make every registered section's typed value once: a SettingsError naming the option when
    one of its values is wrong (run at start, with the roles, before any scenario)."""
    for section in option_sections():
        section.of(settings)
