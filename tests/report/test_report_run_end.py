"""The end of every run writes report.html; a report that cannot be written never fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCENARIO = "restaurant__menu_question"  # in-repo domain: no tau2 data needed


def _run(results: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tau2-results-dir={results}",
               "--tau2-scenarios", SCENARIO]  # fmt: skip
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_a_run_writes_its_report(tmp_path: Path) -> None:
    done = _run(tmp_path / "out")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    html = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert SCENARIO in html and "tau2 report: out" in html
    assert "warning: could not write" not in done.stdout


def test_a_report_that_cannot_be_written_is_a_warning_line(tmp_path: Path) -> None:
    blocked = tmp_path / "out" / "report.html"
    blocked.mkdir(parents=True)  # a folder where the file should go: the rename fails
    done = _run(tmp_path / "out")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "warning: could not write report.html: IsADirectoryError" in done.stdout
    assert (tmp_path / "out" / "all_summary.txt").is_file()
    assert blocked.is_dir() and not list(blocked.iterdir())


def test_the_report_a_run_writes_from_memory_is_the_one_its_folder_gives(tmp_path: Path) -> None:
    """The run's end builds report.html from the documents it holds (report/html/loader.py
    ``run_of``), not by reading back what it wrote; ``pytest-tau2 report`` reads the folder: the
    two pages are the same, byte for byte (several trials, as the index's trial marks depend on it)."""
    from pytest_tau2.report.html import write_report

    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAU2_", "PYTEST_"))}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    out = tmp_path / "out"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--tau2-results-dir={out}",
               "--tau2-scenarios", f"{SCENARIO},restaurant__pizza_pepperoni", "--tau2-trials", "2"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    again = write_report([out], out / "again.html")
    written = (out / "report.html").read_text("utf-8")
    assert "restaurant__pizza_pepperoni" in written and "-t2" in written
    assert written == again.read_text("utf-8")
