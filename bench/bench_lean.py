# ruff: noqa: E501
"""Issue 41's figures in one command: the retail sweep on the wire path against its bounds, and
before/after when given another checkout.

Runs bench_llm_speed.py's configurations (114 retail scenarios, the scripted loopback model at
``--latency`` per call, real HTTP, the wire path) interleaved per repeat, this tree and optionally a
``--baseline`` tree, and reports per configuration the medians of:

- **wall** against its bound: c32 against the *packing bound* (the conversations' real call
  counts, longest first on 32 slots, x latency; bound x 1.05 + 0.5 s); unbounded against the
  longest conversation (x 1.3 + 0.5 s); c8 against calls x latency / 8; ``-n 2 --tau2-concurrency
  64`` against one process unbounded (not slower);
- **CPU per model call, whole process**: user + system seconds of every pytest process over the
  calls, nothing subtracted (start-up and the end of the run amortised), and its user/system split
  (system time is mostly the result files: ~8 files and folders created per scenario);
- **peak RSS** of the processes that ran scenarios (< 150 MB), and which heavy packages they
  imported (scipy, numpy, litellm, ... : none should be for this sweep but jinja2/jsonschema).

Usage:
    python bench/bench_lean.py                                   # this tree, 3 repeats
    python bench/bench_lean.py --baseline /tmp/before --repeats 3
    python bench/bench_lean.py --configs c32 --repeats 1 --no-write
Writes bench/results/lean.md and lean.json unless --no-write (hand-written notes below the
marker line of lean.md are kept).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import heapq
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_llm_speed as speed

CONFIGS = ("c8", "c32", "cU", "n2c64")
MARKER = "<!-- notes: hand-written below this line, kept when the script rewrites the tables -->"


def packing_bound(calls: list[int], slots: int, latency: float) -> float:
    """Longest-first on ``slots``: each conversation to the slot that frees first; the makespan."""
    heap = [0] * slots
    for n in sorted(calls, reverse=True):
        heapq.heappush(heap, heapq.heappop(heap) + n)
    return max(heap) * latency


def figures(row: dict[str, Any], latency: float) -> dict[str, Any]:
    calls = list(row["calls_per_scenario"].values())
    runners = [p for p in row["processes"] if p["worker"] != "main"] or row["processes"]
    out: dict[str, Any] = {
        "wall_s": row["wall_s"],
        "calls": row["llm_calls"],
        "cpu_s": row["cpu_s_total"],
        "user_s": round(sum(p.get("user_s", 0.0) for p in row["processes"]), 2),
        "sys_s": round(sum(p.get("sys_s", 0.0) for p in row["processes"]), 2),
        "cpu_ms_per_call": round(row["cpu_s_total"] * 1000 / row["llm_calls"], 2) if row["llm_calls"] else None,
        "peak_rss_mb": row["peak_rss_mb_max"],
        "peak_rss_mb_any_process": max((p["peak_rss_mb"] for p in row["processes"]), default=None),
        "heavy_imported": sorted({name for p in runners for name in p.get("heavy_imported", [])}),
        "heavy_imported_any_process": sorted({n for p in row["processes"] for n in p.get("heavy_imported", [])}),
        "processes": row["processes"],
        "passed": row["passed"],
        "scenarios": row["scenarios"],
    }
    config = row["config"].removeprefix("baseline-")
    if config == "c32":
        out["bound_s"] = round(packing_bound(calls, 32, latency) * 1.05 + 0.5, 2)
        out["reference_s"] = round(packing_bound(calls, 32, latency), 2)
        out["reference"] = "packing bound (32 slots, longest first)"
    elif config == "cU":
        longest = max(calls) * latency
        out["bound_s"] = round(longest * 1.3 + 0.5, 2)
        out["reference_s"] = round(longest, 2)
        out["reference"] = "longest conversation"
    elif config == "c8":
        out["reference_s"] = round(sum(calls) * latency / 8, 2)
        out["reference"] = "calls x latency / 8"
    if out.get("reference_s"):
        out["wall_over_reference"] = round(row["wall_s"] / out["reference_s"], 3)
    return out


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(rows[0])
    out.pop("processes", None)
    for key in (
        "wall_s", "cpu_s", "user_s", "sys_s", "cpu_ms_per_call", "peak_rss_mb", "peak_rss_mb_any_process",
        "wall_over_reference",
    ):  # fmt: skip
        values = [r[key] for r in rows if r.get(key) is not None]
        out[key] = round(statistics.median(values), 3) if values else None
        out[f"{key}_all"] = values
    out["heavy_imported"] = sorted({name for r in rows for name in r["heavy_imported"]})
    out["heavy_imported_any_process"] = sorted({n for r in rows for n in r.get("heavy_imported_any_process", [])})
    out["all_passed"] = all(r["passed"] == r["scenarios"] for r in rows)
    return out


def verdicts(medians: dict[str, dict[str, Any]], prefix: str = "") -> list[str]:
    """One line per bound of the issue: the figure, the bound, met or not."""
    lines = []
    c32, cu, n2 = medians.get(prefix + "c32"), medians.get(prefix + "cU"), medians.get(prefix + "n2c64")
    if c32:
        ok = c32["wall_s"] <= c32["bound_s"]
        lines.append(
            f"c32 wall {c32['wall_s']} s vs bound {c32['bound_s']} s (packing {c32['reference_s']} s x 1.05 + 0.5): {'met' if ok else 'NOT met'}"
        )
    if cu:
        ok = cu["wall_s"] <= cu["bound_s"]
        lines.append(
            f"unbounded wall {cu['wall_s']} s vs bound {cu['bound_s']} s (longest {cu['reference_s']} s x 1.3 + 0.5): {'met' if ok else 'NOT met'}"
        )
    if n2 and cu:
        lines.append(
            f"-n 2 --tau2-concurrency 64 {n2['wall_s']} s vs one process unbounded {cu['wall_s']} s: {'faster' if n2['wall_s'] < cu['wall_s'] else 'NOT faster'}"
        )
    mine = {
        k.removeprefix(prefix): m
        for k, m in medians.items()
        if k.startswith(prefix) and (prefix or not k.startswith("baseline-"))
    }
    c8 = mine.get("c8")
    if c8 and c8.get("reference_s"):
        lines.append(
            f"c8 wall {c8['wall_s']} s vs calls x latency / 8 = {c8['reference_s']} s: {c8['wall_over_reference']}x (no bound; 1.12x last round)"
        )
    per_call = [mine[k]["cpu_ms_per_call"] for k in ("c8", "c32", "cU") if k in mine]
    if per_call:
        lines.append(
            f"CPU per model call, whole process, one process: {min(per_call)}-{max(per_call)} ms vs 2.5 ms: {'met' if max(per_call) <= 2.5 else 'NOT met'}"
        )
    if "n2c64" in mine:
        lines.append(
            f"CPU per model call, -n 2 (controller + 2 workers, each pays start-up): {mine['n2c64']['cpu_ms_per_call']} ms (no bound)"
        )
    rss = [m.get("peak_rss_mb_any_process") or m["peak_rss_mb"] for m in mine.values()]
    if rss:
        lines.append(f"peak RSS {min(rss)}-{max(rss)} MB vs 150 MB: {'met' if max(rss) < 150 else 'NOT met'}")
    return lines


def write(results: dict[str, Any], path: Path) -> None:
    path.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    meta = results["meta"]
    lines = [
        "# Issue 41: the retail sweep against its bounds (wire path, scripted model)",
        "",
        f"`{meta['command']}`, {meta['date']}, {meta['cpus']} CPUs, Python {meta['python']}; "
        f"{meta['scenarios']} retail scenarios, {int(meta['latency_s'] * 1000)} ms per call; medians of "
        f"{meta['repeats']} interleaved repeats. Load average before: {meta['loadavg_before']}, after: "
        f"{meta['loadavg_after']}.",
        "",
        "| tree | config | wall (s) | reference (s) | wall / reference | bound (s) | CPU (s) | user / sys (s) "
        "| CPU per call (ms) | peak RSS (MB), runners / any process | heavy packages imported (any process) | walls |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for key, m in results["medians"].items():
        tree = "before" if key.startswith("baseline-") else "this tree"
        lines.append(
            f"| {tree} | {speed.CONFIGS[m['config']][0]} | {m['wall_s']} | {m.get('reference_s', '')} "
            f"| {m.get('wall_over_reference', '')} | {m.get('bound_s', '')} | {m['cpu_s']} | {m['user_s']} / {m['sys_s']} "
            f"| {m['cpu_ms_per_call']} | {m['peak_rss_mb']} / {m.get('peak_rss_mb_any_process')} "
            f"| {', '.join(m.get('heavy_imported_any_process') or m['heavy_imported'])} | {m['wall_s_all']} |"
        )
    lines += ["", "This tree:", "", *(f"- {line}" for line in results["verdicts"])]
    if results.get("baseline_verdicts"):
        lines += ["", "Before:", "", *(f"- {line}" for line in results["baseline_verdicts"])]
    lines += ["", MARKER, ""]
    old = path.read_text("utf-8") if path.exists() else ""
    notes = old.split(MARKER, 1)[1].lstrip("\n") if MARKER in old else ""
    path.write_text("\n".join(lines) + notes, "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout, run interleaved")
    parser.add_argument("--no-write", action="store_true")
    opts = parser.parse_args()
    configs = [c.strip() for c in opts.configs.split(",") if c.strip()]
    ids = sorted(speed.Tasks.load("retail").by_id, key=int)
    trees = [speed.ROOT] + ([opts.baseline.resolve()] if opts.baseline else [])
    zero = {"collect_cpu_s": 0.0, "litellm_import_cpu_s": 0.0}
    loadavg_before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    runs: dict[str, list[dict[str, Any]]] = {}
    for repeat in range(opts.repeats):
        for config in configs:
            for tree in trees:
                row = speed.run_once(config, opts.latency, ids, zero, 900, tree)
                fig = figures(row, opts.latency)
                fig["config"] = config
                runs.setdefault(row["config"], []).append(fig)
                print(
                    f"[{repeat + 1}] {row['config']}: {json.dumps({k: fig[k] for k in ('wall_s', 'cpu_ms_per_call', 'user_s', 'sys_s', 'peak_rss_mb', 'heavy_imported')})}",
                    flush=True,
                )
    medians = {key: median_row(rows) for key, rows in runs.items()}
    results = {
        "meta": {
            "command": "python bench/bench_lean.py " + " ".join(sys.argv[1:]),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "latency_s": opts.latency,
            "scenarios": len(ids),
            "repeats": opts.repeats,
            "baseline": str(opts.baseline) if opts.baseline else None,
            "loadavg_before": loadavg_before,
            "loadavg_after": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        },
        "medians": medians,
        "verdicts": verdicts(medians),
        "baseline_verdicts": verdicts(medians, "baseline-") if opts.baseline else [],
        "runs": runs,
    }
    load = max(os.getloadavg()[0], float(loadavg_before.split(",")[0]))
    if load > 1.5:
        print(
            f"note: load average {load:.2f} on {os.cpu_count()} CPUs: the walls are not comparable with a quiet machine's"
        )
    print("\n".join(results["verdicts"]))
    if results["baseline_verdicts"]:
        print("before:\n" + "\n".join(results["baseline_verdicts"]))
    if not opts.no_write:
        write(results, speed.BENCH / "results" / "lean.md")


if __name__ == "__main__":
    main()
