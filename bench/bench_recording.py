"""Record once, replay for free: wall times of the 114 retail scenarios recorded, replayed and offline.

Three kinds of run, each a ``python -m pytest`` subprocess from the repository root over the 114
retail scenario nodes:

- **offline**: the oracle agent and the scripted user (no model at all): the floor;
- **record**: the agent and user models of bench_llm_latency.py (tests/e2e/llm_scripts.py: the
  task's gold calls one per call, then wrap-up; the user opens, confirms, stops) behind the
  loopback fake OpenAI server with ``--latency`` seconds per call, real HTTP through litellm,
  ``--tau2-record-mode all`` into a fresh cassette folder;
- **replay**: the same model options with the server stopped and ``--tau2-record-mode none``:
  one process, ``-n 2``, and ``--tau2-concurrency 4``.

For every replay it also checks that each scenario's verdict and transcript equal the recorded
run's, and (``-p llm_probe``, bench/llm_probe.py) whether any process imported litellm.
Target (issue 14): one-process replay within 1.5x of the one-process offline sweep.

Usage:
    python bench/bench_recording.py                  # 3 repeats of offline and replay, 1 recording
    python bench/bench_recording.py --limit 10 --repeats 1 --no-write   # a quick smoke run
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists). Writes
bench/results/recording.md and .json unless --no-write.
"""

from __future__ import annotations

import argparse
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

REPLAYS: dict[str, tuple[str, list[str]]] = {
    "replay_n1": ("replay, one process", []),
    "replay_n2": ("replay, -n 2", ["-p", "xdist", "-n", "2"]),
    "replay_c4": ("replay, --tau2-concurrency 4", ["--tau2-concurrency", "4"]),
}


def retail_nodes(limit: int | None) -> list[str]:
    ids = sorted(Tasks.load("retail").by_id, key=int)
    ids = ids[:limit] if limit else ids
    return [f"scenarios/test_scenarios.py::test_scenario[tau2_retail__{i}]" for i in ids]


def run(name: str, label: str, args: list[str], results: Path, timeout: float) -> dict[str, Any]:
    """One pytest subprocess: wall time, outcome line, and what each of its processes cost."""
    probe = results.parent / f"{results.name}.probe.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "llm_probe",
        f"--tau2-results-dir={results}",
        *args,
    ]
    path = os.pathsep.join(p for p in (str(BENCH), os.environ.get("PYTHONPATH", "")) if p)
    env = subprocess_env(PYTHONPATH=path, LLM_PROBE_OUT=str(probe))
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - start
    last = (done.stdout.strip().splitlines() or [""])[-1]
    processes = [json.loads(line) for line in probe.read_text("utf-8").splitlines()] if probe.exists() else []
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", last)) else 0
    if done.returncode != 0:
        print(f"  !! {name}: exit {done.returncode}: {last}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}", flush=True)
    return {
        "config": name,
        "label": label,
        "exit_code": done.returncode,
        "passed": passed,
        "result": last,
        "wall_s": round(wall, 2),
        "cpu_s_total": round(sum(p["cpu_s"] for p in processes), 2),
        "peak_rss_mb_max": max((p["peak_rss_mb"] for p in processes), default=None),
        "litellm_imported": any(p["litellm_imported"] for p in processes),
    }


def outcomes(results: Path) -> dict[str, tuple[Any, ...]]:
    """Per scenario: verdict, stop reason, token usage without the replay marks, transcript."""
    out: dict[str, tuple[Any, ...]] = {}
    for metrics_file in sorted(results.glob("*/metrics.json")):
        metrics = json.loads(metrics_file.read_text("utf-8"))
        usage = {
            side: {k: v for k, v in values.items() if k != "replayed_calls"}
            for side, values in metrics["token_usage"].items()
        }
        transcript = json.loads((metrics_file.parent / "transcript.json").read_text("utf-8"))["messages"]
        out[metrics["scenario"]] = (metrics["is_successful"], metrics["stop_reason"], usage, transcript)
    return out


def replayed_calls(results: Path) -> int:
    total = 0
    for metrics_file in results.glob("*/metrics.json"):
        usage = json.loads(metrics_file.read_text("utf-8"))["token_usage"]
        total += sum(int(side.get("replayed_calls", 0)) for side in usage.values())
    return total


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    row = dict(runs[-1])
    for key in ("wall_s", "cpu_s_total", "peak_rss_mb_max"):
        values = [r[key] for r in runs if r.get(key) is not None]
        row[key] = round(statistics.median(values), 2) if values else None
    row["wall_s_all"] = [r["wall_s"] for r in runs]
    row["repeats"] = len(runs)
    return row


def measure(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    nodes = retail_nodes(args.limit)
    rows: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cassettes = tmp / "cassettes"
        runs = []
        for repeat in range(args.repeats):
            print(f"offline: run {repeat + 1}/{args.repeats} ...", flush=True)
            runs.append(run("offline", "offline (oracle agent, scripted user)", nodes, tmp / f"off{repeat}", 900))
        rows.append(median_of(runs))

        print(f"record: {args.latency * 1000:.0f} ms per call, --tau2-concurrency {args.record_concurrency} ...")
        models = ScriptedModels(Tasks.load("retail"))
        with FakeOpenAIServer(latency_s=args.latency) as server:
            models.install(server)
            options = model_options(server)
            record_args = [
                *nodes,
                *options,
                "--tau2-record-mode",
                "all",
                f"--tau2-cassette-dir={cassettes}",
                "--tau2-concurrency",
                str(args.record_concurrency),
            ]
            label = f"record ({args.latency * 1000:.0f} ms per call, --tau2-concurrency {args.record_concurrency})"
            recorded = run("record", label, record_args, tmp / "record", 1800)
            recorded["llm_calls"] = len(server.requests)
        rows.append(recorded)
        files = sorted(cassettes.rglob("*.yaml"))
        checks["cassettes"] = len(files)
        checks["cassette_bytes"] = sum(f.stat().st_size for f in files)
        reference = outcomes(tmp / "record")

        # The server is stopped: a call that escaped the cassettes would fail its scenario.
        for config, (label, extra) in REPLAYS.items():
            runs = []
            repeats = args.repeats if config == "replay_n1" else max(1, args.repeats_other)
            for repeat in range(repeats):
                print(f"{label}: run {repeat + 1}/{repeats} ...", flush=True)
                results = tmp / f"{config}{repeat}"
                replay_args = [*nodes, *options, "--tau2-record-mode", "none", f"--tau2-cassette-dir={cassettes}"]
                result = run(config, label, [*replay_args, *extra], results, 900)
                result["identical_to_recording"] = outcomes(results) == reference
                result["replayed_calls"] = replayed_calls(results)
                runs.append(result)
            rows.append(median_of(runs))
    offline = rows[0]["wall_s"]
    for row in rows:
        row["wall_over_offline"] = round(row["wall_s"] / offline, 2) if offline else None
    checks["scenarios"] = len(nodes)
    return rows, checks


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| run | passed | wall (s) | wall / offline | CPU (s) | peak RSS (MB) | litellm imported | "
        "model calls | same verdicts and transcripts as the recording |",
        "|---|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in rows:
        calls = r.get("llm_calls", f"{r['replayed_calls']} replayed" if "replayed_calls" in r else 0)
        same = "" if "identical_to_recording" not in r else ("yes" if r["identical_to_recording"] else "**no**")
        lines.append(
            f"| {r['label']} | {r['passed']} | {r['wall_s']} | {r['wall_over_offline']} | {r['cpu_s_total']} | "
            f"{r['peak_rss_mb_max']} | {'yes' if r['litellm_imported'] else 'no'} | {calls} | {same} |"
        )
    return "\n".join(lines)


FINDINGS = "<!-- findings: hand-written below this line, kept when the script rewrites the tables -->"


def write_md(out: Path, meta: dict[str, Any], rows: list[dict[str, Any]], checks: dict[str, Any]) -> None:
    replay = next(r for r in rows if r["config"] == "replay_n1")
    target = "met" if replay["wall_over_offline"] <= 1.5 else "**not met**"
    text = "\n".join(
        [
            "# Record and replay benchmark (retail)",
            "",
            f"`python {meta['command']}` on {meta['nproc']} CPUs, Python {meta['python']}, {meta['date']}; "
            f"{checks['scenarios']} retail scenarios. Recording: agent and user models scripted behind the "
            f"loopback fake OpenAI server (tests/support/fake_openai.py), {meta['latency_s'] * 1000:.0f} ms per "
            "call, real HTTP through litellm. Replays: the same options with the server stopped and "
            "`--tau2-record-mode none`. Load average at the end: "
            + ", ".join(f"{x:.2f}" for x in meta.get("load_average_at_end") or [])
            + " (the machine was shared with other work).",
            "",
            "- **wall** = the whole `python -m pytest` subprocess (median over the repeats; every run in "
            "recording.json); **CPU** = user + system seconds of all its processes; **peak RSS** = the "
            "largest process (bench/llm_probe.py);",
            "- **same verdicts and transcripts**: every scenario's is_successful, stop reason, token usage "
            "and transcript.json equal the recording's.",
            "",
            table(rows),
            "",
            f"Cassettes: {checks['cassettes']} files, {checks['cassette_bytes'] / 1e6:.2f} MB in all. "
            f"Target (issue 14): one-process replay within 1.5x of the offline sweep: "
            f"{replay['wall_over_offline']}x, {target}.",
            "",
        ]
    )
    md = out.with_suffix(".md")
    old = md.read_text("utf-8") if md.exists() else ""
    kept = old[old.index(FINDINGS) :] if FINDINGS in old else FINDINGS + "\n"
    md.write_text(text + "\n" + kept, "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake model waits per call")
    parser.add_argument("--record-concurrency", type=int, default=8, help="--tau2-concurrency of the recording")
    parser.add_argument("--repeats", type=int, default=3, help="runs of offline and the one-process replay")
    parser.add_argument("--repeats-other", type=int, default=1, help="runs of the -n 2 and concurrency replays")
    parser.add_argument("--limit", type=int, default=None, help="only the first N retail tasks")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--out", default=str(BENCH / "results" / "recording"))
    parser.add_argument("--render-only", action="store_true", help="rewrite the .md from the .json")
    args = parser.parse_args()
    out = Path(args.out)
    if args.render_only:
        saved = json.loads(out.with_suffix(".json").read_text("utf-8"))
        write_md(out, saved["meta"], saved["rows"], saved["checks"])
        return
    rows, checks = measure(args)
    print()
    print(table(rows))
    print(json.dumps(checks))
    if args.no_write:
        return
    meta = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "latency_s": args.latency,
        "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows, "checks": checks}, indent=2) + "\n")
    write_md(out, meta, rows, checks)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
