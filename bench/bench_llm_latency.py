"""LLM-bound sweep speed: the 114 retail scenarios against a loopback model with fixed latency.

A fake OpenAI-compatible server (tests/support/fake_openai.py) answers every call after
``--latency`` seconds (default 0.2). The agent model is scripted per scenario (the task's gold
tool calls one per call, a wrap-up text, "anything else?", then EndConversationTool after the
customer's ###STOP###), the user model opens with the task, confirms, and stops
(tests/e2e/llm_scripts.py). Every scenario therefore passes, and the number of LLM calls is
fixed by the data.

Each configuration is one ``python -m pytest -k tau2_retail`` subprocess from the repository
root with real HTTP through litellm. For each run it records:

- wall: the whole subprocess (interpreter start, plugin and litellm import, collection, run);
- run phase: first test started to last test finished, over all processes (the part that
  parallelism can shorten; startup is paid per process);
- ideal: LLM calls the server saw x latency / parallel width (the LLM-bound lower bound);
- overhead per scenario: (wall - ideal) / scenarios;
- per process (``-p llm_probe``, bench/llm_probe.py): peak RSS and CPU seconds.

Usage:
    python bench/bench_llm_latency.py                      # -n 1, -n 2, -n 8 and --tau2-concurrency 8, 1 run each
    python bench/bench_llm_latency.py --repeats n1=1,n2=1,n8=3,c8=3
    python bench/bench_llm_latency.py --configs n8 --repeats 3
    python bench/bench_llm_latency.py --limit 16 --configs n2  # a quick smoke run
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists). Writes
bench/results/llm_latency.md and .json unless --no-write.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
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

from tests.e2e.llm_scripts import ScriptedModels, Tasks, model_options, subprocess_env  # noqa: E402
from tests.support.fake_openai import FakeOpenAIServer  # noqa: E402

# name -> (extra pytest args, parallel width used for the ideal)
CONFIGS: dict[str, tuple[list[str], int]] = {
    "n1": ([], 1),
    "n2": (["-p", "xdist", "-n", "2"], 2),
    "n8": (["-p", "xdist", "-n", "8"], 8),
    "c8": (["--tau2-concurrency", "8"], 8),
}
LABELS = {"n1": "-n 1", "n2": "-n 2", "n8": "-n 8", "c8": "--tau2-concurrency 8 (one process)"}


def retail_ids(limit: int | None) -> list[str]:
    ids = sorted(Tasks.load("retail").by_id, key=int)
    return ids[:limit] if limit else ids


def run_once(config: str, latency: float, ids: list[str], timeout: float) -> dict[str, Any]:
    extra, width = CONFIGS[config]
    models = ScriptedModels(Tasks.load("retail"))
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=latency) as server:
        models.install(server)
        probe = Path(tmp) / "probe.jsonl"
        nodes = [f"scenarios/test_scenarios.py::test_scenario[tau2_retail__{i}]" for i in ids]
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "llm_probe",
            f"--tau2-results-dir={Path(tmp) / 'results'}",
            *extra,
            *model_options(server),
            *nodes,
        ]
        path = os.pathsep.join(p for p in (str(BENCH), os.environ.get("PYTHONPATH", "")) if p)
        env = subprocess_env(PYTHONPATH=path, LLM_PROBE_OUT=str(probe))
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        wall = time.perf_counter() - start
        calls = {side: len([r for r in server.requests if r.get("model") == side]) for side in ("agent", "user")}
        processes = [json.loads(line) for line in probe.read_text("utf-8").splitlines()] if probe.exists() else []
    last = (done.stdout.strip().splitlines() or [""])[-1]
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", last)) else 0
    if done.returncode != 0 or passed != len(ids):
        print(f"  !! {config}: exit {done.returncode}: {last}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    total_calls = sum(calls.values())
    ideal = total_calls * latency / width
    testers = [p for p in processes if "first_test" in p]
    run_phase = (max(p["last_test"] for p in testers) - min(p["first_test"] for p in testers)) if testers else None
    workers = [p for p in processes if p["worker"] != "main"] or processes
    return {
        "config": config,
        "label": LABELS[config],
        "width": width,
        "scenarios": len(ids),
        "passed": passed,
        "exit_code": done.returncode,
        "result": last,
        "llm_calls": calls,
        "wall_s": round(wall, 2),
        "run_phase_s": round(run_phase, 2) if run_phase is not None else None,
        "ideal_s": round(ideal, 2),
        "wall_over_ideal": round(wall / ideal, 3) if ideal else None,
        "run_phase_over_ideal": round(run_phase / ideal, 3) if ideal and run_phase else None,
        "overhead_per_scenario_s": round((wall - ideal) / len(ids), 3),
        "startup_s": round(min(p["first_test"] for p in testers) - min(p["configured"] for p in processes), 2)
        if testers
        else None,
        "peak_rss_mb_per_worker_max": max((p["peak_rss_mb"] for p in workers), default=None),
        "peak_rss_mb_main": next((p["peak_rss_mb"] for p in processes if p["worker"] == "main"), None),
        "cpu_s_total": round(sum(p["cpu_s"] for p in processes), 1),
        "processes": processes,
    }


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(runs[0])
    for key in (
        "wall_s",
        "run_phase_s",
        "ideal_s",
        "wall_over_ideal",
        "run_phase_over_ideal",
        "overhead_per_scenario_s",
        "startup_s",
        "peak_rss_mb_per_worker_max",
        "cpu_s_total",
    ):
        values = [r[key] for r in runs if r.get(key) is not None]
        out[key] = round(statistics.median(values), 3) if values else None
    out["repeats"] = len(runs)
    out["wall_s_all"] = [r["wall_s"] for r in runs]
    out.pop("processes", None)
    return out


# ---- profile: where the time goes -----------------------------------------------------------------------


def profile(calls: int = 200) -> dict[str, Any]:
    """Import cost of litellm, and CPU per completion through pytest-tau2's client (zero latency)."""
    code = (
        "import os, resource, time; os.environ.setdefault('LITELLM_LOCAL_MODEL_COST_MAP', 'True'); "
        "t = time.perf_counter(); c = time.process_time(); import litellm; "
        "print(time.perf_counter() - t, time.process_time() - c, "
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), check=True
    )
    wall, cpu, rss = (float(x) for x in done.stdout.split())
    base = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource, pytest_tau2.plugin; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)",
        ],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        check=True,
        cwd=ROOT,
    )
    out: dict[str, Any] = {
        **simulate_prefetch(0.2, 8),
        "litellm_import_wall_s": round(wall, 2),
        "litellm_import_cpu_s": round(cpu, 2),
        "rss_after_litellm_import_mb": round(rss, 1),
        "rss_after_plugin_import_mb": round(float(base.stdout.strip()), 1),
    }

    from pytest_tau2.llm.client import aclose, acomplete, preload
    from pytest_tau2.llm.config import ModelConfig, RetryPolicy
    from tests.support.fake_openai import text

    preload()
    with FakeOpenAIServer() as server:
        server.add_handler("agent", text("ok"))
        config = ModelConfig("openai/agent", {"api_base": server.base_url, "api_key": "none"})
        messages = [{"role": "system", "content": "x" * 20000}, {"role": "user", "content": "hello"}]
        tools = [
            {
                "type": "function",
                "function": {
                    "name": f"tool_{i}",
                    "description": "d" * 200,
                    "parameters": {"type": "object", "properties": {}},
                },
            }
            for i in range(16)
        ]

        async def many(n: int) -> None:
            for _ in range(n):
                await acomplete(config, messages, tools=tools, retry=RetryPolicy(0, timeout_s=10))
            await aclose()

        asyncio.run(many(5))  # warm up
        c, t = time.process_time(), time.perf_counter()
        asyncio.run(many(calls))
        out["completion_cpu_ms"] = round(1000 * (time.process_time() - c) / calls, 2)
        out["completion_wall_ms"] = round(1000 * (time.perf_counter() - t) / calls, 2)
        out["completion_calls_measured"] = calls

        # One fresh event loop per scenario, as the plugin does without --tau2-concurrency.
        async def one() -> None:
            await acomplete(config, messages, tools=tools, retry=RetryPolicy(0, timeout_s=10))
            await aclose()

        c = time.process_time()
        for _ in range(20):
            asyncio.run(one())
        out["fresh_loop_first_call_cpu_ms"] = round(1000 * (time.process_time() - c) / 20, 2)
    return out


def simulate_prefetch(latency: float, width: int, limit: int | None = None) -> dict[str, float]:
    """Makespan of the run phase from latency alone, for two ways of keeping ``width`` scenarios in flight.

    Each scenario is a chain of its scripted LLM calls (gold calls, wrap-up, "anything else?",
    closing; three user turns), ``latency`` seconds each; CPU is ignored.
    - window: what pytest_tau2/prefetch.py does: at item i, items i .. i+width-1 are in flight,
      and items finish (are reported) in order;
    - pool: a new scenario starts whenever any running one finishes.
    """
    import heapq

    models = ScriptedModels(Tasks.load("retail"))
    ids = sorted(retail_ids(limit), key=lambda i: f"tau2_retail__{i}")  # pytest's (name) order
    durations = [(len(models.gold_steps(i)) + 2 + 3) * latency for i in ids]
    done: list[float] = []
    for j, d in enumerate(durations):
        start = done[j - width] if j >= width else 0.0
        done.append(max(done[j - 1] if j else 0.0, start + d))
    slots = [0.0] * width
    end = 0.0
    for d in durations:
        finish = heapq.heappop(slots) + d
        end = max(end, finish)
        heapq.heappush(slots, finish)
    return {
        "sim_ideal_s": round(sum(durations) / width, 2),
        "sim_prefetch_window_makespan_s": round(done[-1], 2),
        "sim_free_slot_pool_makespan_s": round(end, 2),
    }


# ---- report ---------------------------------------------------------------------------------------------------


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| config | scenarios passed | LLM calls | ideal (s) | wall (s) | wall / ideal | run phase (s) | "
        "run phase / ideal | overhead per scenario (s) | startup (s) | peak RSS per worker (MB) | CPU (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['label']} | {r['passed']}/{r['scenarios']} | {sum(r['llm_calls'].values())} | {r['ideal_s']} | "
            f"{r['wall_s']} | {r['wall_over_ideal']} | {r['run_phase_s']} | {r['run_phase_over_ideal']} | "
            f"{r['overhead_per_scenario_s']} | {r['startup_s']} | {r['peak_rss_mb_per_worker_max']} | "
            f"{r['cpu_s_total']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake model waits per call")
    parser.add_argument("--configs", default="n1,n2,n8,c8", help=f"comma-separated, of {', '.join(CONFIGS)}")
    parser.add_argument(
        "--repeats", default="1", help="runs per config: N for all, or per config like n1=1,n2=1,n8=3,c8=3"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N retail tasks")
    parser.add_argument("--timeout", type=float, default=1200.0, help="per run")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--out", default=str(BENCH / "results" / "llm_latency"))
    parser.add_argument("--render-only", action="store_true", help="rewrite the .md tables from the .json")
    args = parser.parse_args()
    out = Path(args.out)
    if args.render_only:
        saved = json.loads(out.with_suffix(".json").read_text("utf-8"))
        write_md(out, saved["meta"], saved["medians"], saved["profile"])
        return

    ids = retail_ids(args.limit)
    if "=" in args.repeats:
        repeats = {k: int(v) for k, v in (item.split("=") for item in args.repeats.split(","))}
    else:
        repeats = dict.fromkeys(CONFIGS, int(args.repeats))
    rows, raw = [], []
    for config in args.configs.split(","):
        runs = []
        for repeat in range(repeats.get(config, 1)):
            print(f"{LABELS[config]}: run {repeat + 1}/{repeats.get(config, 1)} ...", flush=True)
            result = run_once(config, args.latency, ids, args.timeout)
            print(
                f"  wall {result['wall_s']} s, ideal {result['ideal_s']} s, ratio {result['wall_over_ideal']}, "
                f"peak RSS/worker {result['peak_rss_mb_per_worker_max']} MB: {result['result']}",
                flush=True,
            )
            runs.append(result)
        raw.extend(runs)
        rows.append(median_of(runs))
    prof = None if args.no_profile else profile()
    print()
    print(table(rows))
    if prof:
        print(json.dumps(prof, indent=2))
    if args.no_write:
        return
    meta = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "latency_s": args.latency,
        "scenarios": len(ids),
        "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(
        json.dumps({"meta": meta, "medians": rows, "runs": raw, "profile": prof}, indent=2) + "\n", "utf-8"
    )
    write_md(out, meta, rows, prof)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


def write_md(out: Path, meta: dict[str, Any], rows: list[dict[str, Any]], prof: dict[str, Any] | None) -> None:
    """The tables, then the hand-written findings already in the file (kept verbatim)."""
    md = out.with_suffix(".md")
    old = md.read_text("utf-8") if md.exists() else ""
    kept = old[old.index(FINDINGS) :] if FINDINGS in old else FINDINGS + "\n"
    md.write_text(render_md(meta, rows, prof) + "\n" + kept, "utf-8")


FINDINGS = "<!-- findings: hand-written below this line, kept when the script rewrites the tables -->"


def render_md(meta: dict[str, Any], rows: list[dict[str, Any]], prof: dict[str, Any] | None) -> str:
    lines = [
        "# LLM-bound sweep benchmark (retail, fake model with fixed latency)",
        "",
        f"`python {meta['command']}` on {meta['nproc']} CPUs, Python {meta['python']}, {meta['date']}; "
        f"{meta['scenarios']} retail scenarios, {meta['latency_s'] * 1000:.0f} ms per LLM call, real HTTP "
        "through litellm to a loopback fake OpenAI server (tests/support/fake_openai.py) in the benchmark process. "
        "Load average at the end: "
        + ", ".join(f"{x:.2f}" for x in meta.get("load_average_at_end") or [])
        + " (the machine was shared with other work).",
        "",
        "- **ideal** = LLM calls the server saw x latency / parallel width (workers, or conversations in flight);",
        "- **wall** = the whole `python -m pytest` subprocess; **run phase** = first test started to last test "
        "finished (startup excluded); **overhead per scenario** = (wall - ideal) / scenarios;",
        "- **peak RSS per worker** = the largest `ru_maxrss` among the xdist workers (the pytest process itself "
        "without xdist); **CPU** = user + system seconds of all pytest processes (bench/llm_probe.py).",
        "",
        table(rows),
        "",
        "Medians over the repeats, per column; every run's numbers are in llm_latency.json. **startup** = "
        "launch to the first test of the *first* process; under xdist the other workers start later, inside "
        "the run phase.",
    ]
    if prof:
        lines += [
            "",
            "## Profile",
            "",
            "| measure | value |",
            "|---|---:|",
            *(f"| {key} | {value} |" for key, value in prof.items()),
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
