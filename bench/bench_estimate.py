"""How close is the cost estimate (``pytest-tau2 estimate``) to what a sweep then uses?

The **recorded sweep** is made here, offline: the 114 retail scenarios against the loopback fake
OpenAI server (tests/support/fake_openai.py), with the scripted models of tests/e2e/llm_scripts.py
(the agent makes the task's gold calls one per call, then wraps up; the user opens with the task's
reason for calling, confirms once, and stops; the judge passes every assertion) under real model
names, so the estimate prices and tokenises them as it would the real ones:

- agent ``openai/gpt-4o-mini``, user ``openai/gpt-4.1-mini``, judge ``openai/gpt-4.1-nano``;
- every reply carries the ``usage`` a provider would send: the request's messages and tool schemas
  counted with litellm's ``token_counter`` for that model, and the reply's text and tool calls.

The tool results are real (the scripted agent calls the real retail tools on the real DB); the
conversation's shape is the scripted one, which is shorter and more regular than a real model's.
So this measures the estimate's arithmetic (prompt sizes, tools, gold calls, prompt growth), not
how well it guesses a real model's talkativeness: say so wherever the numbers are quoted.

Steps: (1) ``pytest-tau2 estimate`` over the 114 nodes (prompt sizes: no run, no cassette); (2) the
sweep itself, ``--tau2-concurrency 8``, given the estimate's file (its summary shows estimate vs
actual); (3) ``pytest-tau2 estimate --tau2-estimate-from`` the sweep's folder (the recorded-run
source: with these deterministic models it must match the sweep exactly, a check of the plumbing,
not of accuracy). Reports per side and in total: estimated low / mid / high vs actual tokens, the
median per-scenario error of mid, and how many scenarios fall inside [low, high].

Usage:
    python bench/bench_estimate.py                 # the 114 retail scenarios
    python bench/bench_estimate.py --limit 10 --no-write
Writes bench/results/estimate_accuracy.md and .json unless --no-write.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if not os.environ.get("TAU2_DATA_DIR") and (ROOT.parent / "shared" / "tau2-data").is_dir():
    os.environ["TAU2_DATA_DIR"] = str((ROOT.parent / "shared" / "tau2-data").resolve())
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.e2e.llm_scripts import ScriptedModels, Tasks, subprocess_env  # noqa: E402
from tests.support.fake_openai import FakeOpenAIServer, Reply, with_usage  # noqa: E402

MODELS = {"agent": "gpt-4o-mini", "user": "gpt-4.1-mini", "judge": "gpt-4.1-nano"}
SIDES = ("agent", "user", "judge")


def counted(handler: Any, model: str) -> Any:
    """``handler`` whose replies carry the usage the provider would report for ``model``."""
    import litellm

    def answer(request: dict[str, Any]) -> Reply:
        reply: Reply = handler(request)
        prompt = litellm.token_counter(model=model, messages=request["messages"], tools=request.get("tools"))
        said = (reply.content or "") + "".join(name + str(arguments) for name, arguments in reply.tool_calls)
        completion = litellm.token_counter(model=model, text=said) if said else 1
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        return with_usage(reply, usage)

    return answer


def model_options(base_url: str) -> list[str]:
    args = json.dumps({"api_base": base_url, "api_key": "sk-bench"})
    out: list[str] = []
    for side in SIDES:
        out += [f"--tau2-{side}-model", f"openai/{MODELS[side]}", f"--tau2-{side}-args", args]
    return out


def pytest_run(args: list[str], *, estimate: bool = False) -> tuple[subprocess.CompletedProcess[str], float]:
    head = ["-m", "pytest_tau2.cli", "estimate"] if estimate else ["-m", "pytest"]
    cmd = [sys.executable, *head, "-q", "-p", "no:cacheprovider", *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
        raise SystemExit(f"{' '.join(head)} exited {done.returncode}")
    return done, wall


def actual_usage(results: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Per scenario, per side: calls and tokens the sweep used."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for metrics_file in sorted(results.glob("*/metrics.json")):
        metrics = json.loads(metrics_file.read_text("utf-8"))
        out[metrics["scenario"]] = {
            side: {
                "calls": u["calls"],
                "tokens": u["prompt_tokens"] + u["completion_tokens"],
                "cost": u["cost_usd"] or 0.0,
            }
            for side, u in metrics["token_usage"].items()
        }
    return out


def compare(estimate: dict[str, Any], actual: dict[str, dict[str, dict[str, float]]]) -> dict[str, Any]:
    """Totals per side and overall, per-scenario errors of mid, and coverage of [low, high]."""
    items = {item["name"]: item for item in estimate["items"] if item["name"] in actual}
    result: dict[str, Any] = {"scenarios": len(items), "sides": {}}
    for side in (*SIDES, "total"):
        sides = SIDES if side == "total" else (side,)
        est = {level: 0.0 for level in ("low", "mid", "high")}
        real = 0.0
        errors, inside = [], 0
        for name, item in items.items():
            one = {level: 0.0 for level in est}
            for s in sides:
                figures = item["sides"].get(s) or {}
                for level in est:
                    counts = figures.get(level) or {}
                    one[level] += counts.get("prompt_tokens", 0) + counts.get("completion_tokens", 0)
            used = sum(actual[name].get(s, {}).get("tokens", 0) for s in sides)
            for level in est:
                est[level] += one[level]
            real += used
            if used:
                errors.append(abs(one["mid"] - used) / used)
                inside += one["low"] <= used <= one["high"]
        result["sides"][side] = {
            "estimated_low": round(est["low"]),
            "estimated_mid": round(est["mid"]),
            "estimated_high": round(est["high"]),
            "actual": round(real),
            "mid_over_actual": round(est["mid"] / real, 3) if real else None,
            "median_abs_error_of_mid": round(statistics.median(errors), 3) if errors else None,
            "scenarios_inside_range": inside,
            "scenarios_with_calls": len(errors),
        }
    result["cost"] = {
        "estimated": {level: estimate["total"][level]["cost_usd"] for level in ("low", "mid", "high")},
        "actual": round(sum(s["cost"] for per in actual.values() for s in per.values()), 6),
    }
    return result


def render(data: dict[str, Any]) -> str:
    p, r = data["prompt_sizes"], data["recorded_run"]
    lines = [
        "# Cost estimate accuracy on a recorded retail sweep",
        "",
        f"Measured {data['date']} on {data['machine']} with `python bench/bench_estimate.py` "
        f"({p['scenarios']} retail scenarios).",
        "",
        "**What the recorded sweep is** (read this before quoting a number): the retail scenarios run offline",
        "against the loopback fake OpenAI server with the *scripted* models of tests/e2e/llm_scripts.py",
        "(the agent makes the task's gold calls, one per call, then wraps up; the user opens, confirms once,",
        "stops; the judge passes every assertion), named `openai/gpt-4o-mini` (agent), `openai/gpt-4.1-mini`",
        "(user) and `openai/gpt-4.1-nano` (judge) so they are tokenised and priced as those models. Each reply",
        "reports the usage a provider would: the request's messages and tool schemas counted with litellm's",
        "`token_counter` for the model. Tool results are real (the real retail tools on the real DB). The",
        "conversation shape is the scripted one, shorter and more regular than a real model's: these numbers",
        "measure the estimate's arithmetic (prompt sizes, tools, gold calls, prompt growth), not how well its",
        "assumed shape (docs/campaigns.md) matches a real model's talkativeness.",
        "",
        f"## From prompt sizes (`pytest-tau2 estimate`, no run, no cassette: {p['estimate_wall_s']} s)",
        "",
        "| side | estimated low | mid | high | actual | mid / actual | median per-scenario error of mid "
        "| scenarios inside [low, high] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for side, row in p["sides"].items():
        lines.append(
            f"| {side} | {row['estimated_low']:,} | {row['estimated_mid']:,} | {row['estimated_high']:,} | "
            f"{row['actual']:,} | {row['mid_over_actual']} | {row['median_abs_error_of_mid']} | "
            f"{row['scenarios_inside_range']} of {row['scenarios_with_calls']} |"
        )
    cost = p["cost"]
    lines += [
        "",
        f"Cost: estimated ${cost['estimated']['low']:.4f} / ${cost['estimated']['mid']:.4f} / "
        f"${cost['estimated']['high']:.4f}, actual ${cost['actual']:.4f} (litellm's list prices).",
        f"The sweep itself took {data['sweep_wall_s']} s (`--tau2-concurrency 8`); its summary's estimate-vs-actual",
        "lines:",
        "",
        "```",
        *data["summary_lines"],
        "```",
        "",
        "## From the recorded run (`--tau2-estimate-from` the sweep's folder)",
        "",
        f"Total tokens: estimated mid {r['sides']['total']['estimated_mid']:,} vs actual "
        f"{r['sides']['total']['actual']:,} (mid / actual {r['sides']['total']['mid_over_actual']}). The scripted "
        "models are deterministic, so a rerun uses exactly the recorded tokens: this checks the recorded-run "
        "source's plumbing, it is no evidence of accuracy on a real model (whose reruns differ; the range of a "
        "scenario recorded once is +-25%, an assumption).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N retail tasks")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    ids = sorted(Tasks.load("retail").by_id, key=int)[: args.limit]
    nodes = [f"scenarios/test_scenarios.py::test_scenario[tau2_retail__{i}]" for i in ids]
    models = ScriptedModels()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        server.add_handler(MODELS["agent"], counted(models.agent_handler, f"openai/{MODELS['agent']}"))
        server.add_handler(MODELS["user"], counted(models.user_handler, f"openai/{MODELS['user']}"))
        server.add_handler(MODELS["judge"], counted(models.judge_handler, f"openai/{MODELS['judge']}"))
        options = model_options(server.base_url)
        estimate_file, recorded_file = Path(tmp) / "estimate.json", Path(tmp) / "recorded.json"
        results = Path(tmp) / "sweep"
        _, estimate_wall = pytest_run([*nodes, *options, f"--tau2-estimate-file={estimate_file}"], estimate=True)
        assert not server.requests, "the estimate called a model"
        _, sweep_wall = pytest_run(
            [*nodes, *options, "--tau2-concurrency", "8", f"--tau2-results-dir={results}",
             f"--tau2-estimate-file={estimate_file}"]
        )  # fmt: skip
        pytest_run(
            [*nodes, *options, f"--tau2-estimate-file={recorded_file}", f"--tau2-estimate-from={results}"],
            estimate=True,
        )
        actual = actual_usage(results)
        summary = (results / "all_summary.txt").read_text("utf-8").splitlines()
        start = next(i for i, line in enumerate(summary) if line.startswith("Estimate vs actual"))
        data = {
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
            "estimate_wall_s": round(estimate_wall, 2),
            "sweep_wall_s": round(sweep_wall, 2),
            "prompt_sizes": compare(json.loads(estimate_file.read_text("utf-8")), actual),
            "recorded_run": compare(json.loads(recorded_file.read_text("utf-8")), actual),
            "summary_lines": [line for line in summary[start:] if line.startswith(("Estimate", "  "))][:6],
        }
        data["prompt_sizes"]["estimate_wall_s"] = data["estimate_wall_s"]
    text = render(data)
    print(text)
    if not args.no_write:
        out = ROOT / "bench" / "results"
        (out / "estimate_accuracy.json").write_text(json.dumps(data, indent=2) + "\n", "utf-8")
        (out / "estimate_accuracy.md").write_text(text, "utf-8")


if __name__ == "__main__":
    main()
