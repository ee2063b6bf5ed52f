"""Fault matrix, disks: run-level files that cannot be written, a results disk that is full.

No real disk is filled: the kernel's ``/dev/full`` answers every write with ENOSPC ("No space
left on device"), so a result file that is a link to it (made before the run, in the scenario's
folder), or ``--junitxml /dev/full``, fails exactly as a full disk does, deterministically. A
directory where a run-level file should go fails its rename (EISDIR). Models are served by the
loopback fake OpenAI server, through the wire path and litellm. See docs/runs.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.fault_matrix import assert_counts_agree, junit_outcome
from tests.e2e.kill_runs import talked
from tests.e2e.llm_scripts import (
    REPO_ROOT,
    ScriptedModels,
    Tasks,
    model_options,
    node,
    run_pytest,
    subprocess_env,
)
from tests.support.fake_openai import FakeOpenAIServer

ENOSPC = "No space left on device (errno 28)"
RESTAURANT = ["restaurant__menu_question", "restaurant__pizza_pepperoni"]  # offline: no model, no tau2 data


def _offline(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tau2-scenarios", ",".join(RESTAURANT),
               f"--tau2-results-dir={tmp / 'results'}", *extra]  # fmt: skip
    return subprocess.run(command, cwd=REPO_ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=240)


def test_an_unwritable_junit_file_loses_no_other_file_and_says_so_in_one_line(tmp_path: Path) -> None:
    done = _offline(tmp_path, "--junitxml", "/dev/full")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]  # the run did not deliver its JUnit file
    results = tmp_path / "results"
    for name in ("all_metrics.json", "all_summary.txt", "report.html"):
        assert (results / name).is_file(), name
    assert len(json.loads((results / "all_metrics.json").read_text("utf-8"))["scenarios"]) == 2
    lines = [line for line in out.splitlines() if "could not write" in line]
    assert lines == [f"error: could not write the JUnit file /dev/full: OSError: {ENOSPC}"], out[-3000:]
    assert "Traceback" not in out and "INTERNALERROR" not in out
    assert "generated xml file" not in out
    assert "2 passed" in done.stdout


def test_an_unwritable_summary_is_still_printed_and_the_other_files_written(tmp_path: Path) -> None:
    (tmp_path / "results" / "all_summary.txt").mkdir(parents=True)  # its rename into place fails
    done = _offline(tmp_path, "--junitxml", str(tmp_path / "junit.xml"))
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-3000:]
    assert "Success rate: 2/2 (100.0%) of 2 scenarios" in done.stdout  # the terminal has it all the same
    assert "error: could not write all_summary.txt: IsADirectoryError: Is a directory (errno 21)" in out
    results = tmp_path / "results"
    assert (results / "all_metrics.json").is_file() and (results / "report.html").is_file()
    assert (tmp_path / "junit.xml").is_file()
    assert "Traceback" not in out


TASKS = [str(i) for i in range(1, 17)]  # with model latency: the sweep outlasts the stop's way to every worker
FULL_AT = "3"  # its transcript is where the disk is full


@pytest.mark.parametrize(
    ("transport", "extra"),
    [
        ("auto", []),
        ("litellm", ["--tau2-concurrency", "3"]),
        ("auto", ["-p", "xdist", "-n", "2", "--tau2-concurrency", "2"]),
    ],
    ids=["wire", "litellm-c3", "wire-n2-c2"],
)
def test_a_full_results_disk_is_reported_at_once_never_passed_and_stops_the_run(
    tmp_path: Path, transport: str, extra: list[str]
) -> None:
    models = ScriptedModels(Tasks.load("retail"))
    full = tmp_path / "run" / "results" / f"tau2_retail__{FULL_AT}"
    full.mkdir(parents=True)
    (full / "transcript.json").symlink_to("/dev/full")  # writing it fails as on a full disk
    with FakeOpenAIServer(latency_s=0.05) as server:
        models.install(server)
        nodes = [node(f"tau2_retail__{t}") for t in TASKS]
        run = run_pytest([*nodes, *model_options(server), "--tau2-llm-transport", transport, *extra], tmp_path / "run")
        spoken = talked(models, server.requests)
    debug = run.stdout[-4000:] + run.stderr[-2000:]
    failed = f"tau2_retail__{FULL_AT}"
    line = f"{failed}/transcript.json: {ENOSPC}"
    # At once: on the terminal before the run's end (the summary section comes last).
    assert f"tau2: could not save a result: {line}" in run.stdout.split("tau2 summary")[0], debug
    # Never a pass: an error saying its result could not be saved; no metrics.json, so a resume runs
    # it. (Under --tau2-concurrency its conversation may have ended before pytest reached its item,
    # and the run then stops before it does: not this run's result, as any conversation finished ahead.)
    assert not (full / "metrics.json").exists()
    document = json.loads((run.results_dir / "all_metrics.json").read_text("utf-8"))
    lost = {e["scenario"]: e["reason"] for e in document["errors_without_result"]}
    reported = {m["scenario"] for m in document["scenarios"]}
    assert failed not in reported
    if not extra:  # one conversation at a time: pytest was in its item
        assert junit_outcome(run, failed) == "error", debug
    if failed in lost:
        assert f"the result could not be saved: {line}" in lost[failed], lost
        assert junit_outcome(run, failed) == "error", debug
    for name in reported:  # every result counted is on disk, complete
        assert (run.results_dir / name / "metrics.json").is_file(), name
    # The run stopped starting conversations: the rest of the sweep was never talked to.
    assert len(spoken) < len(TASKS), spoken
    assert "stopping the run: a result could not be saved" in run.stdout, debug
    summary = (run.results_dir / "all_summary.txt").read_text("utf-8")
    assert summary.startswith(f"Interrupted after {len(reported) + len(lost)} of {len(TASKS)} scenarios: "), summary
    assert_counts_agree(run, reported | set(lost))
    assert run.returncode != 0
    assert "Traceback" not in run.stdout.split("tau2 summary")[-1]


def test_a_disk_full_before_the_run_starts_is_a_usage_error(tmp_path: Path) -> None:
    """Nothing has been spent yet: a results folder that cannot take a file is refused at once."""
    done = _offline(tmp_path / "x", "--tau2-results-dir=/dev/full/results")
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "/dev/full/results" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("transport", "extra"), [("auto", []), ("litellm", ["--tau2-concurrency", "2"])], ids=["wire", "litellm-c2"]
)
def test_a_cassette_that_cannot_be_written_keeps_the_result_and_errs_on_the_recording(
    tmp_path: Path, transport: str, extra: list[str]
) -> None:
    models = ScriptedModels(Tasks.load("retail"))
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cassette folder should be\n", "utf-8")
    cassettes = blocker / "cassettes"  # every write under it fails: ENOTDIR
    tasks = ["1", "2"]
    with FakeOpenAIServer() as server:
        models.install(server)
        nodes = [node(f"tau2_retail__{t}") for t in tasks]
        args = [*nodes, *model_options(server), "--tau2-llm-transport", transport, *extra,
                "--tau2-record-mode", "once", f"--tau2-cassette-dir={cassettes}"]  # fmt: skip
        run = run_pytest(args, tmp_path / "run")
    debug = run.stdout[-4000:] + run.stderr[-2000:]
    assert run.returncode == 1, debug  # the recordings are lost: an error, not a silent pass
    for task in tasks:
        name = f"tau2_retail__{task}"
        metrics = run.metrics(name)  # the result is saved and scored
        assert metrics["is_successful"] is True, debug
        error = metrics["recording"]["error"]
        assert error == f"cassette {cassettes / 'tau2_retail' / (name + '.yaml')}: Not a directory (errno 20)", error
        assert f"{name}: the recording could not be saved: {error} (the result is saved and scored)" in run.stdout
        assert run.outcome_line(name).startswith("PASSED"), run.outcome_line(name)  # its verdict stands
        assert "error" in [e.tag for e in run.testcase(name)]  # the teardown's error: the recording's
    document = json.loads((run.results_dir / "all_metrics.json").read_text("utf-8"))
    assert sorted(m["scenario"] for m in document["scenarios"]) == [f"tau2_retail__{t}" for t in tasks]
    assert document["errors_without_result"] == []
    assert_counts_agree(run, [f"tau2_retail__{t}" for t in tasks])
