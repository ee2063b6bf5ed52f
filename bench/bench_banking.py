"""Offline speed of banking_knowledge and tau2_mock: the sweep of their tasks (oracle agent,
scripted user) at ``-n 1`` and ``-n 2``, and the BM25 index build (once per process).

Usage:  python bench/bench_banking.py [--repeats 3] [--out bench/results/banking]
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_offline import ROOT, machine, median_run

sys.path.insert(0, str(ROOT))


def bm25_build(repeats: int) -> dict[str, object]:
    from rank_bm25 import BM25Okapi

    from pytest_tau2.domains.tau2_banking_knowledge import retrieval

    folder = Path(os.environ["TAU2_DATA_DIR"]) / "tau2" / "domains" / "banking_knowledge" / "documents"
    start = time.perf_counter()
    docs = retrieval.documents(folder)
    parse = time.perf_counter() - start
    builds, queries = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        index = BM25Okapi([doc.content.lower().split() for doc in docs])
        builds.append(time.perf_counter() - start)
        start = time.perf_counter()
        index.get_scores("how do i dispute a debit card charge".split())
        queries.append(time.perf_counter() - start)
    return {
        "documents": len(docs),
        "parse_s": round(parse, 3),
        "build_s_median": round(statistics.median(builds), 3),
        "build_s_all": [round(b, 3) for b in builds],
        "query_ms_median": round(1000 * statistics.median(queries), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "banking"))
    args = parser.parse_args()
    shared = ROOT.parent / "shared" / "tau2-data"
    os.environ.setdefault("TAU2_DATA_DIR", str(shared))
    rows = {
        "banking -n 1": median_run(["-k", "tau2_banking_knowledge", "-n", "0"], args.repeats),
        "banking -n 2": median_run(["-k", "tau2_banking_knowledge", "-n", "2"], args.repeats),
        "mock -n 1": median_run(["-k", "tau2_mock", "-m", "not tau2_gold_incomplete", "-n", "0"], args.repeats),
    }
    bm25 = bm25_build(max(5, args.repeats))
    out = Path(args.out)
    document = {"machine": machine(), "sweeps": rows, "bm25": bm25, "command": "python bench/bench_banking.py"}
    out.with_suffix(".json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    lines = [
        "# banking_knowledge and tau2_mock, offline",
        "",
        f"`python bench/bench_banking.py --repeats {args.repeats}`; {document['machine']}. Medians of "
        f"{args.repeats} fresh `python -m pytest` runs (oracle agent, scripted user, no model); CPU is the "
        "whole process tree's.",
        "",
        "| run | wall s | CPU s | peak RSS MB | result |",
        "|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['wall_s_median']} | {row['cpu_s_median']} | {row['peak_rss_mb_median']} | "
                     f"{row['result']} |")  # fmt: skip
    lines += [
        "",
        f"BM25 index of the {bm25['documents']} documents (`rank_bm25.BM25Okapi`, built once per process): "
        f"{bm25['build_s_median']} s to build (median of {len(bm25['build_s_all'])}), {bm25['parse_s']} s to "
        f"read the documents, {bm25['query_ms_median']} ms per query.",
        "",
    ]
    out.with_suffix(".md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
