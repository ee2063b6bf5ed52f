"""What installing pytest-tau2 costs a project that has no scenarios (issue 26.3).

Runs ``python -m pytest -q -p no:cacheprovider`` on a one-test project in a temporary folder,
``--rounds`` times with the plugin and as many times with ``-p no:tau2``, interleaved, and
prints the median CPU time (user + system of the child) of each and their difference. Every
other installed plugin loads in both runs, so the difference is the plugin's own cost.

    python bench/bench_plugin_overhead.py --rounds 10
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_of(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as tmp:
        # Bytecode cached as an installed package has it (in a folder of its own: the checkout
        # stays clean), whatever PYTHONDONTWRITEBYTECODE says here: else every run compiles.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n", "utf-8")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py"]
        cpu_of(base, project, env)  # warm the file system cache and the bytecode of both
        with_plugin, without = [], []
        for _ in range(rounds):
            with_plugin.append(cpu_of(base, project, env))
            without.append(cpu_of([*base, "-p", "no:tau2"], project, env))
        left = sorted(p.name for p in project.iterdir())
    a, b = statistics.median(with_plugin), statistics.median(without)
    print(f"rounds: {rounds}")
    print(f"with pytest-tau2:  median CPU {a:.3f} s")
    print(f"with -p no:tau2:   median CPU {b:.3f} s")
    print(f"plugin's cost:     {a - b:+.3f} s (median); fastest runs: {min(with_plugin):.3f} vs {min(without):.3f} s")
    print(f"left in the project: {left}")


if __name__ == "__main__":
    main()
