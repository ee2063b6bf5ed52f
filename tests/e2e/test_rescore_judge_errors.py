"""``pytest-tau2 rescore`` with a judge that cannot grade, on the model path (issue 38 point 3).

An oracle run of two retail tasks with NL assertions (no model) is re-scored by a judge on the
loopback OpenAI-compatible server (real HTTP through litellm):

- a judge that answers 401, and one at a port where nothing listens: the re-score stops at the
  first trial, exits 2 as a pytest run does, names the judge and the cause, and writes no folder;
- a judge that answers but cannot be read (not fatal, as in a pytest run): every trial is
  re-scored, the count line says how many are infrastructure errors, and the exit code is 1.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import REPO_ROOT, SECRET, subprocess_env
from tests.support.fake_openai import FakeOpenAIServer, error, text
from tests.support.tau2_data import has_data, skip_reason

TASKS = ["tau2_retail__36", "tau2_retail__62"]  # two NL assertions each

if not has_data("retail"):
    pytest.skip(skip_reason("retail"), allow_module_level=True)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("saved") / "run"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--tau2-results-dir={results}",
               "--tau2-scenarios", ",".join(TASKS)]  # fmt: skip
    done = subprocess.run(
        command, cwd=REPO_ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:]
    return results


def _rescore(saved: Path, into: Path, api_base: str, *more: str) -> subprocess.CompletedProcess[str]:
    judge = [
        "--tau2-judge-model",
        "openai/judge",
        "--tau2-judge-args",
        json.dumps({"api_base": api_base, "api_key": SECRET}),
    ]
    command = [sys.executable, "-m", "pytest_tau2.cli", "rescore", str(saved), "--into", str(into), *judge,
               "--tau2-llm-retries", "0", *more]  # fmt: skip
    return subprocess.run(
        command, cwd=REPO_ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=240, check=False
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_judge_that_refuses_the_key_stops_the_rescore_with_rc_2_naming_it(saved: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("judge", error(401, "Incorrect API key provided"))
        done = _rescore(saved, tmp_path / "new", server.base_url, "--tau2-concurrency", "1")
        calls = len(server.requests)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the judge openai/judge cannot be reached" in done.stderr, done.stderr
    assert "AuthenticationError" in done.stderr and SECRET not in done.stderr + done.stdout
    assert calls == 1  # one trial at a time: stopped at the first, the second never judged
    assert not (tmp_path / "new").exists()
    assert "re-scored" not in done.stdout


def test_a_judge_where_nothing_listens_stops_the_rescore_with_rc_2_naming_it(saved: Path, tmp_path: Path) -> None:
    done = _rescore(saved, tmp_path / "new", f"http://127.0.0.1:{_free_port()}/v1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the judge openai/judge cannot be reached" in done.stderr, done.stderr
    assert "connection refused" in done.stderr.lower()
    assert not (tmp_path / "new").exists()


def test_a_judge_that_cannot_be_read_is_counted_and_the_exit_code_says_so(saved: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.add_handler("judge", text("I would rather not say."))
        done = _rescore(saved, tmp_path / "new", server.base_url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "re-scored 2 results: 0 scored, 2 infrastructure errors (2 of them new in this re-score)" in done.stdout
    assert "0 errors" not in done.stdout
    assert "2 infrastructure errors in this re-score; first: tau2_retail__36:" in done.stderr
    assert (tmp_path / "new" / "all_metrics.json").is_file()
