"""A live banking_knowledge run on the model path, re-scored by upstream's evaluator: does our tau2
reward equal upstream's for every (task, trial)?

All 97 tasks x 2 trials under ``--tau2-prompts upstream`` (bm25), the agent and the customer being
scripted models behind the loopback OpenAI-compatible server (tests/support/fake_openai.py), so
every call goes through litellm and the wire path. The agent is imperfect, the same way in every
run: each (task, trial seed) draws one behaviour (seeded; the trial's seed reaches the model as
litellm's ``seed``):

- ``gold``: the task's gold agent actions, then a wrap-up; the customer performs its own gold
  actions, then stops;
- ``drop_write``: the agent leaves out its last state-changing gold action;
- ``extra_write``: the agent repeats its last discoverable write with a changed argument;
- ``bad_calls``: an unknown tool and a discoverable call with broken JSON first (tool errors);
- ``user_lazy``: the customer never performs its own actions;
- ``early_stop``: the agent asks a question first and the customer hangs up (``###STOP###``).

The run is exported (``pytest-tau2 export --format tau2``) and upstream's own code at the pin
(tests/support/upstream_check.py, ``$TAU2_UPSTREAM_PYTHON``) re-scores every trajectory as
``tau2 evaluate-trajs`` does (the run's retrieval configuration, non-strict replay), and replays
each strictly as its live evaluation would (a state-changing call whose recorded result differs
is rejected). Writes ``<out>.json`` and ``<out>.md``.

Usage:  TAU2_UPSTREAM_PYTHON=/path/to/upstream/bin/python python bench/bench_upstream_banking_live.py \\
            [--trials 2] [--out bench/results/upstream_banking_live]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_tau2.domains.tau2_common.upstream_view import render_scenario  # noqa: E402
from pytest_tau2.tau2_format import export_cli  # noqa: E402
from tests.e2e.llm_scripts import (  # noqa: E402
    DATA_DIR,
    STOP,
    agent_step,
    call,
    judge_json,
    model_options,
    own_replies,
    run_pytest,
    subprocess_env,
    task_of_agent_request,
    task_of_judge_request,
)
from tests.support.fake_openai import FakeOpenAIServer, Reply, text  # noqa: E402

CHECK = ROOT / "tests" / "support" / "upstream_check.py"
UPSTREAM_JUDGE = "gpt-4.1-2025-04-14"  # upstream's NL-assertion judge model at the pin
BANK = DATA_DIR / "tau2" / "domains" / "banking_knowledge"
BEHAVIOURS = {"gold": 40, "drop_write": 15, "extra_write": 10, "bad_calls": 15, "user_lazy": 10, "early_stop": 10}
READS = ("get_", "list_", "KB_search", "log_verification", "unlock_discoverable_agent_tool")
SCENARIO = re.compile(r"<scenario>\n(.*)\n</scenario>", re.DOTALL)


class Bank:
    """The scripted agent and customer of every banking task (stateless: each request tells its task)."""

    def __init__(self) -> None:
        self.tasks = {}
        for path in sorted((BANK / "tasks").glob("task_*.json")):
            task = json.loads(path.read_text("utf-8"))
            self.tasks[str(task["id"])] = task
        self.by_scenario = {render_scenario(t["user_scenario"]): i for i, t in self.tasks.items()}

    def behaviour(self, task_id: str, seed: object) -> str:
        rng = random.Random(f"{task_id}:{seed}")
        return rng.choices(list(BEHAVIOURS), weights=list(BEHAVIOURS.values()))[0]

    def gold(self, task_id: str, requestor: str) -> list[dict[str, Any]]:
        actions = (self.tasks[task_id].get("evaluation_criteria") or {}).get("actions") or []
        return [
            {"name": a["name"], "arguments": a.get("arguments") or {}}
            for a in actions
            if (a.get("requestor") or "assistant") == requestor
        ]

    def agent_steps(self, task_id: str, behaviour: str) -> list[Reply]:
        gold = self.gold(task_id, "assistant")
        if behaviour == "early_stop":
            return [text("Before anything else, could you tell me more about your situation?")]
        if behaviour == "drop_write":
            writes = [i for i, a in enumerate(gold) if not a["name"].startswith(READS)]
            if writes:
                gold = gold[: writes[-1]] + gold[writes[-1] + 1 :]
        if behaviour == "extra_write":
            discoverable = [a for a in gold if a["name"] == "call_discoverable_agent_tool"]
            if discoverable:
                changed = json.loads(discoverable[-1]["arguments"].get("arguments") or "{}")
                for key, value in changed.items():
                    if isinstance(value, str):
                        changed[key] = value + "_x"
                        break
                gold = [*gold, {"name": "call_discoverable_agent_tool", "arguments": {
                    **discoverable[-1]["arguments"], "arguments": json.dumps(changed)}}]  # fmt: skip
        steps = [call(a["name"], a["arguments"]) for a in gold]
        if behaviour == "bad_calls":
            steps = [
                call("refund_everything", {"user_id": "nobody"}),
                call("call_discoverable_agent_tool", {"agent_tool_name": "x", "arguments": "{not json"}),
                *steps,
            ]
        return [*steps, text("All done: your request is processed.")]

    def agent(self, request: dict[str, Any]) -> Reply:
        task_id = task_of_agent_request(request)
        if task_id is None or task_id not in self.tasks:
            return text("Sorry, which case is this about?")
        steps = self.agent_steps(task_id, self.behaviour(task_id, request.get("seed")))
        step = agent_step(request)
        return steps[step] if step < len(steps) else text("Is there anything else I can help you with?")

    def assertions(self, task_id: str) -> list[str]:
        return list((self.tasks[task_id].get("evaluation_criteria") or {}).get("nl_assertions") or [])

    def judge(self, request: dict[str, Any]) -> Reply:
        """Our judge (its own reply format): every assertion met."""
        task_id = task_of_judge_request(request)
        return text(judge_json([True] * len(self.assertions(task_id) if task_id in self.tasks else [])))

    def upstream_judge(self, request: dict[str, Any]) -> Reply:
        """Upstream's judge (its reply format): every assertion it lists met, as ours says."""
        asked = str(request["messages"][-1].get("content") or "")
        task_id = next((t for t in self.tasks if f"[case {t}]" in asked), None)
        results = [{"expectedOutcome": a, "reasoning": "scripted", "metExpectation": True}
                   for a in (self.assertions(task_id) if task_id else [])]  # fmt: skip
        return text(json.dumps({"results": results}))

    def user(self, request: dict[str, Any]) -> Reply:
        found = SCENARIO.search(str(request["messages"][0].get("content") or ""))
        task_id = self.by_scenario.get(found.group(1)) if found else None
        if task_id is None:
            return text(f"I do not know why I am calling. {STOP}")
        behaviour = self.behaviour(task_id, request.get("seed"))
        instructions = self.tasks[task_id]["user_scenario"]["instructions"]
        reason = instructions.get("reason_for_call", "") if isinstance(instructions, dict) else str(instructions)
        own = [] if behaviour in ("user_lazy", "early_stop") else self.gold(task_id, "user")
        replies = [
            text(f"[case {task_id}] {reason}".strip()),
            *(call(a["name"], a["arguments"]) for a in own),
            text(f"Thanks, that is all. {STOP}"),
        ]
        return replies[min(own_replies(request), len(replies) - 1)]


def _answer_kind(strict: str) -> str:
    """What the recorded answer that upstream's replay did not reproduce was."""
    content = strict.split("content: ", 1)[-1]
    for kind in ("Tool given to user", "Tool unlocked"):
        if content.startswith(kind):
            return kind
    return "other: " + content.split("\n", 1)[0][:80]


def markdown(r: dict[str, Any]) -> str:
    """The result as a page of bench/results."""
    lines = [
        "# banking_knowledge live, re-scored by upstream (bench/bench_upstream_banking_live.py)",
        "",
        f"Command: `{r['command']}`; view: {r['view']}; prompts recorded: {', '.join(r['prompts'])}.",
        f"97 tasks x {r['trials']} trials, bm25, `--tau2-prompts upstream`, a seeded imperfect scripted agent "
        "and customer behind the loopback server (the module doc lists the behaviours), exported with "
        "`pytest-tau2 export`, re-scored by upstream's evaluator at the pin (non-strict replay, as "
        "`tau2 evaluate-trajs`; its NL judge answered by the same server as ours) and replayed strictly.",
        "",
        "| simulations | compared | equal rewards | reward 1.0 | upstream loads | verifier: tasks | "
        "verifier: trials | strict replay rejected |",
        "|---|---|---|---|---|---|---|---|",
        f"| {r['simulations']} | {r['compared']} | {r['equal']} | {r['reward_1']} | {r['upstream_format_ok']} | "
        f"{r['upstream_tasks_ok']} | {r['upstream_trials_ok']} | {r['strict_replay_rejected']} |",
        "",
        f"Behaviours drawn: {', '.join(f'{k} {v}' for k, v in sorted(r['behaviours'].items()))}. "
        f"Terminations: {', '.join(f'{k} {v}' for k, v in sorted(r['terminations'].items()))}. "
        f"Run {r['run_s']} s, upstream's check {r['upstream_check_s']} s.",
    ]
    if r["unequal"]:
        lines += ["", "Rewards that differ:", ""]
        lines += [
            f"- {s['id']}: ours {s['ours']}, upstream {s['upstream']} {s['upstream_breakdown']}" for s in r["unequal"]
        ]
    if r["not_compared_llm_judge"]:
        lines += ["", f"Not compared (upstream's LLM judge): {', '.join(r['not_compared_llm_judge'])}."]
    if r["strict_rejected_by_tool"]:
        lines += ["", "Rejected by upstream's strict replay, by the first tool whose replayed result differed: "
                  + ", ".join(f"`{k}` {v}" for k, v in sorted(r["strict_rejected_by_tool"].items()))
                  + ". By the recorded answer: "
                  + ", ".join(f"{k} {v}" for k, v in sorted(r["strict_rejected_by_answer"].items()))
                  + " (`Tool given to user` / `Tool unlocked`: answers that describe the tool in our words, "
                  "when the view lacks upstream's discoverable-tool texts)."]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--view", default=None, help="the tau2 view file to run with (TAU2_VIEW_FILE)")
    parser.add_argument(
        "-k", default="tau2_banking_knowledge", help="which scenarios (a smaller set exports --partial)"
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "upstream_banking_live"))
    args = parser.parse_args()
    python = os.environ.get("TAU2_UPSTREAM_PYTHON")
    if not python:
        raise SystemExit("set TAU2_UPSTREAM_PYTHON to an interpreter with tau2-bench installed")
    bank = Bank()
    with tempfile.TemporaryDirectory() as tmp_, FakeOpenAIServer() as server:
        tmp = Path(tmp_)
        server.add_handler("agent", bank.agent)
        server.add_handler("user", bank.user)
        server.add_handler("judge", bank.judge)
        server.add_handler(UPSTREAM_JUDGE, bank.upstream_judge)
        extra = {"TAU2_VIEW_FILE": str(Path(args.view).resolve())} if args.view else {}
        started = time.perf_counter()
        run = run_pytest(
            ["-k", args.k, "--tau2-trials", str(args.trials), "--tau2-prompts", "upstream",
             "--tau2-retrieval", "bm25", "--tau2-concurrency", str(args.concurrency),
             *model_options(server, sides=("agent", "user", "judge"))],
            tmp / "run", env=subprocess_env(TAU2_PROMPTS="upstream", **extra), timeout=3600,
        )  # fmt: skip
        run_s = time.perf_counter() - started
        # A view without upstream's discoverable-tool texts records them as ours; export them all the same.
        written, _ = export_cli.run(run.results_dir, tmp / "out", partial=args.k != "tau2_banking_knowledge",
                                    allow_seed_prompts=True)  # fmt: skip
        file = tmp / "out" / "banking_knowledge.json"
        if not file.is_file():
            raise SystemExit(f"no export ({[p.name for p in written]}): {run.output[-3000:]}")
        started = time.perf_counter()
        # Upstream's judge reaches the same server: litellm sends an unprefixed OpenAI model there.
        env = subprocess_env(OPENAI_API_BASE=server.base_url, OPENAI_BASE_URL=server.base_url,
                             OPENAI_API_KEY="sk-loopback")  # fmt: skip
        done = subprocess.run([python, str(CHECK), str(file), "--strict", "--judge"], capture_output=True, text=True,
                              env=env, check=True, timeout=3600)  # fmt: skip
        check_s = time.perf_counter() - started
        [checked] = json.loads(done.stdout.strip().splitlines()[-1])
        behaviours = {}
        prompts_seen = set()
        for folder in run.results_dir.iterdir():
            metrics = folder / "metrics.json"
            if metrics.is_file():
                m = json.loads(metrics.read_text("utf-8"))
                task_id = folder.name.split("__", 1)[1].rsplit("-t", 1)[0]
                behaviours[folder.name] = bank.behaviour(task_id, m.get("seed"))
                prompts_seen.add(str(m["data_pin"]["prompts"]))
    sims = checked["simulations"]
    compared = [s for s in sims if s["ours"] is not None]
    unequal = [s for s in compared if s["ours"] != s["upstream"]]
    strict_rejected = [s for s in sims if s.get("strict")]
    result = {
        "command": "TAU2_UPSTREAM_PYTHON=... python bench/bench_upstream_banking_live.py"
        + (f" --view {args.view}" if args.view else ""),
        "view": args.view or "default (tau2-view/agent_view.json beside the data)",
        "prompts": sorted(prompts_seen),
        "trials": args.trials,
        "simulations": len(sims) + len(checked["skipped"]),
        "compared": len(compared),
        "equal": len(compared) - len(unequal),
        "not_compared_llm_judge": [s["id"] for s in checked["skipped"]],
        "reward_1": sum(1 for s in compared if s["ours"] == 1.0),
        "upstream_format_ok": checked["format"]["ok"],
        "upstream_tasks_ok": checked["tasks"]["ok"],
        "upstream_trials_ok": checked["trials"]["ok"],
        "unequal": unequal,
        "strict_replay_rejected": len(strict_rejected),
        "strict_rejected_by_tool": dict(collections.Counter(s["strict"].split(":", 1)[0] for s in strict_rejected)),
        "strict_rejected_by_answer": dict(collections.Counter(_answer_kind(s["strict"]) for s in strict_rejected)),
        "strict_examples": [{"id": s["id"], "strict": s["strict"]} for s in strict_rejected[:5]],
        "behaviours": dict(collections.Counter(behaviours.values())),
        "terminations": dict(collections.Counter(s["termination"] for s in sims)),
        "run_s": round(run_s, 1),
        "upstream_check_s": round(check_s, 1),
        "pytest_returncode": run.returncode,
    }
    Path(args.out + ".json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    Path(args.out + ".md").write_text(markdown(result), "utf-8")
    print(json.dumps({k: v for k, v in result.items() if k not in ("unequal", "strict_examples")}, indent=2))


if __name__ == "__main__":
    main()
