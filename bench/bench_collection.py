"""Collection time of the 2,285 telecom items (``--tau2-telecom-tasks full --collect-only -q``),
ours side by side with another commit.

Both trees are ``git archive`` checkouts (``--ours``, default HEAD, and ``--baseline``) in a
temporary folder; with ``--without C1,C2`` the baseline is ours with those commits' changes
reversed, which isolates them from other work committed in between. Each tree gets the
``pytest_tau2.egg-info`` that ``pip install -e .`` leaves in a clone: pytest finds the plugin's
distribution through it and marks the whole ``pytest_tau2`` package for assertion rewriting, as
it does in this repository and in CI (``python -m pytest`` from the clone puts the clone on
``sys.path``). Runs alternate between the trees; medians of ``--runs``.

Two byte-code states, because they cost very differently:

- ``cold``: ``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__`` in the tree (this machine's
  environment sets the variable): every imported module of the tree is compiled, and every
  module pytest rewrites is parsed, rewritten and compiled, in every run.
- ``warm``: byte-code written and reused (CI's second and later pytest processes, a laptop):
  ``PYTHONPYCACHEPREFIX`` points at a folder per tree, filled by one unmeasured run first, so
  neither the tree nor site-packages is written to.

Per run: the process wall time; pytest's own ``collected in`` figure (session start to the end
of the terminal summary, which includes other plugins' summary hooks); ``collect`` (session
start to the end of ``pytest_collection_finish``); the pytest_tau2 modules imported and how many
of them pytest rewrote; and a digest of every item's node id and marker names, which must be
equal for both trees (same items, ids and markers).

Usage:
    python bench/bench_collection.py (--baseline <commit> | --without <commit>,...) [--ours HEAD] [--runs 7]
        [--modes cold,warm] [--pytest-args="-p no:hypothesispytest"] [--out bench/results/collection]
Needs TAU2_DATA_DIR (defaults to ../shared/tau2-data when it exists).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--tau2-telecom-tasks", "full", "--collect-only", "-q", "-p", "no:cacheprovider"]

# Loaded with -p into the measured pytest process; writes its figures to $BENCH_COLLECTION_OUT.
PROBE = """
import hashlib, json, os, sys, time
import pytest
_T = {}

@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    _T["sessionstart"] = time.time()

@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    _T["collection_finish"] = time.time()
    digest = hashlib.sha1()
    for item in session.items:
        digest.update(item.nodeid.encode())
        digest.update(",".join(sorted(m.name for m in item.iter_markers())).encode() + b"\\n")
    _T["items"] = len(session.items)
    _T["digest"] = digest.hexdigest()[:12]

def pytest_unconfigure(config):
    from _pytest.assertion.rewrite import AssertionRewritingHook
    ours = [m for n, m in list(sys.modules.items()) if n == "pytest_tau2" or n.startswith("pytest_tau2.")]
    _T["modules"] = len(ours)
    _T["rewritten"] = sum(isinstance(getattr(m.__spec__, "loader", None), AssertionRewritingHook) for m in ours)
    with open(os.environ["BENCH_COLLECTION_OUT"], "w") as out:
        json.dump(_T, out)
"""


def checkout(rev: str, into: Path) -> Path:
    """``git archive`` of ``rev`` into ``into``, plus the egg-info an editable install leaves."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    egg = into / "pytest_tau2.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: pytest-tau2\nVersion: 0.1.0\n")
    (egg / "entry_points.txt").write_text("[pytest11]\ntau2 = pytest_tau2.plugin\n")
    sources = sorted(str(p.relative_to(into)) for p in (into / "pytest_tau2").rglob("*.py"))
    (egg / "SOURCES.txt").write_text("\n".join(sources) + "\n")
    (egg / "top_level.txt").write_text("pytest_tau2\n")
    return into


def reverse(tree: Path, commits: list[str]) -> None:
    """Undo ``commits`` (newest first) in ``tree``: each one's diff applied in reverse."""
    for commit in reversed(commits):
        diff = subprocess.run(["git", "-C", str(ROOT), "diff", f"{commit}^", commit], check=True, capture_output=True)
        subprocess.run(["patch", "-R", "-p1", "-s", "-d", str(tree)], input=diff.stdout, check=True)


def clear_bytecode(tree: Path) -> None:
    for cache in tree.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)


def run_once(tree: Path, mode: str, probe_dir: Path, prefix: Path, extra: list[str]) -> dict[str, Any]:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPATH=str(probe_dir))
    env.pop("PYTHONPYCACHEPREFIX", None)
    if mode == "cold":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        clear_bytecode(tree)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(prefix)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "probe.json"
        env["BENCH_COLLECTION_OUT"] = str(out)
        cmd = [sys.executable, "-m", "pytest", "-p", "bench_collection_probe", *ARGS, *extra]
        start = time.time()
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        wall = time.time() - start
        if done.returncode != 0 or not out.exists():
            raise SystemExit(
                f"{tree}: {shlex.join(cmd)} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )
        probe = json.loads(out.read_text())
    last = (done.stdout.strip().splitlines() or [""])[-1]
    found = re.search(r"in ([0-9.]+)s", last)
    return {
        "wall": round(wall, 3),
        "collected_in": float(found.group(1)) if found else None,
        "collect": round(probe["collection_finish"] - probe["sessionstart"], 3),
        "to_sessionstart": round(probe["sessionstart"] - start, 3),
        "items": probe["items"],
        "digest": probe["digest"],
        "modules": probe["modules"],
        "rewritten": probe["rewritten"],
        "line": last,
    }


def hypothesis_cache() -> int | None:
    """Rewritten byte-code files of hypothesis cached in site-packages (None: not installed).

    Its pytest plugin imports hypothesis in every terminal summary; pytest rewrites the whole
    package (74 modules), so without this cache each run here pays ~0.8 s for it.
    """
    folder = Path(sysconfig.get_paths()["purelib"]) / "hypothesis"
    return len(list(folder.rglob("*-pytest-*.pyc"))) if folder.is_dir() else None


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("wall", "collected_in", "collect", "to_sessionstart")
    row: dict[str, Any] = {k: round(statistics.median(r[k] for r in runs), 3) for k in keys}
    row["wall_range"] = [min(r["wall"] for r in runs), max(r["wall"] for r in runs)]
    for k in ("items", "digest", "modules", "rewritten"):
        row[k] = sorted({r[k] for r in runs})
    return row


def to_markdown(result: dict[str, Any]) -> str:
    lines = [
        "| state | tree | wall (s) | pytest `collected in` (s) | collect phase (s) | start to session (s) "
        "| pytest_tau2 modules (rewritten) | items, digest |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for mode, trees in result["medians"].items():
        for name, row in trees.items():
            label = f"{name} ({result['revs'][name]})"
            lines.append(
                f"| {mode} | {label} | {row['wall']} | {row['collected_in']} | {row['collect']} "
                f"| {row['to_sessionstart']} | {row['modules']} ({row['rewritten']}) "
                f"| {row['items']} {row['digest']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="commit to compare with (e.g. the one before a change)")
    parser.add_argument("--without", help="baseline = ours without these commits (comma-separated, oldest first)")
    parser.add_argument("--ours", default="HEAD")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--modes", default="cold,warm")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, e.g. '-p no:hypothesispytest'")
    parser.add_argument("--out", type=Path, help="write <out>.json and <out>.md")
    opts = parser.parse_args()
    if bool(opts.baseline) == bool(opts.without):
        parser.error("give exactly one of --baseline and --without")
    without = [c for c in (opts.without or "").split(",") if c]
    if not os.environ.get("TAU2_DATA_DIR") and (ROOT.parent / "shared" / "tau2-data").is_dir():
        os.environ["TAU2_DATA_DIR"] = str(ROOT.parent / "shared" / "tau2-data")
    extra = shlex.split(opts.pytest_args)
    modes = [m for m in opts.modes.split(",") if m]

    def short(rev: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True)
        return done.stdout.strip()

    revs = {"ours": short(opts.ours)}
    revs["baseline"] = (
        short(opts.baseline) if opts.baseline else f"{revs['ours']} without {','.join(map(short, without))}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-collection-") as tmp:
        base = Path(tmp)
        probe_dir = base / "probe"
        probe_dir.mkdir()
        (probe_dir / "bench_collection_probe.py").write_text(PROBE)
        trees = {
            "ours": checkout(opts.ours, base / "ours"),
            "baseline": checkout(opts.baseline or opts.ours, base / "baseline"),
        }
        reverse(trees["baseline"], without)
        prefixes = {name: base / f"pycache-{name}" for name in trees}
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {m: {name: [] for name in trees} for m in modes}
        for mode in modes:
            if mode == "warm":
                for name, tree in trees.items():  # fill the byte-code cache once, unmeasured
                    run_once(tree, mode, probe_dir, prefixes[name], extra)
            for i in range(opts.runs):
                order = list(trees) if i % 2 == 0 else list(reversed(trees))
                for name in order:
                    row = run_once(trees[name], mode, probe_dir, prefixes[name], extra)
                    runs[mode][name].append(row)
                    print(mode, name, json.dumps({k: v for k, v in row.items() if k != "line"}), flush=True)
    result = {
        "command": shlex.join(["python", "-m", "pytest", *ARGS, *extra]),
        "revs": revs,
        "runs": opts.runs,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "hypothesis_rewrites_cached": hypothesis_cache(),
        "medians": {mode: {name: summarize(r) for name, r in trees_runs.items()} for mode, trees_runs in runs.items()},
        "raw": runs,
    }
    print(to_markdown(result))
    if opts.out:
        opts.out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
        opts.out.with_suffix(".md").write_text(to_markdown(result) + "\n")


if __name__ == "__main__":
    main()
