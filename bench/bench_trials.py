"""Cost of ``--tau2-trials K`` on the offline retail sweep (oracle agent, scripted user, no LLM).

Runs the 114 retail scenarios with 1 trial and with 4 trials, single process (no xdist), each in
a fresh ``python -m pytest`` subprocess, plus a ``--collect-only`` run of each to separate the
fixed cost (interpreter start, plugin import, collection) from the per-item cost. CPU time
(user + system) is the measure: the machine is shared, and wall time moves with its load. Four
trials should cost close to 4x one trial after collection, and less in total (the fixed cost is
paid once; the gold replay and the parsed DB are cached per process).

Usage:  python bench/bench_trials.py [--repeats 3] [--trials 4] [--out bench/results/trials]
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SELECTION = ["-k", "tau2_retail"]
# A fresh interpreter runs pytest and reports its wall time and the CPU time (user + system) of
# every process it reaped: CPU time is what a trial costs, and unlike wall time it barely moves
# when other jobs share the machine.
PROBE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); w = time.perf_counter() - t; "
    "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(w, r.ru_utime + r.ru_stime, r.ru_maxrss); print((p.stdout.strip().splitlines() or [''])[-1]); "
    "sys.exit(p.returncode)"
)


def run_pytest(args: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MB) and the last output line of one pytest run."""
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    with tempfile.TemporaryDirectory() as results:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tau2-results-dir={results}", *args]
        done = subprocess.run([sys.executable, "-c", PROBE, *cmd], cwd=ROOT, env=env, capture_output=True, text=True)
    first, _, last = done.stdout.partition("\n")
    if done.returncode not in (0, 5):
        raise SystemExit(f"pytest failed ({done.returncode}): {' '.join(args)}\n{done.stdout}\n{done.stderr}")
    wall, cpu, rss_kb = first.split()
    return float(wall), float(cpu), int(rss_kb) / 1024.0, last.strip()


def median_run(args: list[str], repeats: int) -> dict[str, object]:
    runs = [run_pytest(args) for _ in range(repeats)]
    return {
        "args": " ".join(args),
        "wall_s_median": round(statistics.median(r[0] for r in runs), 2),
        "cpu_s_median": round(statistics.median(r[1] for r in runs), 2),
        "cpu_s_all": [round(r[1], 2) for r in runs],
        "peak_rss_mb_median": round(statistics.median(r[2] for r in runs), 1),
        "result": runs[-1][3],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "trials"))
    args = parser.parse_args()
    shared = ROOT.parent / "shared" / "tau2-data"
    if not os.environ.get("TAU2_DATA_DIR") and shared.is_dir():
        os.environ["TAU2_DATA_DIR"] = str(shared)

    rows: list[dict[str, object]] = []
    for trials in (1, args.trials):
        option = [f"--tau2-trials={trials}"]
        collect = median_run(["--collect-only", "-q", *SELECTION, *option], args.repeats)
        sweep = median_run([*SELECTION, *option], args.repeats)
        items = 114 * trials
        per_item_ms = (float(str(sweep["cpu_s_median"])) - float(str(collect["cpu_s_median"]))) / items * 1000
        rows.append(
            {
                "trials": trials,
                "items": items,
                "collect": collect,
                "sweep": sweep,
                "per_item_ms": round(per_item_ms, 1),
            }
        )
    one, many = rows[0], rows[1]
    cpu_ratio = float(str(many["sweep"]["cpu_s_median"])) / float(str(one["sweep"]["cpu_s_median"]))  # type: ignore[index]
    run_ratio = (float(str(many["per_item_ms"])) * int(str(many["items"]))) / (
        float(str(one["per_item_ms"])) * int(str(one["items"]))
    )
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "repeats": args.repeats,
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "command": f"python bench/bench_trials.py --repeats {args.repeats} --trials {args.trials}",
        "cpu_ratio": round(cpu_ratio, 2),
        "run_ratio": round(run_ratio, 2),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = [
        "# Trials benchmark: offline retail sweep",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}",
        f"(1-minute load average {meta['load_average_1m_at_end']} at the end: the machine is shared, so compare",
        "the rows with each other rather than with bench/results/offline.md).",
        "Single process (no xdist), oracle agent and scripted user. CPU is user + system time of the",
        "whole `python -m pytest` process; *fixed* is the same command with `--collect-only`",
        "(interpreter, plugin import, collection); *per item* is (sweep CPU - fixed CPU) / items. Medians.",
        "",
        "| trials | items | fixed CPU (s) | sweep CPU (s) | sweep wall (s) | per item CPU (ms) | peak RSS (MB) "
        "| pytest result |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        collect, sweep = row["collect"], row["sweep"]
        lines.append(
            f"| {row['trials']} | {row['items']} | {collect['cpu_s_median']} | {sweep['cpu_s_median']} | "  # type: ignore[index]
            f"{sweep['wall_s_median']} | {row['per_item_ms']} | {sweep['peak_rss_mb_median']} | {sweep['result']} |"  # type: ignore[index]
        )
    lines += [
        "",
        f"{args.trials} trials cost {meta['cpu_ratio']}x the CPU time of one trial, and "
        f"{meta['run_ratio']}x its CPU time after collection, for {args.trials}x the items.",
    ]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
