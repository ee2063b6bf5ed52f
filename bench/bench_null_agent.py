"""Which shipped tau2 tasks a do-nothing agent passes: ``--tau2-agent null`` over retail, airline
and telecom (base), with the six-signal verdict and with ``--tau2-verdict tau2-reward``; writes
``pytest_tau2/report/null_passes.json`` (read by the report and ``pytest-tau2 compare``) and
``bench/results/null_agent.md``.

    TAU2_DATA_DIR=... python bench/bench_null_agent.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOMAINS = ("tau2_retail", "tau2_airline", "tau2_telecom")
VERDICTS = ("six-signal", "tau2-reward")


def run(domain: str, verdict: str, out: Path) -> dict[str, object]:
    folder = out / f"{domain}-{verdict}"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--no-header", "-p", "no:randomly",
         str(REPO / "scenarios"), "--rootdir", str(REPO), "-k", domain, "--tau2-agent", "null",
         "--tau2-verdict", verdict, "--tau2-results-dir", str(folder)],
        check=False, capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    metrics = json.loads((folder / "all_metrics.json").read_text("utf-8"))
    passed = sorted(
        (m["scenario"] for m in metrics["scenarios"] if m.get("is_successful") is True),
        key=lambda name: int(name.rsplit("__", 1)[1]) if name.rsplit("__", 1)[1].isdigit() else 0,
    )
    return {"tasks": len(metrics["scenarios"]), "passed": passed}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("/tmp/null-agent-runs"))
    args = parser.parse_args()
    table: dict[str, dict[str, object]] = {v: {} for v in VERDICTS}
    for verdict in VERDICTS:
        for domain in DOMAINS:
            table[verdict][domain] = run(domain, verdict, args.out)
            print(verdict, domain, len(table[verdict][domain]["passed"]), "of", table[verdict][domain]["tasks"])
    (REPO / "pytest_tau2" / "report" / "null_passes.json").write_text(json.dumps(table, indent=1) + "\n", "utf-8")
    lines = ["# What a do-nothing agent passes (`--tau2-agent null`, offline scripted user)", "",
             "`python bench/bench_null_agent.py` (tau2 data at the pin; base telecom task set).", "",
             "The offline scripted user performs the user-side steps of the gold plan (telecom's phone fixes) "
             "whatever the agent says: most telecom passes below are the user fixing the phone alone; an LLM "
             "user would need to be told.", "",
             "| verdict | domain | tasks | passed | share |", "|---|---|---|---|---|"]  # fmt: skip
    for verdict in VERDICTS:
        for domain in DOMAINS:
            row = table[verdict][domain]
            n, p = int(row["tasks"]), len(row["passed"])  # type: ignore[arg-type]
            lines.append(f"| {verdict} | {domain} | {n} | {p} | {100 * p / n:.1f}% |")
    lines += ["", "Tasks passed:", ""]
    for verdict in VERDICTS:
        for domain in DOMAINS:
            names = ", ".join(str(t).rsplit("__", 1)[1] for t in table[verdict][domain]["passed"])  # type: ignore[union-attr]
            lines.append(f"- {verdict}, {domain}: {names or 'none'}")
    (REPO / "bench" / "results" / "null_agent.md").write_text("\n".join(lines) + "\n", "utf-8")


if __name__ == "__main__":
    main()
