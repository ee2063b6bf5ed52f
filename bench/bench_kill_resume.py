"""Kill -9 at random points of a sweep, then resume: is any finished conversation paid for twice?

A sweep of retail tasks runs against the loopback fake OpenAI server (tests/support/fake_openai.py;
scripted gold agent and user, tests/e2e/llm_scripts.py) under ``--tau2-concurrency 4`` (and
``-n 2 --tau2-concurrency 4``). Every model reply waits ``--latency`` seconds, so conversations
overlap and finish in any order. At a random moment after the first request the whole process
group gets SIGKILL. Then ``--tau2-resume`` runs on the same server. Per run it counts:

- finished: conversations whose last call (the agent's closing reply) the server had answered
  before the kill;
- window: of those, the ones answered less than ``--window`` seconds before the kill (their
  client may still have been scoring and writing: a kill there loses them, and cannot not);
  ``save_after_last_reply_s`` (last reply -> metrics.json on disk, watched every 5 ms) shows how
  long that takes;
- saved: scenario folders with a complete result (metrics.json) right after the kill;
- resumed: results the resume reported from disk ("K of N results resumed");
- rerun: conversations the resume talked through again (model requests it sent).

Expected: resumed == saved == finished - (those of the window still being written), and
resumed + rerun == tasks; "paid twice" = finished - resumed.

Usage:
    python bench/bench_kill_resume.py                     # 20 runs of each configuration
    python bench/bench_kill_resume.py --runs 3 --configs c4
    python bench/bench_kill_resume.py --baseline /work/main --configs c4   # the package at another tree
Writes bench/results/kill_resume.md and .json unless --no-write.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import platform
import random
import re
import statistics
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

from tests.e2e.kill_runs import start_pytest, talked  # noqa: E402
from tests.e2e.llm_scripts import (  # noqa: E402
    ScriptedModels,
    Tasks,
    customer_stopped,
    model_options,
    node,
    subprocess_env,
    task_of_agent_request,
)
from tests.support.fake_openai import FakeOpenAIServer, Reply  # noqa: E402

CONFIGS = {
    "c4": ["--tau2-concurrency", "4"],
    "n2c4": ["-p", "xdist", "-n", "2", "--tau2-concurrency", "4"],
}
RESUMED = re.compile(r"(\d+) of (\d+) results resumed")


class Closings:
    """The agent handler, noting when each task's closing reply goes out (its conversation's last
    call); with ``jitter``, each agent reply waits a further U(0, jitter) seconds, so that
    conversations of similar length finish far out of item order (as real models' latencies do)."""

    def __init__(self, models: ScriptedModels, latency: float, jitter: float, rng: random.Random) -> None:
        self.models = models
        self.latency = latency
        self.jitter = jitter
        self.rng = rng
        self.answered: dict[str, float] = {}
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Reply:
        reply = self.models.agent_handler(request)
        with self.lock:
            extra = self.rng.uniform(0, self.jitter) if self.jitter else 0.0
        reply = dataclasses.replace(reply, delay_s=reply.delay_s + extra)
        task = task_of_agent_request(request)
        if task is not None and customer_stopped(request):
            with self.lock:  # the server sleeps its latency and the reply's delay, then sends in one write
                self.answered.setdefault(task, time.monotonic() + self.latency + reply.delay_s)
        return reply


def one_run(config: str, tasks: list[str], args: argparse.Namespace, rng: random.Random, tmp: Path) -> dict[str, Any]:
    models = ScriptedModels(Tasks.load("retail"))
    env = subprocess_env(**({"PYTHONPATH": args.baseline} if args.baseline else {}))
    with FakeOpenAIServer(latency_s=args.latency) as server:
        closings = Closings(models, args.latency, args.jitter, random.Random(rng.random()))
        models.install(server)
        server.add_handler("agent", closings)
        command = [*(node(f"tau2_retail__{t}") for t in tasks), *model_options(server), *CONFIGS[config]]
        cwd = Path(args.baseline) if args.baseline else ROOT  # python -m pytest imports the package from its cwd
        run = start_pytest(command, tmp / "killed", env=env, cwd=cwd)
        on_disk: dict[str, float] = {}
        watching = threading.Event()

        def watch() -> None:  # when each result lands (metrics.json is written last)
            while not watching.is_set():
                for name in run.finished():
                    on_disk.setdefault(name.removeprefix("tau2_retail__"), time.monotonic())
                time.sleep(0.005)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        run.wait_for(lambda: len(server.requests) > 0, timeout=120)
        delay = rng.uniform(0, args.span)
        time.sleep(delay)
        killed_at = time.monotonic()
        run.kill_9()
        watching.set()
        watcher.join()
        with closings.lock:
            finished = {t for t, at in closings.answered.items() if at <= killed_at}
            window = {t for t in finished if killed_at - closings.answered[t] < args.window}
        saved = {name.removeprefix("tau2_retail__") for name in run.finished()}
        before = len(server.requests)
        again = start_pytest(command, tmp / "resumed", resume=run.results_dir, env=env, cwd=cwd)
        code, out, _err = again.output(timeout=600)
        rerun = talked(models, server.requests[before:])
    found = RESUMED.search(out)
    resumed = int(found.group(1)) if found else 0
    return {
        "config": config,
        "kill_after_first_request_s": round(delay, 3),
        "finished": len(finished),
        "window": len(window),
        "saved": len(saved),
        "resumed": resumed,
        "rerun": len(rerun),
        "paid_twice": len(finished & rerun),
        "paid_twice_outside_window": len((finished - window) & rerun),
        "finished_not_saved": sorted(finished - saved),
        "oldest_unsaved_s": round(max((killed_at - closings.answered[t] for t in finished - saved), default=0.0), 3),
        "save_after_last_reply_s": sorted(
            round(on_disk[t] - closings.answered[t], 3) for t in saved if t in on_disk and t in closings.answered
        ),
        "saved_not_finished": sorted(saved - finished),
        "resume_exit": code,
        "resume_ok": code == 0 and resumed + len(rerun) == len(tasks),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--configs", default="c4,n2c4")
    parser.add_argument("--tasks", type=int, default=12, help="retail tasks 1..N")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before every model reply")
    parser.add_argument(
        "--span", type=float, default=4.0, help="kill uniformly within this many s of the first request"
    )
    parser.add_argument(
        "--window", type=float, default=0.5, help="s before the kill counted as still scoring and writing"
    )
    parser.add_argument("--jitter", type=float, default=0.0, help="each agent reply waits a further U(0, J) s")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument(
        "--baseline", default=None, help="another checkout to measure (its package and scenarios; default: this tree)"
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "kill_resume"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    tasks = [str(i) for i in range(1, args.tasks + 1)]
    rng = random.Random(args.seed)
    rows: list[dict[str, Any]] = []
    for config in args.configs.split(","):
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="tau2-kill-") as tmp:
                row = one_run(config, tasks, args, rng, Path(tmp))
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for config in args.configs.split(","):
        mine = [r for r in rows if r["config"] == config]
        summary[config] = {
            "runs": len(mine),
            "finished_total": sum(r["finished"] for r in mine),
            "saved_total": sum(r["saved"] for r in mine),
            "resumed_total": sum(r["resumed"] for r in mine),
            "paid_twice_total": sum(r["paid_twice"] for r in mine),
            "paid_twice_outside_window_total": sum(r["paid_twice_outside_window"] for r in mine),
            "oldest_unsaved_s_max": max(r["oldest_unsaved_s"] for r in mine),
            "save_after_last_reply_s_max": max(max(r["save_after_last_reply_s"], default=0) for r in mine),
            "save_after_last_reply_s_median": statistics.median(
                [x for r in mine for x in r["save_after_last_reply_s"]] or [0]
            ),
            "window_total": sum(r["window"] for r in mine),
            "runs_where_resumed_equals_finished": sum(1 for r in mine if r["resumed"] == r["finished"]),
            "median_finished": statistics.median(r["finished"] for r in mine),
            "median_paid_twice": statistics.median(r["paid_twice"] for r in mine),
            "resumes_ok": sum(1 for r in mine if r["resume_ok"]),
        }
    document = {
        "when": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}",
        "package": args.baseline or str(ROOT),
        "tasks": len(tasks),
        "latency_s": args.latency,
        "jitter_s": args.jitter,
        "span_s": args.span,
        "window_s": args.window,
        "seed": args.seed,
        "summary": summary,
        "runs": rows,
    }
    print(json.dumps(summary, indent=2))
    if not args.no_write:
        Path(args.out + ".json").write_text(json.dumps(document, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
