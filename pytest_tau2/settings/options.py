"""The ``--tau2-*`` options, declared once: flag, ini key, environment variable, kind, default and
help (the plugin declares them to pytest from here, docs/options.md is generated from here).
Resolving them into one :class:`~pytest_tau2.settings.Settings` is the package's ``__init__``.

Each option belongs to a *section* (:data:`SECTIONS`): ``pytest --help`` shows one group per
section, docs/options.md one table per section. A domain's own options are not in this table:
the domain registers them as an :class:`~pytest_tau2.settings.OptionSection` of its own
(``domains/tau2_banking_knowledge/options.py``, ``domains/tau2_telecom/options.py``)."""

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
    """A list-valued option: the flag may be given several times, and the values accumulate as
    the comma form does (``--x A --x B`` is ``A,B``)."""
    section: str = ""
    """Which :data:`SECTIONS` group ``--help`` and docs/options.md show it in."""
    choices: tuple[str, ...] = ()
    """The values it accepts (empty: any); checked for the flag and for ini and environment values."""

    @property
    def flag(self) -> str:
        return "--tau2-" + self.name.replace("_", "-")

    @property
    def ini(self) -> str:
        return "tau2_" + self.name


SECTIONS: dict[str, str] = {
    "selection": "tau2: selection (which scenarios, shards and trials)",
    "participants": "tau2: participants (the agent under test and the simulated user)",
    "models": "tau2: models (agent, user and judge models, their calls)",
    "limits": "tau2: limits (what stops or fails one conversation)",
    "campaign": "tau2: campaign (budget, prices, estimate, concurrency, rate limits)",
    "recording": "tau2: recording (cassettes of model calls)",
    "results": "tau2: results (folder, verdict, statistics, CI gates, reports)",
    "data": "tau2: data (where tau2 data and in-repo DBs come from)",
}
"""The core sections, in ``--help`` order: name -> the group's title."""


OPTIONS: tuple[Option, ...] = (
    Option(
        "scenarios",
        "Scenario names or glob patterns to run, matched exactly (unlike -k, a name never selects the longer "
        "names it is a prefix of). Several: repeat the flag or separate them with commas.",
        None,
        section="selection",
        repeatable=True,
    ),
    Option(
        "shard",
        "Run shard I of N (e.g. 2/4): scenarios sorted by name and dealt round-robin, trials of one scenario "
        "together; combine the shards' results folders with pytest-tau2 merge (docs/many-machines.md).",
        None,
        section="selection",
    ),
    Option(
        "agent",
        "Built-in agent: oracle (offline default), litellm (default when --tau2-agent-model is set), "
        "replay:PATH (re-run recorded tool calls from a JSON Lines file, or upstream runs from a tau2 Results "
        "file or folder), "
        'mcp:"COMMAND" (an agent process that speaks MCP, started per scenario: docs/mcp.md).',
        None,
        section="participants",
    ),
    Option(
        "user",
        "Built-in user simulator: scripted (offline default), litellm (default when --tau2-user-model is set) or "
        "replay (the saved user turns of --tau2-agent replay:RESULTS).",
        None,
        section="participants",
    ),
    Option(
        "agent_model",
        "litellm model string of the agent under test, e.g. openai/gpt-4.1.",
        None,
        env="TAU2_AGENT_MODEL",
        section="models",
    ),
    Option(
        "agent_args",
        "JSON object of litellm arguments for the agent (api_base, temperature, seed, ...).",
        None,
        section="models",
    ),
    Option("user_model", "litellm model string of the user simulator.", None, env="TAU2_USER_MODEL", section="models"),
    Option("user_args", "JSON object of litellm arguments for the user simulator.", None, section="models"),
    Option(
        "judge_model",
        "litellm model string of the NL-assertion judge (no judge: NL checks are skipped). Several judges: "
        "repeat the flag or separate models with commas; each assertion then gets the majority verdict, a tie "
        "fails (docs/rescoring.md).",
        None,
        env="TAU2_JUDGE_MODEL",
        repeatable=True,
        section="models",
    ),
    Option(
        "judge_args",
        "JSON object of litellm arguments for the judge (every judge), or a JSON list of objects, one per "
        "--tau2-judge-model.",
        None,
        section="models",
    ),
    Option(
        "judge_prompt",
        "The NL judge's prompt: ours (default) or upstream (tau2-bench's NL assertion evaluator's shape and "
        "output format; judge model gpt-4.1-2025-04-14 at temperature 0 unless --tau2-judge-model is given; "
        "docs/rescoring.md).",
        "ours",
        section="models",
        choices=("ours", "upstream"),
    ),
    Option(
        "agent_url",
        "ws:// URL of an external agent bot speaking the pytest-tau2 protocol.",
        None,
        section="participants",
    ),
    Option(
        "review",
        "Review each failed trial with a model as soon as it is scored (agent and user-simulator errors, "
        "written into its record; never changes the verdict): --tau2-review-model, else the judge model "
        "(docs/review.md).",
        False,
        "bool",
        section="models",
    ),
    Option(
        "review_model",
        "litellm model string of the reviewer (--tau2-review; pytest-tau2 review). Several: a jury (repeat the "
        "flag or separate with commas).",
        None,
        repeatable=True,
        section="models",
    ),
    Option(
        "review_args",
        "JSON object of litellm arguments for the reviewer (every reviewer).",
        None,
        section="models",
    ),
    Option(
        "review_mode",
        "What a review looks for: full (agent and user errors) or user (docs/review.md).",
        "full",
        section="models",
        choices=("full", "user"),
    ),
    Option(
        "agent_timeout",
        "Seconds to wait for each frame from an external agent bot (--tau2-agent-url), "
        "or for the next call of an MCP agent (--tau2-agent mcp:COMMAND).",
        120.0,
        "float",
        section="participants",
    ),
    Option(
        "data_dir",
        "Folder holding tau2/domains/... (default: $TAU2_DATA_DIR, then the fetch cache).",
        None,
        path=True,
        section="data",
    ),
    Option(
        "allow_unpinned_data",
        "Accept tau2 data whose checksums differ from the pinned manifest (recorded as unpinned).",
        False,
        "bool",
        section="data",
    ),
    Option(
        "eval_data_root",
        "Folder that db_path values of in-repo domains resolve against (default: <rootdir>/data).",
        None,
        env="TAU2_EVAL_DATA_ROOT",
        path=True,
        section="data",
    ),
    Option(
        "results_dir",
        "Run directory for metrics and transcripts (default: tau2-results/<timestamp>).",
        None,
        path=True,
        section="results",
    ),
    Option(
        "resume",
        "Continue the run in this results folder: scenarios with a complete saved result are reported from "
        "it, the rest run (docs/runs.md).",
        None,
        path=True,
        section="results",
    ),
    Option(
        "save_db", "Also write final_db.json (and final_user_db.json) per scenario.", False, "bool", section="results"
    ),
    Option(
        "min_agent_turns",
        "A scenario with fewer agent turns fails as stalled (0 disables).",
        3,
        "int",
        section="limits",
    ),
    Option("max_turns", "Override every scenario's max_turns (agent replies).", None, "int", section="limits"),
    Option("max_duration", "Override every scenario's max_duration (seconds).", None, "float", section="limits"),
    Option(
        "max_tool_errors",
        "Consecutive failed tool calls of one side that stop a conversation.",
        10,
        "int",
        section="limits",
    ),
    Option(
        "max_user_steps",
        "User-simulator replies (tool calls included) that stop a conversation, as the simulator's doing.",
        200,
        "int",
        section="limits",
    ),
    Option(
        "max_tokens",
        "Stop a conversation once its model calls used this many tokens (scored).",
        None,
        "int",
        section="limits",
    ),
    Option(
        "max_cost",
        "Stop a conversation once its model calls cost this many USD (scored).",
        None,
        "float",
        section="limits",
    ),
    Option(
        "max_messages",
        "Stop a conversation once its transcript holds this many messages (scored).",
        None,
        "int",
        section="limits",
    ),
    Option(
        "budget",
        "Run budget in USD: no conversation starts once the spend plus the expected cost of those in flight "
        "would pass it; the rest are skipped, naming the budget.",
        None,
        "float",
        section="campaign",
    ),
    Option(
        "price",
        "USD per million tokens of a model: MODEL=IN/OUT (priced runs, budgets). Several models: repeat the flag or "
        "separate the entries with commas; every entry counts.",
        None,
        section="campaign",
        repeatable=True,
    ),
    Option(
        "estimate",
        "Collect, print the sweep's estimated calls, tokens and cost, and run nothing.",
        False,
        "bool",
        section="campaign",
    ),
    Option(
        "estimate_file",
        "Where the estimate is written (--tau2-estimate) or read (a run: its summary shows estimate vs actual).",
        None,
        path=True,
        section="campaign",
    ),
    Option(
        "estimate_from",
        "A results folder of an earlier run of these scenarios to estimate from.",
        None,
        path=True,
        section="campaign",
    ),
    Option("llm_retries", "Retries of a failed LLM call (429, 5xx, timeout, connection).", 3, "int", section="models"),
    Option("llm_timeout", "Seconds before one LLM call times out.", 120.0, "float", section="models"),
    Option(
        "llm_transport",
        "How model calls travel: auto (OpenAI-compatible models over the OpenAI wire format, requests and "
        "costs identical to litellm's; every other model through litellm) or litellm (every call; "
        "docs/speed.md).",
        "auto",
        env="TAU2_LLM_TRANSPORT",
        section="models",
        choices=("auto", "litellm"),
    ),
    Option(
        "concurrency",
        "Scenario conversations kept in flight at once in one pytest process (asyncio; "
        "LLM-bound sweeps); under xdist (-n), in each worker.",
        1,
        "int",
        section="campaign",
    ),
    Option(
        "max_connections",
        "Model calls in flight at once per model endpoint (provider + api_base; agent, user and judge "
        "share it), lowered while the provider answers 429 and raised again; under xdist split across "
        "workers (docs/campaigns.md).",
        None,
        "int",
        section="campaign",
    ),
    Option(
        "rpm",
        "Requests per minute per model endpoint (a token bucket; split across xdist workers).",
        None,
        "float",
        section="campaign",
    ),
    Option(
        "tpm",
        "Tokens per minute per model endpoint (a token bucket; split across xdist workers).",
        None,
        "float",
        section="campaign",
    ),
    Option(
        "rate_limit_timeout",
        "Seconds a model call waits out HTTP 429 (and 503 with Retry-After) before it gives up; when no "
        "call to the endpoint got through in that time, the run stops.",
        120.0,
        "float",
        section="campaign",
    ),
    Option(
        "progress_interval",
        "Seconds between plain progress lines (done / in flight / total, pass rate, cost, calls/s, ETA) when "
        "stdout is not a terminal; 0: none. Default: 30 where CI is set, else none (a terminal shows one "
        "line updated in place; nothing under -q).",
        None,
        "float",
        section="results",
    ),
    Option(
        "trials",
        "Trials per scenario: K > 1 makes each scenario K items, test_scenario[<name>-t1] .. [<name>-tK], "
        "each with its own seed; the summary adds pass^k (docs/leaderboard.md).",
        1,
        "int",
        section="selection",
    ),
    Option(
        "seed",
        "Base seed of the trials: trial k's seed is the k-th draw of random.Random(SEED).randint(0, 1000000), "
        "passed to the agent and user models (the default 300 gives upstream tau2's trial seeds).",
        300,
        "int",
        section="selection",
    ),
    Option(
        "prompts",
        "What the agent and the simulated user of the tau2_* domains are shown: upstream (upstream tau2's "
        "system prompts and tool schemas, byte for byte, read from the tau2 view file; no ending tool; a user "
        "stop ends the conversation; the default, comparable with published numbers) or seed (our prompts: the "
        "policy plus our notes, EndConversationTool, a closing turn). Custom domains keep their own prompts "
        "(docs/leaderboard.md).",
        "upstream",
        env="TAU2_PROMPTS",
        section="participants",
        choices=("upstream", "seed"),
    ),
    Option(
        "speech_complexity",
        "Make each scenario a phone call under one of tau2's speech presets: control, regular, control_audio, "
        "control_accents, control_behavior, control_audio_accents, control_audio_behavior, "
        "control_accents_behavior. Speech is synthesized (espeak-ng), degraded and recognized (pocketsphinx) "
        "on both sides, seeded; call.wav and metrics.json's voice object are written (docs/voice.md). Off by default.",
        None,
        section="participants",
        # tau2's speech presets, as speech/presets.py:PRESETS (not imported here: ~1 ms at every pytest start;
        # tests/unit/test_speech.py holds the two equal)
        choices=(
            "control",
            "regular",
            "control_audio",
            "control_accents",
            "control_behavior",
            "control_audio_accents",
            "control_audio_behavior",
            "control_accents_behavior",
        ),
    ),
    Option(
        "audio_pace",
        "Audio bots (--tau2-agent-url): the user's speech streamed at this multiple of real time (0: unpaced).",
        1.0,
        "float",
        section="participants",
    ),
    Option("tts_model", "Speak with this litellm speech model, not espeak-ng (docs/voice.md).", None, section="models"),
    Option("tts_args", "JSON object of litellm arguments for --tau2-tts-model.", None, section="models"),
    Option("asr_model", "Recognize with this litellm transcription model, not pocketsphinx.", None, section="models"),
    Option("asr_args", "JSON object of litellm arguments for --tau2-asr-model.", None, section="models"),
    Option(
        "verdict",
        "What decides a tau2 item: six-signal (the scenario's success signals, default) or tau2-reward "
        "(tau2-bench's own reward from the task's reward_basis).",
        "six-signal",
        section="results",
        choices=("six-signal", "tau2-reward"),
    ),
    Option(
        "record_mode",
        "Record and replay model calls, one cassette per scenario (docs/recording.md): none (replay only; "
        "a call not in the cassette is an error), once (record scenarios that have no cassette), "
        "new_episodes (replay what matches, record the rest), all (call and re-record everything), "
        "off (no cassettes; the default).",
        None,
        section="recording",
        choices=("none", "once", "new_episodes", "all", "off"),
    ),
    Option(
        "cassette_dir",
        "Folder of the cassettes (default: cassettes/ under the rootdir).",
        None,
        path=True,
        section="recording",
    ),
    Option(
        "ci_level",
        "Confidence level of the intervals in the summary, all_metrics.json, report.html and JUnit "
        "(between 0 and 1; docs/statistics.md).",
        0.95,
        "float",
        section="results",
    ),
    Option(
        "baseline",
        "A saved results folder to compare this run with at its end (paired, docs/statistics.md): the verdict "
        "goes to the summary, baseline_comparison.json and the JUnit suite properties.",
        None,
        path=True,
        section="results",
    ),
    Option(
        "fail_on_regression",
        "With --tau2-baseline: exit non-zero when this run is worse than the baseline with significance at "
        "--tau2-alpha (a dip within the noise does not fail).",
        False,
        "bool",
        section="results",
    ),
    Option("alpha", "Significance level of the baseline comparison (default 0.05).", 0.05, "float", section="results"),
    Option(
        "fail_under",
        "Exit non-zero when the run's success rate is below RATE (between 0 and 1, e.g. 0.7).",
        None,
        "float",
        section="results",
    ),
    Option(
        "fail_under_bound",
        "What --tau2-fail-under compares with RATE: estimate (the success rate, default) or lower (the lower "
        "end of its interval: fails unless the rate is surely above RATE).",
        "estimate",
        section="results",
        choices=("estimate", "lower"),
    ),
    Option(
        "junit_properties",
        "Where --junitxml puts each scenario's properties (docs/ci.md): suite (the testsuite's properties, "
        "named <item id>:<name>, and the sub-results as the testcase's system-out; valid junit-10.xsd; the "
        "default), testcase (inside each testcase, not valid against the schema) or none (system-out only).",
        "suite",
        section="results",
        choices=("suite", "testcase", "none"),
    ),
)
