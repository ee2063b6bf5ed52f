"""The reference bot under a bounded loopback load: honest sessions beside hostile clients.

Starts ``python -m pytest_tau2.bot --oracle`` as its own process on a free loopback port, then
from this process runs, each ``--repeats`` times:

- **quiet**: ``--sessions`` honest scenario runs at once (restaurant and retail scenarios,
  round robin; the runner's real client and the offline scripted user);
- **hostile**: the same sessions at once beside a summary hog, a flood of ~1 MB frames, a client
  that stops reading, a 100,000-deep frame, a NUL byte in ``db_path`` and ``--idle`` idle
  connections (tests/support/bot_load.py).

It checks that every session of the hostile run has the verdict, signals and actions of the
quiet run, and records the latency of an honest session (p50/p95/p99/max, medians over the
repeats) and the bot's peak RSS. The bound the fault test holds is the stated one:
p99 under the hostile load within ``--bound`` seconds.

Usage:  python bench/bench_bot_load.py [--sessions 200] [--idle 50] [--repeats 3] [--out bench/results/bot_load]
Needs TAU2_DATA_DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_tau2.scenario.registry import all_scenarios  # noqa: E402
from pytest_tau2.settings import Settings  # noqa: E402
from tests.support.bot_load import HOSTILE_KINDS, LoadResult, run_load  # noqa: E402

HONEST = ("restaurant__pizza_pepperoni", "restaurant__menu_question", "tau2_retail__5", "tau2_retail__7")
HEAVY = "tau2_retail__5"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _wait_for(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"the bot did not listen on port {port} within {timeout:g} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--idle", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hostile-s", type=float, default=10.0)
    parser.add_argument("--bound", type=float, default=10.0, help="p99 latency bound under load, seconds")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "bot_load"))
    args = parser.parse_args()

    import pytest_tau2.domains.tau2_sources  # noqa: F401
    import scenarios  # noqa: F401  (registers the restaurant)

    settings = Settings(eval_data_root=str(ROOT / "data"), data_dir=os.environ.get("TAU2_DATA_DIR"))
    registry = all_scenarios(settings, [])
    honest = [registry[name]().bind(settings) for name in HONEST]
    heavy = registry[HEAVY]().bind(settings)

    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    bot = subprocess.Popen(
        [sys.executable, "-m", "pytest_tau2.bot", "--oracle", "--port", str(port), "--data-root", str(ROOT / "data"),
         "--send-timeout", "2", "--log-level", "WARNING"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    url = f"ws://127.0.0.1:{port}"
    rows: dict[str, list[dict[str, float]]] = {"quiet": [], "hostile": []}
    hostile_seen: dict[str, str] = {}
    same = True
    try:
        _wait_for(port)
        for _ in range(args.repeats):
            quiet: LoadResult = asyncio.run(run_load(url, honest, settings, args.sessions))
            loud: LoadResult = asyncio.run(
                run_load(
                    url, honest, settings, args.sessions,
                    hostile=HOSTILE_KINDS, heavy=heavy, idle=args.idle, hostile_s=args.hostile_s,
                )
            )  # fmt: skip
            same = same and quiet.verdicts() == loud.verdicts()
            same = same and not any(s.verdict.startswith("error") for s in [*quiet.sessions, *loud.sessions])
            rows["quiet"].append({**quiet.latency(), "wall": quiet.wall_s})
            rows["hostile"].append({**loud.latency(), "wall": loud.wall_s})
            hostile_seen = {k: v for k, v in loud.hostile.items() if not k.startswith("idle")}
        peak = _rss_mb(bot.pid)
    finally:
        bot.terminate()
        bot.wait(10)

    def median(kind: str, key: str) -> float:
        return statistics.median(row[key] for row in rows[kind])

    keys = ("p50", "p95", "p99", "max", "wall")
    table: dict[str, Any] = {kind: {key: round(median(kind, key), 3) for key in keys} for kind in rows}
    result = {
        "sessions": args.sessions,
        "idle_connections": args.idle,
        "repeats": args.repeats,
        "verdicts_identical": same,
        "p99_bound_s": args.bound,
        "within_bound": table["hostile"]["p99"] <= args.bound,
        "latency_s": table,
        "bot_peak_rss_mb": round(peak, 1),
        "hostile_clients": hostile_seen,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", "utf-8")
    lines = [
        "# The reference bot under a bounded loopback load",
        "",
        f"`python bench/bench_bot_load.py --sessions {args.sessions} --idle {args.idle} --repeats {args.repeats}` "
        f"on {os.cpu_count()} CPUs (shared), Python {platform.python_version()}; the bot is its own process "
        "(`--oracle --send-timeout 2`), the clients one asyncio loop in another. Medians over the repeats.",
        "",
        f"- verdicts, signals and actions of every session identical between the quiet and the hostile run: **{same}**",
        f"- p99 of an honest session under the hostile load: {table['hostile']['p99']} s "
        f"(bound {args.bound:g} s: {'within' if result['within_bound'] else 'OVER'})",
        f"- bot peak RSS: {result['bot_peak_rss_mb']} MB",
        "",
        "| run | p50 (s) | p95 (s) | p99 (s) | max (s) | wall of all sessions (s) |",
        "|---|---:|---:|---:|---:|---:|",
        *(f"| {kind} | " + " | ".join(str(table[kind][k]) for k in keys) + " |" for kind in rows),
        "",
        "What the hostile clients saw (last repeat):",
        "",
        *(f"- {kind}: {seen}" for kind, seen in sorted(hostile_seen.items())),
        "",
    ]
    out.with_suffix(".md").write_text("\n".join(lines), "utf-8")
    print("\n".join(lines))
    return 0 if same and result["within_bound"] else 1


if __name__ == "__main__":
    sys.exit(main())
