"""Offline speed and memory of the harness itself (oracle agent, scripted user, no LLM).

Measures, in fresh subprocesses of `python -m pytest` from the repository root:
- collection time of each tau2 domain (``--collect-only -q -k <domain>``),
- the offline sweep of each domain at ``-n 1`` (no xdist) and ``-n 2``: wall time and the
  peak RSS of the largest process (pytest itself or an xdist worker).

Every run also records its CPU seconds (user + system of the whole process tree).

``--baseline DIR`` measures the harness CPU per scenario side by side with another checkout
(e.g. ``git archive <commit> | tar -x -C DIR``): for each chosen domain, a ``--collect-only``
run (start-up: interpreter, plugin, collection) and the ``-n 1`` sweep, the two trees
alternating in every repeat; CPU per scenario = (sweep CPU - collect CPU) / scenarios.

``--collect-rows --baseline DIR`` measures only the four collect-only rows, both trees
alternating (bench/results/offline_collect; bench/bench_collection.py has the telecom full
collection in detail).

Usage:  python bench/bench_offline.py [--repeats 3] [--out bench/results/offline]
        python bench/bench_offline.py --collect-rows --baseline DIR [--repeats 5]
        python bench/bench_offline.py --baseline DIR [--domains tau2_retail] [--repeats 5]
            [--out bench/results/offline_cpu]
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists).
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = (
    "For scale: upstream tau2's own evaluation of the same gold trajectories takes about 47 s for the\n"
    "114 retail tasks and 42 s for the 50 airline tasks on this kind of machine (issue text,\n"
    "docs/tau2-reference.md section 6); the issue's target for the retail sweep is under 30 s\n"
    "single-process. Per-scenario DB costs behind these numbers: bench/results/db.md."
)


def run_pytest(args: list[str], tree: Path = ROOT) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds and peak RSS (MB) of the run's process tree, and the last output line."""
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory() as results:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tau2-results-dir={results}", *args]
        # A fresh interpreter measures each run: RUSAGE_CHILDREN sums the CPU of every reaped
        # descendant and takes the max of their peak RSS.
        probe = (
            "import resource, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "w = time.perf_counter() - t; "
            "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(w, r.ru_utime + r.ru_stime, r.ru_maxrss); "
            "print((p.stdout.strip().splitlines() or [''])[-1]); sys.exit(p.returncode)"
        )
        done = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=tree, env=env, capture_output=True, text=True)
    first, _, last = done.stdout.partition("\n")
    if done.returncode not in (0, 5):
        raise SystemExit(f"pytest failed ({done.returncode}) in {tree}: {' '.join(args)}\n{done.stdout}\n{done.stderr}")
    wall, cpu, rss_kb = first.split()
    return float(wall), float(cpu), int(rss_kb) / 1024.0, last.strip()


def summarize(args: list[str], runs: list[tuple[float, float, float, str]]) -> dict[str, object]:
    walls, cpus, rss = [r[0] for r in runs], [r[1] for r in runs], [r[2] for r in runs]
    return {
        "args": " ".join(args),
        "wall_s_median": round(statistics.median(walls), 2),
        "wall_s_all": [round(w, 2) for w in walls],
        "cpu_s_median": round(statistics.median(cpus), 2),
        "cpu_s_all": [round(c, 2) for c in cpus],
        "peak_rss_mb_median": round(statistics.median(rss), 1),
        "result": runs[-1][3],
    }


def median_run(args: list[str], repeats: int) -> dict[str, object]:
    return summarize(args, [run_pytest(args) for _ in range(repeats)])


def scenarios_run(result_line: str) -> int:
    """Items that ran (passed, failed, errors) in pytest's summary line; subtests not counted."""
    counts = re.findall(r"(\d+) (passed|failed|errors?)(?! *subtests)", re.sub(r"\d+ subtests \w+", "", result_line))
    return sum(int(n) for n, _ in counts)


def compare(baseline: Path, domains: list[str], repeats: int) -> list[dict[str, object]]:
    """Collect-only and ``-n 1`` sweep per domain, ours and the baseline alternating in each repeat."""
    trees = {"ours": ROOT, "baseline": baseline}
    rows: list[dict[str, object]] = []
    for domain in domains:
        runs: dict[tuple[str, str], list[tuple[float, float, float, str]]] = {}
        for _ in range(repeats):
            for kind, args in (("collect", ["--collect-only", "-k", domain]), ("sweep", ["-k", domain])):
                for name, tree in trees.items():
                    runs.setdefault((name, kind), []).append(run_pytest(args, tree))
                    print(name, domain, kind, runs[(name, kind)][-1][:3], flush=True)
        row: dict[str, object] = {"domain": domain}
        for name in trees:
            collect = summarize(["--collect-only", "-k", domain], runs[(name, "collect")])
            sweep = summarize(["-k", domain], runs[(name, "sweep")])
            count = scenarios_run(str(sweep["result"]))
            harness = float(sweep["cpu_s_median"]) - float(collect["cpu_s_median"])  # type: ignore[arg-type]
            row[name] = {
                "collect": collect,
                "sweep": sweep,
                "scenarios": count,
                "harness_cpu_s": round(harness, 2),
                "cpu_ms_per_scenario": round(harness / count * 1000, 1) if count else None,
            }
        rows.append(row)
    return rows


COLLECT_ROWS = [
    *((f"collect {d}", ["--collect-only", "-k", d]) for d in ("tau2_retail", "tau2_airline", "tau2_telecom")),
    ("collect telecom full (2,285)", ["--collect-only", "-k", "tau2_telecom", "--tau2-telecom-tasks", "full"]),
]


def compare_collect_rows(baseline: Path, repeats: int, out: Path) -> None:
    """The collect-only rows for ours and the baseline, trees alternating in every repeat."""
    trees = {"ours": ROOT, "baseline": baseline}
    runs: dict[tuple[str, str], list[tuple[float, float, float, str]]] = {}
    for _ in range(repeats):
        for what, args in COLLECT_ROWS:
            for name, tree in trees.items():
                runs.setdefault((what, name), []).append(run_pytest(args, tree))
    rows = [
        {"what": what, **{name: summarize(args, runs[(what, name)]) for name in trees}} for what, args in COLLECT_ROWS
    ]
    meta = {**machine(), "repeats": repeats, "baseline": str(baseline), "command": f"python bench/bench_offline.py "
            f"--collect-rows --baseline {baseline} --repeats {repeats}"}  # fmt: skip
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = [
        "# Collect-only rows, side by side",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}. Wall, CPU and",
        "peak RSS of the whole `python -m pytest` process; trees alternate in every repeat; medians.",
        "",
        "| what | baseline wall / CPU (s) | ours wall / CPU (s) | peak RSS baseline / ours (MB) | ours: result |",
        "|---|---:|---:|---:|---|",
    ]
    for row in rows:
        b, o = row["baseline"], row["ours"]
        assert isinstance(b, dict) and isinstance(o, dict)
        lines.append(
            f"| {row['what']} | {b['wall_s_median']} / {b['cpu_s_median']} "
            f"| {o['wall_s_median']} / {o['cpu_s_median']} "
            f"| {b['peak_rss_mb_median']} / {o['peak_rss_mb_median']} | {o['result']} |"
        )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def write_comparison(out: Path, baseline: Path, rows: list[dict[str, object]], meta: dict[str, object]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = [
        "# Harness CPU per scenario, side by side",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}; baseline: "
        f"`{baseline}`. Trees alternate in every repeat; medians. CPU is user + system of the whole",
        "`python -m pytest` process tree; per scenario = (sweep CPU - collect-only CPU) / scenarios run",
        "(the oracle agent and scripted user: no LLM, so this is all harness).",
        "",
        "| domain | tree | collect wall / CPU (s) | sweep wall / CPU (s) | harness CPU (s) | CPU per scenario (ms) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        for name in ("baseline", "ours"):
            r = row[name]
            assert isinstance(r, dict)
            c, w = r["collect"], r["sweep"]
            lines.append(
                f"| {row['domain']} | {name} | {c['wall_s_median']} / {c['cpu_s_median']} | "
                f"{w['wall_s_median']} / {w['cpu_s_median']} | {r['harness_cpu_s']} | {r['cpu_ms_per_scenario']} |"
            )
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def machine() -> dict[str, object]:
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="output path without suffix")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to compare with")
    parser.add_argument("--domains", nargs="+", default=["tau2_retail"], help="with --baseline")
    parser.add_argument("--collect-rows", action="store_true", help="with --baseline: only the collect-only rows")
    args = parser.parse_args()
    shared = ROOT.parent / "shared" / "tau2-data"
    if not os.environ.get("TAU2_DATA_DIR") and shared.is_dir():
        os.environ["TAU2_DATA_DIR"] = str(shared)
    if args.collect_rows:
        if args.baseline is None:
            parser.error("--collect-rows needs --baseline DIR")
        compare_collect_rows(
            args.baseline.resolve(), args.repeats, Path(args.out or ROOT / "bench/results/offline_collect")
        )
        return 0
    if args.baseline is not None:
        baseline = args.baseline.resolve()
        rows = compare(baseline, args.domains, args.repeats)
        command = f"python bench/bench_offline.py --baseline {args.baseline} --domains {' '.join(args.domains)}"
        write_comparison(
            Path(args.out or ROOT / "bench" / "results" / "offline_cpu"),
            baseline,
            rows,
            {**machine(), "repeats": args.repeats, "command": f"{command} --repeats {args.repeats}"},
        )
        return 0

    rows: list[dict[str, object]] = []
    for domain in ("tau2_retail", "tau2_airline", "tau2_telecom"):
        rows.append({"what": f"collect {domain}", **median_run(["--collect-only", "-k", domain], args.repeats)})
    rows.append(
        {
            "what": "collect telecom full (2,285)",
            **median_run(["--collect-only", "-k", "tau2_telecom", "--tau2-telecom-tasks", "full"], args.repeats),
        }
    )
    for domain in ("tau2_retail", "tau2_airline", "tau2_telecom"):
        rows.append({"what": f"sweep {domain} -n 1", **median_run(["-k", domain], args.repeats)})
        rows.append({"what": f"sweep {domain} -n 2", **median_run(["-k", domain, "-n", "2"], args.repeats)})

    meta = {**machine(), "repeats": args.repeats, "command": f"python bench/bench_offline.py --repeats {args.repeats}"}
    out = Path(args.out or ROOT / "bench" / "results" / "offline")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = [
        "# Offline harness benchmark",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}.",
        "Wall time is the whole `python -m pytest` process (interpreter start, plugin import, collection,",
        "run); peak RSS is the largest single process of the run (pytest or one xdist worker). Medians.",
        "",
        "| what | wall (s) | CPU (s) | peak RSS (MB) | pytest result |",
        "|---|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['what']} | {row['wall_s_median']} | {row['cpu_s_median']} | {row['peak_rss_mb_median']} "
            f"| {row['result']} |"
        )
    lines += ["", REFERENCE]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
