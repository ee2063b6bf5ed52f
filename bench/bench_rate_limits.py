"""A sweep against a rate-limited provider: how close to the rate-bound ideal, with no errors.

The 114 retail scenarios (agent and user simulator on the loopback fake OpenAI server,
``--latency`` seconds per call) run at ``--tau2-concurrency 64`` while the server admits ``--rate``
requests a second (a token bucket holding a tenth of a second's worth) and answers every other
request at once with HTTP 429, ``Retry-After`` (whole seconds, rounded up) and ``retry-after-ms``
(tests/support/fake_openai.py, ``rate_limit``). Each run is one ``python -m pytest``
subprocess; the two transports (the OpenAI wire path, every call through litellm) alternate
within each repeat, and the table quotes medians.

Per run:

- **ideal**: calls / rate, the calls being the requests the server admitted (every model call
  of the sweep, once);
- **wall**: the whole subprocess (start-up, collection and the run's end included);
  **model phase**: from the first request the server saw to the last;
- **errors**: pytest's error count (an infrastructure error is an error), and the 429s the
  server answered.

Usage:
    python bench/bench_rate_limits.py                       # 20 requests/s, 3 repeats, both transports
    python bench/bench_rate_limits.py --rate 40 --repeats 1 --limit 30 --no-write
Writes bench/results/rate_limits.md and .json unless --no-write.
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
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
if not os.environ.get("TAU2_DATA_DIR") and (ROOT.parent / "shared" / "tau2-data").is_dir():
    os.environ["TAU2_DATA_DIR"] = str((ROOT.parent / "shared" / "tau2-data").resolve())
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.e2e.llm_scripts import ScriptedModels, Tasks, model_options, subprocess_env  # noqa: E402
from tests.support.fake_openai import FakeOpenAIServer, Reply  # noqa: E402

TRANSPORTS = ("auto", "litellm")
MEDIAN_KEYS = ("wall_s", "model_phase_s", "ideal_s", "wall_over_ideal", "model_phase_over_ideal", "refused")


def run_once(
    transport: str, rate: float, latency: float, concurrency: int, ids: list[str], retry_after_ms: bool = True
) -> dict[str, Any]:
    models = ScriptedModels(Tasks.load("retail"))
    stamps: list[float] = []
    lock = threading.Lock()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=latency) as server:
        models.install(server)
        for side, handler in (("agent", models.agent_handler), ("user", models.user_handler)):

            def timed(request: dict[str, Any], handler: Any = handler) -> Reply:
                with lock:
                    stamps.append(time.monotonic())
                return handler(request)  # type: ignore[no-any-return]

            server.add_handler(side, timed)
        server.rate_limit(rate, retry_after_ms=retry_after_ms)
        nodes = [f"scenarios/test_scenarios.py::test_scenario[tau2_retail__{i}]" for i in ids]
        args = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--tau2-results-dir={Path(tmp) / 'results'}",
            "--tau2-concurrency",
            str(concurrency),
            "--tau2-llm-transport",
            transport,
            *model_options(server),
            *nodes,
        ]
        env = {k: v for k, v in subprocess_env().items() if k != "PYTHONDONTWRITEBYTECODE"}
        start = time.perf_counter()
        done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False)
        wall = time.perf_counter() - start
        calls, refused = len(server.requests), server.refused
    last = (done.stdout.strip().splitlines() or [""])[-1]
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", last)) else 0
    errors = int(m.group(1)) if (m := re.search(r"(\d+) errors?", last)) else 0
    if done.returncode != 0 or passed != len(ids):
        print(f"  !! {transport}: exit {done.returncode}: {last}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    ideal = calls / rate
    phase = (max(stamps) - min(stamps)) if stamps else 0.0
    per_second = [0] * (int(phase) + 1)
    for stamp in stamps:
        per_second[int(stamp - min(stamps))] += 1
    return {
        "transport": transport,
        "scenarios": len(ids),
        "passed": passed,
        "errors": errors,
        "exit_code": done.returncode,
        "calls": calls,
        "refused": refused,
        "ideal_s": round(ideal, 2),
        "wall_s": round(wall, 2),
        "model_phase_s": round(phase, 2),
        "wall_over_ideal": round(wall / ideal, 3) if ideal else None,
        "model_phase_over_ideal": round(phase / ideal, 3) if ideal else None,
        "admitted_per_second": per_second,
    }


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(runs[0])
    for key in MEDIAN_KEYS:
        out[key] = round(statistics.median(r[key] for r in runs), 3)
    out["repeats"] = len(runs)
    out["wall_s_all"] = [r["wall_s"] for r in runs]
    out["errors_all"] = [r["errors"] for r in runs]
    out["all_passed"] = all(r["passed"] == r["scenarios"] and r["errors"] == 0 for r in runs)
    return out


def write(results: dict[str, Any], path_md: Path) -> None:
    path_md.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    meta = results["meta"]
    lines = [
        "# A sweep against a rate-limited provider (retail, loopback server answering 429 beyond R/s)",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs, Python {meta['python']}, {meta['date']}; "
        f"{meta['scenarios']} retail scenarios (agent + user simulator), `--tau2-concurrency {meta['concurrency']}`, "
        f"{int(meta['latency_s'] * 1000)} ms per admitted call, the server admitting {meta['rate']:g} requests/s "
        "(token bucket of a tenth of a second's worth) and answering the rest with 429 "
        f"({meta.get('retry_after', 'Retry-After + retry-after-ms')}). Load average at the end: "
        f"{meta['loadavg']} (a shared machine). Medians over "
        f"{meta['repeats']} repeats, transports interleaved; every run is in {path_md.stem}.json.",
        "",
        "| transport | passed | infrastructure errors (all runs) | calls | 429s | ideal = calls / R (s) | wall (s) "
        "| wall / ideal | model phase (s) | model phase / ideal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results["medians"]:
        name = "OpenAI wire path" if row["transport"] == "auto" else "litellm"
        lines.append(
            f"| {name} | {row['passed']}/{row['scenarios']} | {row['errors_all']} | {row['calls']} | {row['refused']} "
            f"| {row['ideal_s']} | {row['wall_s']} | {row['wall_over_ideal']} | {row['model_phase_s']} "
            f"| {row['model_phase_over_ideal']} |"
        )
    marker = "<!-- findings: hand-written below this line, kept when the script rewrites the tables -->"
    lines += ["", marker, ""]
    old = path_md.read_text("utf-8") if path_md.exists() else ""
    findings = old.split(marker, 1)[1].lstrip("\n") if marker in old else ""
    path_md.write_text("\n".join(lines) + findings, "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=20.0, help="requests per second the server admits")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--limit", type=int, default=None, help="first N retail tasks only")
    parser.add_argument(
        "--whole-seconds",
        action="store_true",
        help="the server's 429s carry only Retry-After in whole seconds (no retry-after-ms)",
    )
    parser.add_argument("--out", default="rate_limits", help="results file name under bench/results (.md, .json)")
    parser.add_argument("--no-write", action="store_true")
    opts = parser.parse_args()
    ids = sorted(Tasks.load("retail").by_id, key=int)[: opts.limit]
    transports = [t.strip() for t in opts.transports.split(",") if t.strip()]
    runs: dict[str, list[dict[str, Any]]] = {}
    for repeat in range(opts.repeats):
        for transport in transports:
            row = run_once(transport, opts.rate, opts.latency, opts.concurrency, ids, not opts.whole_seconds)
            runs.setdefault(transport, []).append(row)
            print(f"[{repeat + 1}] {json.dumps(row)}", flush=True)
    results: dict[str, Any] = {
        "meta": {
            "command": "python bench/bench_rate_limits.py " + " ".join(sys.argv[1:]),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "rate": opts.rate,
            "latency_s": opts.latency,
            "concurrency": opts.concurrency,
            "scenarios": len(ids),
            "repeats": opts.repeats,
            "retry_after": "Retry-After in whole seconds only"
            if opts.whole_seconds
            else "Retry-After in whole seconds + retry-after-ms",
            "loadavg": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        },
        "medians": [median_of(rows) for rows in runs.values()],
        "runs": runs,
    }
    for row in results["medians"]:
        print(json.dumps({k: row[k] for k in ("transport", "errors_all", *MEDIAN_KEYS)}))
    if not opts.no_write:
        write(results, ROOT / "bench" / "results" / f"{opts.out}.md")


if __name__ == "__main__":
    main()
