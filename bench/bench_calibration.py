"""Calibration of ``pytest-tau2 compare`` (docs/statistics.md): does it find a real difference,
and does it stay quiet when there is none?

1. **Real runs** (``sh bench/calibration/run_flawed.sh DIR`` first): the offline oracle over tau2
   retail, 114 tasks x 4 trials, with a seeded share of its trials played by the do-nothing agent
   (bench/calibration/flawed_agent.py): A = 10% flawed (seed 1), B = 30% (seed 2), C = 10% (seed 3).
   ``compare A B`` must say "A better", ``compare A C`` "no detectable difference".
2. **100 seeded repetitions** of each comparison on synthesized runs, through the same code path
   (``report.compare_runs.compare`` on result records): per trial, flawed with probability RATE
   (``random.Random(f"{rep}:{run}")``), a flawed trial fails unless the task is one the
   do-nothing agent passes (``pytest_tau2/report/null_passes.json``), an unflawed trial passes
   (the oracle passes every retail task). Counted: the share of "A better" (power) and of
   anything but "no detectable difference" (false positives), with 4 trials (the permutation
   test) and with 1 (McNemar's exact test).

    python bench/bench_calibration.py [--runs DIR] [--repetitions 100]

Writes bench/results/calibration.json and calibration.md.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from pytest_tau2.report.compare import compare_outcomes
from pytest_tau2.report.compare_cli import load_side
from pytest_tau2.report.compare_runs import RunSide, compare
from pytest_tau2.report.record import ScenarioRecord
from pytest_tau2.report.uncertainty import headline_outcomes
from pytest_tau2.stats import wilson

REPO = Path(__file__).resolve().parents[1]
TASKS = 114


def null_passes() -> set[str]:
    table = json.loads((REPO / "pytest_tau2" / "report" / "null_passes.json").read_text("utf-8"))
    return set(table["six-signal"]["tau2_retail"]["passed"])


def synthetic(rate: float, seed: str, trials: int, free: set[str]) -> RunSide:
    rng = random.Random(seed)
    records = []
    for t in range(TASKS):
        name = f"tau2_retail__{t}"
        for k in range(1, trials + 1):
            ok = rng.random() >= rate or name in free
            records.append(
                ScenarioRecord.read(
                    {
                        "scenario": name,
                        "domain": "tau2_retail",
                        "trial": k,
                        "trials": trials,
                        "is_successful": ok,
                        "success_signals": ["db_state_match", "clean_exit"],
                    }
                )
            )
    return RunSide(seed, records)


def repetitions(n: int, trials: int, free: set[str]) -> dict[str, Any]:
    counts = {"a_better_10_vs_30": 0, "a_better_10_vs_20": 0, "a_better_10_vs_15": 0, "false_positive_10_vs_10": 0}
    p_null = []
    for rep in range(n):
        a = synthetic(0.1, f"{rep}:A", trials, free)
        for key, rate in (("a_better_10_vs_30", 0.3), ("a_better_10_vs_20", 0.2), ("a_better_10_vs_15", 0.15)):
            if compare(a, synthetic(rate, f"{rep}:B{rate}", trials, free)).verdict == "A better":
                counts[key] += 1
        same = compare(a, synthetic(0.1, f"{rep}:C", trials, free))
        p_null.append(same.run.primary.p_value)
        if same.verdict != "no detectable difference":
            counts["false_positive_10_vs_10"] += 1
    test = "McNemar exact" if trials == 1 else "paired permutation over tasks"
    return {
        "repetitions": n,
        "trials": trials,
        "tasks": TASKS,
        "test": test,
        **counts,
        "median_p_10_vs_10": sorted(p_null)[len(p_null) // 2],
    }


def null_rate(n: int, trials: int, free: set[str]) -> dict[str, Any]:
    """The false-positive rate over ``n`` repetitions, measured on the verdict's own metric only:
    ``compare_outcomes`` on the success rate, the function ``compare`` calls for the verdict line
    (pass^k and the rest are not computed, so a thousand repetitions take a minute)."""
    positives = 0
    for rep in range(n):
        a, c = synthetic(0.1, f"{rep}:A", trials, free), synthetic(0.1, f"{rep}:C", trials, free)
        result = compare_outcomes("success rate", headline_outcomes(a.records), headline_outcomes(c.records))
        positives += result.verdict != "no detectable difference"
    interval = wilson(positives, n)
    assert interval is not None
    return {
        "repetitions": n,
        "trials": trials,
        "false_positives": positives,
        "rate": positives / n,
        "rate_interval_95": [interval.low, interval.high],
    }


def real(runs: Path) -> dict[str, Any]:
    a, b, c = (load_side(runs / name) for name in ("a-flaw10-seed1", "b-flaw30-seed2", "c-flaw10-seed3"))
    out = {}
    for key, (x, y) in {"A_vs_B": (a, b), "A_vs_C": (a, c)}.items():
        result = compare(x, y, power=(0.8, 0.05))
        out[key] = {"verdict": result.verdict, "lines": result.lines()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=Path, default=Path("/tmp/tau2-calibration"))
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument(
        "--part", choices=("all", "real", "synthetic", "null"), default="all", help="redo only one part"
    )
    args = parser.parse_args()
    out = REPO / "bench" / "results"
    saved = out / "calibration.json"
    results: dict[str, Any] = json.loads(saved.read_text("utf-8")) if saved.is_file() else {}
    if args.part in ("all", "real"):
        results["real_runs"] = real(args.runs) if (args.runs / "a-flaw10-seed1").is_dir() else None
    if args.part in ("all", "synthetic"):
        start = time.perf_counter()
        free = null_passes()
        results["synthetic"] = [repetitions(args.repetitions, trials, free) for trials in (4, 1)]
        results["seconds"] = round(time.perf_counter() - start, 1)
    if args.part in ("all", "null"):
        free = null_passes()
        results["null_1000"] = [null_rate(1000, trials, free) for trials in (4, 1)]
    (out / "calibration.json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    lines = [
        "# Calibration of the paired comparison",
        "",
        "`sh bench/calibration/run_flawed.sh /tmp/tau2-calibration`, then",
        "",
        "`python bench/bench_calibration.py`",
        "",
    ]
    if results.get("real_runs"):
        lines += [
            "## Real runs (offline oracle, tau2 retail, 114 tasks x 4 trials, a seeded share of trials "
            "played by the do-nothing agent)",
            "",
        ]
        for key, value in results["real_runs"].items():
            lines += [f"### {key.replace('_', ' ')}: {value['verdict']}", "", "```", *value["lines"], "```", ""]
    lines += [
        "## 100 seeded repetitions on synthesized runs (same compare code path)",
        "",
        "| trials | test | power 10% vs 30% | power 10% vs 20% | power 10% vs 15% | false positives 10% vs 10% |",
        "|---|---|---|---|---|---|",
    ]
    for row in results.get("synthetic", []):
        n = row["repetitions"]
        cells = [row["a_better_10_vs_30"], row["a_better_10_vs_20"], row["a_better_10_vs_15"]]
        cells.append(row["false_positive_10_vs_10"])
        lines.append(f"| {row['trials']} | {row['test']} | " + " | ".join(f"{c}/{n}" for c in cells) + " |")
    lines += ["", f"alpha 0.05; the repetitions took {results.get('seconds')} s."]
    if results.get("null_1000"):
        lines += [
            "",
            "## The false-positive rate over 1,000 repetitions (the verdict's metric only)",
            "",
            "| trials | false positives | rate | 95% Wilson interval of the rate |",
            "|---|---|---|---|",
        ]
        for row in results["null_1000"]:
            low, high = row["rate_interval_95"]
            lines.append(
                f"| {row['trials']} | {row['false_positives']}/{row['repetitions']} | "
                f"{100 * row['rate']:.1f}% | {100 * low:.1f}% to {100 * high:.1f}% |"
            )
    (out / "calibration.md").write_text("\n".join(lines) + "\n", "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
