"""Offline speed and memory of the harness itself (oracle agent, scripted user, no LLM).

Measures, in fresh subprocesses of `python -m pytest` from the repository root:
- collection time of each tau2 domain (``--collect-only -q -k <domain>``),
- the offline sweep of each domain at ``-n 1`` (no xdist) and ``-n 2``: wall time and the
  peak RSS of the largest process (pytest itself or an xdist worker).

Usage:  python bench/bench_offline.py [--repeats 3] [--out bench/results/offline]
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
REFERENCE = (
    "For scale: upstream tau2's own evaluation of the same gold trajectories takes about 47 s for the\n"
    "114 retail tasks and 42 s for the 50 airline tasks on this kind of machine (issue text,\n"
    "docs/tau2-reference.md section 6); the issue's target for the retail sweep is under 30 s\n"
    "single-process. Per-scenario DB costs behind these numbers: bench/results/db.md."
)


def run_pytest(args: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) of any process in the run's tree, and the last output line."""
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True")
    with tempfile.TemporaryDirectory() as results:
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tau2-results-dir={results}", *args]
        # A fresh interpreter measures each run: RUSAGE_CHILDREN is the max over every reaped descendant.
        probe = (
            "import resource, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "w = time.perf_counter() - t; "
            "r = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
            "print(w, r); print((p.stdout.strip().splitlines() or [''])[-1]); sys.exit(p.returncode)"
        )
        done = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=ROOT, env=env, capture_output=True, text=True)
    first, _, last = done.stdout.partition("\n")
    wall, rss_kb = first.split()
    if done.returncode not in (0, 5):
        raise SystemExit(f"pytest failed ({done.returncode}): {' '.join(args)}\n{done.stdout}\n{done.stderr}")
    return float(wall), int(rss_kb) / 1024.0, last.strip()


def median_run(args: list[str], repeats: int) -> dict[str, object]:
    walls, rss, last = [], [], ""
    for _ in range(repeats):
        wall, peak, last = run_pytest(args)
        walls.append(wall)
        rss.append(peak)
    return {
        "args": " ".join(args),
        "wall_s_median": round(statistics.median(walls), 2),
        "wall_s_all": [round(w, 2) for w in walls],
        "peak_rss_mb_median": round(statistics.median(rss), 1),
        "result": last,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "offline"))
    args = parser.parse_args()
    shared = ROOT.parent / "shared" / "tau2-data"
    if not os.environ.get("TAU2_DATA_DIR") and shared.is_dir():
        os.environ["TAU2_DATA_DIR"] = str(shared)

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

    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "repeats": args.repeats,
        "command": f"python bench/bench_offline.py --repeats {args.repeats}",
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    lines = [
        "# Offline harness benchmark",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}.",
        "Wall time is the whole `python -m pytest` process (interpreter start, plugin import, collection,",
        "run); peak RSS is the largest single process of the run (pytest or one xdist worker). Medians.",
        "",
        "| what | wall (s) | peak RSS (MB) | pytest result |",
        "|---|---:|---:|---|",
    ]
    for row in rows:
        lines.append(f"| {row['what']} | {row['wall_s_median']} | {row['peak_rss_mb_median']} | {row['result']} |")
    lines += ["", REFERENCE]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
