"""Every ``--tau2-*`` option in one table, resolved once: CLI > ini > environment > default.

The plugin registers options and ini keys from :data:`OPTIONS`, and builds one frozen
:class:`Settings` per run (shipped to xdist workers as plain values).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeAlias, cast

from pytest_tau2.llm.secrets import mask_args, mask_json_text, mask_url, redact, secret_items, secrets_in_json

OptionValue: TypeAlias = str | int | float | bool | None
"""What an option holds once coerced (see :attr:`Option.kind`)."""


@dataclass(frozen=True)
class Option:
    name: str
    """Attribute name on Settings; the CLI flag is ``--tau2-<name with dashes>``, the ini key ``tau2_<name>``."""
    help: str
    default: OptionValue = None
    kind: str = "str"  # str | int | float | bool
    env: str | None = None
    path: bool = False
    """A file or folder (given as two arguments, ``--flag DIR``, pytest may take it for a test path)."""

    @property
    def flag(self) -> str:
        return "--tau2-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "tau2_" + self.name


OPTIONS: tuple[Option, ...] = (
    Option(
        "scenarios",
        "Comma-separated scenario names or glob patterns to run, matched exactly "
        "(unlike -k, a name never selects the longer names it is a prefix of).",
        None,
    ),
    Option(
        "shard",
        "Run shard I of N (e.g. 2/4): scenarios sorted by name and dealt round-robin, trials of one scenario "
        "together; combine the shards' results folders with pytest-tau2 merge (docs/many-machines.md).",
        None,
    ),
    Option(
        "agent",
        "Built-in agent: oracle (offline default), litellm (default when --tau2-agent-model is set), "
        "replay:PATH (re-run recorded tool calls from a JSON Lines file).",
        None,
    ),
    Option(
        "user",
        "Built-in user simulator: scripted (offline default) or litellm (default when --tau2-user-model is set).",
        None,
    ),
    Option(
        "agent_model",
        "litellm model string of the agent under test, e.g. openai/gpt-4.1.",
        None,
        env="TAU2_AGENT_MODEL",
    ),
    Option("agent_args", "JSON object of litellm arguments for the agent (api_base, temperature, seed, ...).", None),
    Option("user_model", "litellm model string of the user simulator.", None, env="TAU2_USER_MODEL"),
    Option("user_args", "JSON object of litellm arguments for the user simulator.", None),
    Option(
        "judge_model",
        "litellm model string of the NL-assertion judge (no judge: NL checks are skipped).",
        None,
        env="TAU2_JUDGE_MODEL",
    ),
    Option("judge_args", "JSON object of litellm arguments for the judge.", None),
    Option("agent_url", "ws:// URL of an external agent bot speaking the pytest-tau2 protocol.", None),
    Option(
        "agent_timeout", "Seconds to wait for each frame from an external agent bot (--tau2-agent-url).", 120.0, "float"
    ),
    Option(
        "data_dir", "Folder holding tau2/domains/... (default: $TAU2_DATA_DIR, then the fetch cache).", None, path=True
    ),
    Option(
        "allow_unpinned_data",
        "Accept tau2 data whose checksums differ from the pinned manifest (recorded as unpinned).",
        False,
        "bool",
    ),
    Option(
        "eval_data_root",
        "Folder that db_path values of in-repo domains resolve against (default: <rootdir>/data).",
        None,
        env="TAU2_EVAL_DATA_ROOT",
        path=True,
    ),
    Option(
        "results_dir", "Run directory for metrics and transcripts (default: tau2-results/<timestamp>).", None, path=True
    ),
    Option(
        "resume",
        "Continue the run in this results folder: scenarios with a complete saved result are reported from "
        "it, the rest run (docs/runs.md).",
        None,
        path=True,
    ),
    Option("save_db", "Also write final_db.json (and final_user_db.json) per scenario.", False, "bool"),
    Option("min_agent_turns", "A scenario with fewer agent turns fails as stalled (0 disables).", 3, "int"),
    Option("max_turns", "Override every scenario's max_turns (agent replies).", None, "int"),
    Option("max_duration", "Override every scenario's max_duration (seconds).", None, "float"),
    Option("max_tool_errors", "Consecutive failed tool calls of one side that stop a conversation.", 10, "int"),
    Option(
        "max_user_steps",
        "User-simulator replies (tool calls included) that stop a conversation, as the simulator's doing.",
        200,
        "int",
    ),
    Option("llm_retries", "Retries of a failed LLM call (429, 5xx, timeout, connection).", 3, "int"),
    Option("llm_timeout", "Seconds before one LLM call times out.", 120.0, "float"),
    Option(
        "llm_transport",
        "How model calls travel: auto (OpenAI-compatible models over the OpenAI wire format, requests and "
        "costs identical to litellm's; every other model through litellm) or litellm (every call; "
        "docs/speed.md).",
        "auto",
        env="TAU2_LLM_TRANSPORT",
    ),
    Option(
        "concurrency",
        "Scenario conversations kept in flight at once in one pytest process (asyncio; "
        "LLM-bound sweeps); under xdist (-n), in each worker.",
        1,
        "int",
    ),
    Option(
        "max_connections",
        "Model calls in flight at once per model endpoint (provider + api_base; agent, user and judge "
        "share it), lowered while the provider answers 429 and raised again; under xdist split across "
        "workers (docs/campaigns.md).",
        None,
        "int",
    ),
    Option(
        "rpm", "Requests per minute per model endpoint (a token bucket; split across xdist workers).", None, "float"
    ),
    Option("tpm", "Tokens per minute per model endpoint (a token bucket; split across xdist workers).", None, "float"),
    Option(
        "rate_limit_timeout",
        "Seconds a model call waits out HTTP 429 (and 503 with Retry-After) before it gives up; when no "
        "call to the endpoint got through in that time, the run stops.",
        120.0,
        "float",
    ),
    Option(
        "progress_interval",
        "Seconds between plain progress lines (done / in flight / total, pass rate, cost, calls/s, ETA) when "
        "stdout is not a terminal; 0: none. Default: 30 where CI is set, else none (a terminal shows one "
        "line updated in place; nothing under -q).",
        None,
        "float",
    ),
    Option("telecom_tasks", "Telecom task set: base (114, default) or full (2,285).", "base"),
    Option(
        "retrieval",
        "banking_knowledge retrieval configuration: bm25 (default), no_knowledge, full_kb, golden_retrieval, "
        "grep_only, terminal_use (a shell in a bubblewrap sandbox), openai_embeddings / qwen_embeddings "
        "(dense, litellm embeddings), their *_grep and *_reranker variants, bm25_grep, bm25_reranker "
        "(docs/tau2-banking-knowledge.md).",
        "bm25",
    ),
    Option(
        "embedding_model",
        "litellm embedding model of the dense retrieval configurations (default: the configuration's, "
        "openai/text-embedding-3-large or openrouter/qwen/qwen3-embedding-8b).",
        None,
    ),
    Option("embedding_args", "JSON object of litellm arguments for the embedding calls (api_base, ...).", None),
    Option(
        "reranker_model",
        "litellm model of the *_reranker retrieval configurations' LLM reranker (default: openai/gpt-5.2).",
        None,
    ),
    Option("reranker_args", "JSON object of litellm arguments for the reranker calls.", None),
    Option(
        "trials",
        "Trials per scenario: K > 1 makes each scenario K items, test_scenario[<name>-t1] .. [<name>-tK], "
        "each with its own seed; the summary adds pass^k (docs/leaderboard.md).",
        1,
        "int",
    ),
    Option(
        "seed",
        "Base seed of the trials: trial k's seed is the k-th draw of random.Random(SEED).randint(0, 1000000), "
        "passed to the agent and user models (the default 300 gives upstream tau2's trial seeds).",
        300,
        "int",
    ),
    Option(
        "verdict",
        "What decides a tau2 item: six-signal (the scenario's success signals, default) or tau2-reward "
        "(tau2-bench's own reward from the task's reward_basis).",
        "six-signal",
    ),
    Option(
        "record_mode",
        "Record and replay model calls, one cassette per scenario (docs/recording.md): none (replay only; "
        "a call not in the cassette is an error), once (record scenarios that have no cassette), "
        "new_episodes (replay what matches, record the rest), all (call and re-record everything), "
        "off (no cassettes; the default).",
        None,
    ),
    Option("cassette_dir", "Folder of the cassettes (default: cassettes/ under the rootdir).", None, path=True),
    Option(
        "ci_level",
        "Confidence level of the intervals in the summary, all_metrics.json, report.html and JUnit "
        "(between 0 and 1; docs/statistics.md).",
        0.95,
        "float",
    ),
    Option(
        "baseline",
        "A saved results folder to compare this run with at its end (paired, docs/statistics.md): the verdict "
        "goes to the summary, baseline_comparison.json and the JUnit suite properties.",
        None,
        path=True,
    ),
    Option(
        "fail_on_regression",
        "With --tau2-baseline: exit non-zero when this run is worse than the baseline with significance at "
        "--tau2-alpha (a dip within the noise does not fail).",
        False,
        "bool",
    ),
    Option("alpha", "Significance level of the baseline comparison (default 0.05).", 0.05, "float"),
    Option(
        "fail_under",
        "Exit non-zero when the run's success rate is below RATE (between 0 and 1, e.g. 0.7).",
        None,
        "float",
    ),
    Option(
        "fail_under_bound",
        "What --tau2-fail-under compares with RATE: estimate (the success rate, default) or lower (the lower "
        "end of its interval: fails unless the rate is surely above RATE).",
        "estimate",
    ),
    Option(
        "junit_properties",
        "Where --junitxml puts each scenario's properties (docs/ci.md): suite (the testsuite's properties, "
        "named <item id>:<name>, and the sub-results as the testcase's system-out; valid junit-10.xsd; the "
        "default), testcase (inside each testcase, not valid against the schema) or none (system-out only).",
        "suite",
    ),
)


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


def coerce(option: Option, raw: OptionValue) -> OptionValue:
    """Turn a CLI/ini/env string into the option's type, with an error naming the option."""
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
