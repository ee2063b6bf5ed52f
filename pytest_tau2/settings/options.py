"""The ``--tau2-*`` options, declared once: flag, ini key, environment variable, kind, default and
help (the plugin declares them to pytest from here, docs/options.md is generated from here).
Resolving them into one :class:`~pytest_tau2.settings.Settings` is the package's ``__init__``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

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
    repeatable: bool = False
    """The flag may be given several times; the values are joined with commas (``A,B``)."""

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
        "replay:PATH (re-run recorded tool calls from a JSON Lines file, or upstream runs from a tau2 Results "
        "file or folder), "
        'mcp:"COMMAND" (an agent process that speaks MCP, started per scenario: docs/mcp.md).',
        None,
    ),
    Option(
        "user",
        "Built-in user simulator: scripted (offline default), litellm (default when --tau2-user-model is set) or "
        "replay (the saved user turns of --tau2-agent replay:RESULTS).",
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
        "litellm model string of the NL-assertion judge (no judge: NL checks are skipped). Several judges: "
        "repeat the flag or separate models with commas; each assertion then gets the majority verdict, a tie "
        "fails (docs/rescoring.md).",
        None,
        env="TAU2_JUDGE_MODEL",
        repeatable=True,
    ),
    Option(
        "judge_args",
        "JSON object of litellm arguments for the judge (every judge), or a JSON list of objects, one per "
        "--tau2-judge-model.",
        None,
    ),
    Option(
        "judge_prompt",
        "The NL judge's prompt: ours (default) or upstream (tau2-bench's NL assertion evaluator's shape and "
        "output format; judge model gpt-4.1-2025-04-14 at temperature 0 unless --tau2-judge-model is given; "
        "docs/rescoring.md).",
        "ours",
    ),
    Option("agent_url", "ws:// URL of an external agent bot speaking the pytest-tau2 protocol.", None),
    Option(
        "agent_timeout",
        "Seconds to wait for each frame from an external agent bot (--tau2-agent-url), "
        "or for the next call of an MCP agent (--tau2-agent mcp:COMMAND).",
        120.0,
        "float",
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
    # Campaign controls (docs/campaigns.md): per-scenario limits, the run budget, prices, the estimate.
    Option("max_tokens", "Stop a conversation once its model calls used this many tokens (scored).", None, "int"),
    Option("max_cost", "Stop a conversation once its model calls cost this many USD (scored).", None, "float"),
    Option("max_messages", "Stop a conversation once its transcript holds this many messages (scored).", None, "int"),
    Option(
        "budget",
        "Run budget in USD: no conversation starts once the spend plus the expected cost of those in flight "
        "would pass it; the rest are skipped, naming the budget.",
        None,
        "float",
    ),
    Option("price", "USD per million tokens of a model: MODEL=IN/OUT, comma-separated (priced runs, budgets).", None),
    Option("estimate", "Collect, print the sweep's estimated calls, tokens and cost, and run nothing.", False, "bool"),
    Option(
        "estimate_file",
        "Where the estimate is written (--tau2-estimate) or read (a run: its summary shows estimate vs actual).",
        None,
        path=True,
    ),
    Option("estimate_from", "A results folder of an earlier run of these scenarios to estimate from.", None, path=True),
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
        "speech_complexity",
        "Make each scenario a phone call under one of tau2's speech presets: control, regular, control_audio, "
        "control_accents, control_behavior, control_audio_accents, control_audio_behavior, "
        "control_accents_behavior. Speech is synthesized (espeak-ng), degraded and recognized (pocketsphinx) "
        "on both sides, seeded; call.wav and metrics.json's voice object are written (docs/voice.md). Off by default.",
        None,
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
