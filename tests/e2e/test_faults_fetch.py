"""Fault matrix, ``pytest-tau2 data fetch``: what every file would meet ends the fetch once.

A destination that cannot be written (a file where the cache folder should be) failed each of
the 33 files after four attempts (120 s of back-off); a server whose name does not resolve did
the same. Now a local error fails at once, and a server that cannot be reached fails after one
file's retries, each with one line saying why. Nothing here leaves the machine: the refused
server is a closed loopback port, and the name that does not resolve is the resolver's own
error raised where urllib would raise it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.data import fetch as fetch_module
from pytest_tau2.data.fetch import fetch, files_for_domains
from tests.e2e.llm_scripts import REPO_ROOT, subprocess_env

RETAIL = files_for_domains(["retail"])


def _closed_port() -> int:
    with socket.socket() as probe:  # nothing listens on it once closed
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_destination_that_is_a_file_fails_at_once_in_one_line(tmp_path: Path) -> None:
    dest = tmp_path / "cache"
    dest.write_text("not a folder\n", "utf-8")
    command = [sys.executable, "-m", "pytest_tau2.data", "fetch", "--dest", str(dest), "--domain", "retail",
               "--base-url", f"http://127.0.0.1:{_closed_port()}/data"]  # fmt: skip
    start = time.monotonic()
    done = subprocess.run(command, cwd=REPO_ROOT, env=subprocess_env(), capture_output=True, text=True, timeout=60)
    took = time.monotonic() - start
    assert done.returncode == 1, done.stderr
    # Was 4 attempts with back-off for every file; the lines below are the exact check, this bounds a hang.
    assert took < 30, took
    lines = done.stderr.splitlines()
    stop = [line for line in lines if line.startswith("stopped after")]
    assert stop == [f"stopped after {RETAIL[0]}: cannot write into {dest}: Not a directory; 4 more file(s) not tried"]
    assert "after 4 attempts" not in done.stderr and "Traceback" not in done.stderr
    assert sum(1 for line in lines if line.startswith("[")) == 1  # one file tried, the rest not


def test_a_server_that_refuses_fails_after_one_files_retries(tmp_path: Path) -> None:
    lines: list[str] = []
    report = fetch(
        tmp_path / "d", f"http://127.0.0.1:{_closed_port()}/data", RETAIL, retries=3, progress=lines.append, backoff=0
    )
    first, *rest = report.results
    assert first.attempts == 4 and "cannot reach server" in (first.error or "")
    assert [r.attempts for r in rest] == [0] * len(rest) and all(r.status == "failed" for r in rest)
    assert report.stopped is not None and "cannot be reached (Connection refused)" in report.stopped
    assert lines[-1] == report.stopped and len(lines) == 2
    assert report.summary().endswith(f"{len(rest)} more file(s) not tried")


def test_a_name_that_does_not_resolve_fails_after_one_files_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def no_such_host(request: Any, timeout: float = 0) -> Any:
        calls.append(request.full_url)
        raise urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))

    monkeypatch.setattr(fetch_module.urllib.request, "urlopen", no_such_host)
    lines: list[str] = []
    report = fetch(tmp_path / "d", "https://mirror.example/data", RETAIL, retries=3, progress=lines.append, backoff=0)
    assert len(calls) == 4 and all(RETAIL[0] in url for url in calls)  # one file's retries, then no more
    assert report.stopped == (
        f"stopped after {RETAIL[0]}: the server mirror.example cannot be resolved (Name or service not known); "
        f"{len(RETAIL) - 1} more file(s) not tried"
    )
    assert report.count("failed") == len(RETAIL) and not report.ok


def test_a_failure_of_one_file_does_not_stop_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5xx (or a dropped connection) says nothing about the next file: it is still tried."""
    seen: list[str] = []

    def flaky(request: Any, timeout: float = 0) -> Any:
        seen.append(request.full_url)
        raise urllib.error.HTTPError(request.full_url, 503, "Service Unavailable", {}, None)  # type: ignore[arg-type]

    monkeypatch.setattr(fetch_module.urllib.request, "urlopen", flaky)
    report = fetch(tmp_path / "d", "https://mirror.example/data", RETAIL[:2], retries=1, backoff=0)
    assert report.stopped is None and len(seen) == 4  # two files, two attempts each
