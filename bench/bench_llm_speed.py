"""LLM-bound sweep speed, side by side: one process at several ``--tau2-concurrency`` values,
``-n 2`` x concurrency, CPU per model call, start-up and RSS.

The 114 retail scenarios run against the scripted loopback model (tests/support/fake_openai.py,
``--latency`` seconds per call, default 0.2; the server runs in this process, so its CPU is not
counted). Every configuration is one ``python -m pytest`` subprocess with real HTTP through
litellm; configurations alternate within each repeat so that load on a shared machine hits them
alike, and the tables quote medians.

Per run:

- **ideal**: the LLM-bound lower bound, max(calls x latency / width, longest conversation's calls
  x latency), width = conversations in flight (workers x concurrency);
- **wall**: the whole subprocess; **CPU**: user + system seconds of every pytest process
  (bench/llm_probe.py); **CPU per call**: (CPU - start-up CPU) / calls, the start-up CPU being a
  ``--collect-only`` run of the same selection plus one ``import litellm`` per process;
- **collected -> first test**: from the end of collection to the first scenario's start (first
  process), and **-> first model call**: to the first request the server saw;
- **peak RSS per process**: the largest ``ru_maxrss`` among the processes that ran scenarios
  (the xdist workers, or the one pytest process).

Usage:
    python bench/bench_llm_speed.py                          # every configuration, 2 repeats
    python bench/bench_llm_speed.py --configs c8,n2c32 --repeats 1 --limit 20 --no-write
Writes bench/results/llm_speed.md and .json unless --no-write.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
sys.path.insert(0, str(ROOT))
if not os.environ.get("TAU2_DATA_DIR") and (ROOT.parent / "shared" / "tau2-data").is_dir():
    os.environ["TAU2_DATA_DIR"] = str((ROOT.parent / "shared" / "tau2-data").resolve())
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.e2e.llm_scripts import (  # noqa: E402
    ENDING_TOOLS,
    AgentScript,
    ScriptedModels,
    Tasks,
    call,
    model_options,
    subprocess_env,
    task_of_agent_request,
)
from tests.support.fake_openai import FakeOpenAIServer, text  # noqa: E402

UNBOUNDED = 1000
BYTECODE_CACHE = True  # --no-bytecode-cache keeps PYTHONDONTWRITEBYTECODE as the environment has it
WRAP: list[str] = []
"""A command that runs the pytest process (a profiler: ``py-spy record ... --``); bench/profile_sweep.py sets it."""
# name -> (label, extra pytest args, workers, concurrency per worker)
CONFIGS: dict[str, tuple[str, list[str], int, int]] = {
    "c8": ("--tau2-concurrency 8", ["--tau2-concurrency", "8"], 1, 8),
    "c32": ("--tau2-concurrency 32", ["--tau2-concurrency", "32"], 1, 32),
    "c64": ("--tau2-concurrency 64", ["--tau2-concurrency", "64"], 1, 64),
    "c32L": (
        "--tau2-concurrency 32 --tau2-llm-transport litellm",
        ["--tau2-concurrency", "32", "--tau2-llm-transport", "litellm"],
        1,
        32,
    ),
    "cU": ("--tau2-concurrency unbounded (1000)", ["--tau2-concurrency", str(UNBOUNDED)], 1, UNBOUNDED),
    "c32-own": ("--tau2-concurrency 32, no other plugins", ["--tau2-concurrency", "32"], 1, 32),
    "cU-own": ("--tau2-concurrency unbounded, no other plugins", ["--tau2-concurrency", str(UNBOUNDED)], 1, UNBOUNDED),
    "n2c8": ("-n 2 --tau2-concurrency 8", ["-p", "xdist", "-n", "2", "--tau2-concurrency", "8"], 2, 8),
    "n2c32": ("-n 2 --tau2-concurrency 32", ["-p", "xdist", "-n", "2", "--tau2-concurrency", "32"], 2, 32),
    "n2c64": ("-n 2 --tau2-concurrency 64", ["-p", "xdist", "-n", "2", "--tau2-concurrency", "64"], 2, 64),
    # 4 trials of each scenario (456 items, ~4,900 calls): enough CPU that one process's GIL sets the pace
    "cU-t4": (
        "--tau2-concurrency unbounded --tau2-trials 4",
        ["--tau2-concurrency", str(UNBOUNDED), "--tau2-trials", "4"],
        1,
        UNBOUNDED,
    ),
    "n2cU-t4": (
        "-n 2 --tau2-concurrency unbounded --tau2-trials 4",
        ["-p", "xdist", "-n", "2", "--tau2-concurrency", str(UNBOUNDED), "--tau2-trials", "4"],
        2,
        UNBOUNDED,
    ),
    # the agent leaves out its last write in every task that writes: those DB checks fail (with their diff)
    "c32-fail": (
        "--tau2-concurrency 32, every agent drops its last write",
        ["--tau2-concurrency", "32"],
        1,
        32,
    ),
}
OWN_PLUGINS_ONLY = frozenset({"c32-own", "cU-own"})
"""Configurations run with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 and ``-p pytest_tau2.plugin``: what
the other pytest plugins installed on the machine (hypothesis, anyio, pytest-benchmark here)
add to start-up and to the end of the run, which a user's environment may or may not have."""
FAILING = frozenset({"c32-fail"})
"""Configurations whose scenarios fail on purpose: the scoring's failure path (the DB diff) is timed too."""
MEDIAN_KEYS = (
    "wall_s",
    "ideal_s",
    "wall_over_ideal",
    "cpu_s_total",
    "cpu_ms_per_call",
    "collected_to_first_test_s",
    "collected_to_first_call_s",
    "peak_rss_mb_max",
)


def _pytest(
    args: list[str], env: dict[str, str], timeout: float, tree: Path = ROOT
) -> tuple[subprocess.CompletedProcess[str], float]:
    if tree != ROOT:  # a baseline checkout: its pytest_tau2 first on the path
        env = {**env, "PYTHONPATH": os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])}
    if BYTECODE_CACHE:  # as users run Python: compiled and assertion-rewritten modules cached
        env = {name: value for name, value in env.items() if name != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    done = subprocess.run(
        [*WRAP, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done, time.perf_counter() - start


def startup_cpu(nodes: list[str]) -> dict[str, float]:
    """CPU seconds that do not depend on the calls: collecting the selection, importing litellm."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.jsonl"
        env = subprocess_env(PYTHONPATH=str(BENCH), LLM_PROBE_OUT=str(probe))
        _pytest(["-p", "llm_probe", "--collect-only", *nodes], env, 300)
        collect = sum(json.loads(line)["cpu_s"] for line in probe.read_text("utf-8").splitlines())
    code = (
        "import os, time; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP','True'); "
        "import litellm; print(time.process_time())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), check=True
    )
    return {"collect_cpu_s": round(collect, 2), "litellm_import_cpu_s": round(float(done.stdout.split()[-1]), 2)}


def _nodes(ids: list[str], extra: list[str]) -> list[str]:
    """The items' node ids: one per scenario, or ``<name>-t<k>`` for each of ``--tau2-trials`` K."""
    trials = int(extra[extra.index("--tau2-trials") + 1]) if "--tau2-trials" in extra else 1
    suffixes = [""] if trials == 1 else [f"-t{k}" for k in range(1, trials + 1)]
    return [f"scenarios/test_scenarios.py::test_scenario[tau2_retail__{i}{t}]" for i in ids for t in suffixes]


def run_once(
    config: str, latency: float, ids: list[str], base: dict[str, float], timeout: float, tree: Path = ROOT
) -> dict[str, Any]:
    label, extra, workers, concurrency = CONFIGS[config]
    if tree != ROOT:
        label = f"baseline: {label}"
    models = ScriptedModels(Tasks.load("retail"))
    if config in FAILING:
        _drop_last_writes(models)
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=latency) as server:
        models.install(server)
        first_call: list[float] = []
        agent = models.agent_handler

        def timed(request: dict[str, Any]) -> Any:
            if not first_call:
                first_call.append(time.time())
            return agent(request)

        server.add_handler("agent", timed)
        probe = Path(tmp) / "probe.jsonl"
        nodes = _nodes(ids, extra)
        env = subprocess_env(PYTHONPATH=str(BENCH), LLM_PROBE_OUT=str(probe))
        args = ["-p", "llm_probe", f"--tau2-results-dir={Path(tmp) / 'results'}", *extra, *model_options(server)]
        if config in OWN_PLUGINS_ONLY:
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
            args = ["-p", "pytest_tau2.plugin", *args]
        # The scripted server keeps every request it answered (1,230 conversations' worth for c32):
        # its process's full collections then paused all of its threads at once, 29 and 71 ms in
        # one c32 run, delaying every call in flight (bench/results/lean.md). Not the plugin's
        # time: the server's process does not collect while the pytest process runs.
        gc.collect()
        gc.freeze()
        gc.disable()
        try:
            done, wall = _pytest([*args, *nodes], env, timeout, tree)
        finally:
            gc.enable()
            gc.unfreeze()
        requests = server.requests
        processes = [json.loads(line) for line in probe.read_text("utf-8").splitlines()] if probe.exists() else []
    per_task: dict[str, int] = {}
    for request in requests:
        task = task_of_agent_request(request) if request.get("model") == "agent" else None
        task = task or models.tasks.task_of_user_request(request)
        if task is not None:
            per_task[task] = per_task.get(task, 0) + 1
    calls = len(requests)
    last = next((line for line in reversed(done.stdout.strip().splitlines()) if " passed" in line or " failed" in line),
                (done.stdout.strip().splitlines() or [""])[-1])  # fmt: skip
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", last)) else 0
    if (done.returncode != 0 or passed != len(nodes)) and not (config in FAILING and done.returncode == 1):
        print(f"  !! {config}: exit {done.returncode}: {last}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    width = workers * min(concurrency, len(ids))
    ideal = max(calls * latency / width, max(per_task.values(), default=0) * latency)
    # The processes that ran scenarios: the xdist workers, or the one pytest process.
    runners = [p for p in processes if p["worker"] != "main"] or processes
    started = [p for p in runners if "first_test" in p]
    first = min(started, key=lambda p: p["first_test"]) if started else None
    collected = first.get("collected") if first else None
    cpu = sum(p["cpu_s"] for p in processes)
    # Start-up CPU: every process collects; those that ran scenarios imported litellm.
    fixed = sum(
        base["collect_cpu_s"] + (base["litellm_import_cpu_s"] if p.get("litellm_imported") else 0.0) for p in processes
    )
    return {
        "config": config if tree == ROOT else f"baseline-{config}",
        "label": label,
        "scenarios": len(nodes),
        "passed": passed,
        "exit_code": done.returncode,
        "llm_calls": calls,
        "longest_conversation_calls": max(per_task.values(), default=0),
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "wall_over_ideal": round(wall / ideal, 3) if ideal else None,
        "cpu_s_total": round(cpu, 2),
        "cpu_ms_per_call": round((cpu - fixed) / calls * 1000, 2) if calls else None,
        "collected_to_first_test_s": round(first["first_test"] - collected, 3) if first and collected else None,
        "collected_to_first_call_s": round(first_call[0] - collected, 3) if first_call and collected else None,
        "peak_rss_mb_max": max((p["peak_rss_mb"] for p in runners), default=None),
        "processes": processes,
        "calls_per_scenario": per_task,
    }


def _drop_last_writes(models: ScriptedModels) -> int:
    """Every retail task that writes gets an agent that leaves out its last write (the rest of the
    gold calls in order); the number of such tasks."""
    from pytest_tau2.domains.tau2_retail.tools import TOOL_CLASSES

    writes = {tool.name for tool in TOOL_CLASSES if tool.mutates_state}
    dropped = 0
    for task_id in models.tasks.by_id:
        gold = [a for a in models.tasks.gold(task_id) if a["name"] not in ENDING_TOOLS]
        written = [i for i, action in enumerate(gold) if action["name"] in writes]
        if not written:
            continue
        del gold[written[-1]]
        steps = [call(a["name"], a["arguments"]) for a in gold] + [text(t) for t in models.wrap_up]
        models.agent[task_id] = AgentScript(steps, closing=models.gold_closing(task_id))
        dropped += 1
    return dropped


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = {k: v for k, v in runs[0].items() if k != "processes"}
    for key in MEDIAN_KEYS:
        values = [r[key] for r in runs if r.get(key) is not None]
        out[key] = round(statistics.median(values), 3) if values else None
    out["repeats"] = len(runs)
    out["wall_s_all"] = [r["wall_s"] for r in runs]
    out["all_passed"] = all(r["passed"] == r["scenarios"] for r in runs)
    return out


def write(results: dict[str, Any], path_md: Path) -> None:
    path_md.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    meta = results["meta"]
    lines = [
        "# LLM-bound sweep speed (retail, scripted model with fixed latency)",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}; "
        f"{meta['scenarios']} retail scenarios, {int(meta['latency_s'] * 1000)} ms per model call, real HTTP "
        "to a loopback fake OpenAI server in the benchmark process (the OpenAI wire path unless the row says "
        f"litellm); bytecode cache {'on' if meta.get('bytecode_cache', True) else 'off'}. Load average at the "
        f"end: {meta['loadavg']} (the machine was shared). Medians over {meta['repeats']} repeats, "
        "configurations interleaved; every run's numbers are in llm_speed.json.",
        "",
        f"Start-up CPU subtracted for CPU per call: collect-only {results['startup']['collect_cpu_s']} s, "
        f"litellm import {results['startup']['litellm_import_cpu_s']} s per process."
        + (f" Baseline rows: the checkout in `{results['baseline']}`." if results.get("baseline") else ""),
        "",
        "| config | passed | calls | ideal (s) | wall (s) | wall / ideal | CPU (s) | CPU per call (ms) "
        "| collected -> first test (s) | collected -> first call (s) | peak RSS per process (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["medians"]:
        lines.append(
            f"| {row['label']} | {row['passed']}/{row['scenarios']} | {row['llm_calls']} | {row['ideal_s']} "
            f"| {row['wall_s']} | {row['wall_over_ideal']} | {row['cpu_s_total']} | {row['cpu_ms_per_call']} "
            f"| {row['collected_to_first_test_s']} | {row['collected_to_first_call_s']} | {row['peak_rss_mb_max']} |"
        )
    lines += ["", "<!-- findings: hand-written below this line, kept when the script rewrites the tables -->", ""]
    old = path_md.read_text("utf-8") if path_md.exists() else ""
    marker = "<!-- findings: hand-written below this line, kept when the script rewrites the tables -->"
    findings = old.split(marker, 1)[1].lstrip("\n") if marker in old else ""
    path_md.write_text("\n".join(lines) + findings, "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--limit", type=int, default=None, help="first N retail tasks only")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another checkout (e.g. `git archive <commit> | tar -x -C DIR`): its configurations run interleaved",
    )
    parser.add_argument("--baseline-configs", default="c32,n2c32", help="configurations run with --baseline")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE if set (every run compiles and assertion-rewrites every module)",
    )
    opts = parser.parse_args()
    global BYTECODE_CACHE
    BYTECODE_CACHE = not opts.no_bytecode_cache
    configs = [c.strip() for c in opts.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"--configs: unknown {unknown}; known: {', '.join(CONFIGS)}")
    ids = (
        sorted(Tasks.load("retail").by_id, key=int)[: opts.limit]
        if opts.limit
        else sorted(Tasks.load("retail").by_id, key=int)
    )
    nodes = [f"scenarios/test_scenarios.py::test_scenario[tau2_retail__{i}]" for i in ids]
    base = startup_cpu(nodes)
    print("start-up CPU", base, flush=True)
    plan = [(c, ROOT) for c in configs]
    if opts.baseline is not None:
        plan += [(c.strip(), opts.baseline.resolve()) for c in opts.baseline_configs.split(",") if c.strip()]
    runs: dict[str, list[dict[str, Any]]] = {}
    for repeat in range(opts.repeats):
        for config, tree in plan:
            row = run_once(config, opts.latency, ids, base, opts.timeout, tree)
            runs.setdefault(row["config"], []).append(row)
            shown = {k: row[k] for k in ("wall_s", "ideal_s", "cpu_s_total", "cpu_ms_per_call", "peak_rss_mb_max")}
            print(f"[{repeat + 1}] {row['config']}: {shown} passed {row['passed']}/{row['scenarios']}", flush=True)
    results: dict[str, Any] = {
        "meta": {
            "command": "python bench/bench_llm_speed.py " + " ".join(sys.argv[1:]),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version(),
            "bytecode_cache": BYTECODE_CACHE,
            "cpus": os.cpu_count(),
            "latency_s": opts.latency,
            "scenarios": len(ids),
            "repeats": opts.repeats,
            "loadavg": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        },
        "startup": base,
        "baseline": str(opts.baseline) if opts.baseline is not None else None,
        "medians": [median_of(rows) for rows in runs.values()],
        "runs": runs,
    }
    for row in results["medians"]:
        print(json.dumps({k: row[k] for k in ("config", *MEDIAN_KEYS)}))
    if not opts.no_write:
        write(results, BENCH / "results" / "llm_speed.md")


if __name__ == "__main__":
    main()
