"""Does upstream's evaluator give our tau2 reward? Whole domains, exported and re-scored by tau2-bench.

For each domain: an offline run of its whole base split (oracle agent, scripted user,
``--tau2-trials`` trials), ``pytest-tau2 export``, then upstream's own code at the pin on the file
(``tests/support/upstream_check.py``): the loader, the leaderboard verifier's checks and the
evaluator re-scoring every trajectory. Retail's tasks with NL assertions are not re-scored
(upstream would call its LLM judge); banking_knowledge is evaluated with the run's retrieval
configuration (upstream's default would embed with OpenAI); everything else is compared reward
for reward. Then the
export is replayed back in (``--tau2-agent replay:FILE --tau2-user replay``) and
``upstream_differences.json`` counted. Writes ``<out>.json`` and ``<out>.md``.

Usage:  TAU2_UPSTREAM_PYTHON=/path/to/upstream/bin/python python bench/bench_upstream_roundtrip.py \
            [--domains airline telecom mock retail] [--trials 2] [--out bench/results/upstream_roundtrip]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_tau2.tau2_format import export_cli  # noqa: E402
from tests.e2e.llm_scripts import run_pytest, subprocess_env  # noqa: E402

CHECK = ROOT / "tests" / "support" / "upstream_check.py"
EXPLAINED = {
    "mock": " (upstream's own doing: a task's message_history messages get a fresh timestamp every time upstream "
    "loads its tasks, so those 2 tasks never hash equal, for upstream's own files too; mock is no leaderboard domain)"
}


def one_domain(domain: str, trials: int, python: str, tmp: Path) -> dict[str, Any]:
    started = time.perf_counter()
    run = run_pytest(["-k", f"tau2_{domain}", "--tau2-trials", str(trials)], tmp / "run", timeout=1800)
    ran_s = time.perf_counter() - started
    written, _ = export_cli.run(run.results_dir, tmp / "out")
    file = tmp / "out" / f"{domain}.json"
    started = time.perf_counter()
    done = subprocess.run([python, str(CHECK), str(file)], capture_output=True, text=True, env=subprocess_env(),
                          check=True, timeout=3600)  # fmt: skip
    upstream_s = time.perf_counter() - started
    [checked] = json.loads(done.stdout.strip().splitlines()[-1])
    sims = [s for s in checked["simulations"] if s["ours"] is not None]
    unequal = [s for s in sims if s["ours"] != s["upstream"]]
    replayed = run_pytest(
        ["-k", f"tau2_{domain}", f"--tau2-agent=replay:{file}", "--tau2-user", "replay", "--tau2-trials", str(trials)],
        tmp / "replay",
        timeout=1800,
    )
    differences = json.loads((replayed.results_dir / "upstream_differences.json").read_text("utf-8"))
    return {
        "domain": domain,
        "trials": trials,
        "files": [p.name for p in written],
        "upstream_format_ok": checked["format"]["ok"],
        "upstream_tasks_ok": checked["tasks"]["ok"],
        "upstream_tasks_error": checked["tasks"]["error"],
        "upstream_trials_ok": checked["trials"]["ok"],
        "simulations": len(checked["simulations"]) + len(checked["skipped"]),
        "compared": len(sims),
        "equal": len(sims) - len(unequal),
        "not_compared_llm_judge": len(checked["skipped"]),
        "rewards_0": sum(1 for s in sims if s["ours"] == 0.0),
        "unequal": unequal[:10],
        "replay_compared": differences["compared"],
        "replay_different": differences["different"],
        "run_s": round(ran_s, 1),
        "upstream_check_s": round(upstream_s, 1),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Upstream's evaluator on our exported runs (bench/bench_upstream_roundtrip.py)",
        "",
        "Offline runs (oracle agent, scripted user) of whole base splits, exported with `pytest-tau2 export`,",
        "checked by tau2-bench's own code at the pin (loader, leaderboard verifier, evaluator), then replayed",
        "back in with `--tau2-agent replay:FILE --tau2-user replay`. banking_knowledge is evaluated with the run's",
        "`retrieval_config` (`tau2 evaluate-trajs` would build it with OpenAI embeddings, a provider call).",
        "",
        "| domain | trials | simulations | upstream loads | verifier: tasks | verifier: trials | compared "
        "| equal rewards | reward 0.0 | not compared (LLM judge) | replay: compared | replay: different |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['domain']} | {r['trials']} | {r['simulations']} | {r['upstream_format_ok']} | "
            f"{r['upstream_tasks_ok']} | {r['upstream_trials_ok']} | {r['compared']} | {r['equal']} | "
            f"{r['rewards_0']} | {r['not_compared_llm_judge']} | {r['replay_compared']} | {r['replay_different']} |"
        )
    notes = [
        f"- {r['domain']}: verifier's task check: {r['upstream_tasks_error']}" + EXPLAINED.get(r["domain"], "")
        for r in rows
        if r["upstream_tasks_error"]
    ]
    notes += [
        f"- {r['domain']}: {r['not_compared_llm_judge']} simulations not re-scored by upstream: their tasks have NL "
        "assertions, which upstream grades with its LLM judge (no model provider is called here)"
        for r in rows
        if r["not_compared_llm_judge"]
    ]
    return "\n".join(lines + (["", *notes] if notes else [])) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--domains", nargs="+", default=["airline", "telecom", "retail", "banking_knowledge", "mock"])
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "upstream_roundtrip"))
    parser.add_argument("--from-json", action="store_true", help="rewrite <out>.md from <out>.json, run nothing")
    args = parser.parse_args()
    if args.from_json:
        rows = json.loads(Path(args.out + ".json").read_text("utf-8"))
        Path(args.out + ".md").write_text(markdown(rows), "utf-8")
        return
    python = os.environ.get("TAU2_UPSTREAM_PYTHON")
    if not python:
        raise SystemExit("set TAU2_UPSTREAM_PYTHON to an interpreter with tau2-bench installed")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for domain in args.domains:
            rows.append(one_domain(domain, args.trials, python, Path(tmp) / domain))
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "unequal"}))
    Path(args.out + ".json").write_text(json.dumps(rows, indent=2) + "\n", "utf-8")
    Path(args.out + ".md").write_text(markdown(rows), "utf-8")


if __name__ == "__main__":
    main()
