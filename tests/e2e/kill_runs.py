"""Runs that are stopped from outside: a nested pytest started in its own process group, watched
while it runs, then killed (``kill -9``) or signalled (SIGTERM), and resumed.

Used by ``tests/e2e/test_faults_kills.py`` and ``bench/bench_kill_resume.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.llm_scripts import REPO_ROOT, ScriptedModels, subprocess_env, task_of_agent_request
from tests.support.fake_openai import FakeOpenAIServer, Reply, hang


@dataclass
class Started:
    """A nested pytest run in flight."""

    process: subprocess.Popen[str]
    results_dir: Path
    junit_path: Path
    tmp: Path

    def finished(self) -> set[str]:
        """Scenario folders that hold a complete result (metrics.json is written last)."""
        if not self.results_dir.is_dir():
            return set()
        return {p.name for p in self.results_dir.iterdir() if (p / "metrics.json").is_file() and "." not in p.name}

    def wait_for(self, condition: Callable[[], bool], timeout: float = 180.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            if self.process.poll() is not None:
                return condition()
            time.sleep(0.05)
        return False

    def children(self) -> list[int]:
        """Pids of the run's direct children (xdist workers), read from /proc."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:
                found.append(int(entry.name))
        return found

    def kill_9(self) -> None:
        """SIGKILL to the whole process group (the controller and its workers), as the OOM killer
        or a lost machine would end it."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)

    def output(self, timeout: float = 120.0) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout)
        (self.tmp / "stdout.txt").write_text(out, "utf-8")
        (self.tmp / "stderr.txt").write_text(err, "utf-8")
        return self.process.returncode, out, err


def start_pytest(
    args: Sequence[str],
    tmp: Path,
    *,
    resume: Path | None = None,
    env: dict[str, str] | None = None,
    cwd: Path = REPO_ROOT,
) -> Started:
    """``python -m pytest <args> -v`` into ``tmp/results`` (or ``--tau2-resume`` of a folder), in
    its own process group; stdout and stderr are collected."""
    tmp.mkdir(parents=True, exist_ok=True)
    results = resume or tmp / "results"
    junit = tmp / "junit.xml"
    target = [f"--tau2-resume={results}"] if resume is not None else ["--tau2-results-dir", str(results)]
    command = [sys.executable, "-m", "pytest", *args, "-v", "-p", "no:cacheprovider", "-p", "no:randomly",
               *target, "--junitxml", str(junit)]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=cwd,  # ``python -m pytest`` imports pytest_tau2 from here first
        env=env or subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return Started(process, results, junit, tmp)


class HeldAgent:
    """The scripted agent, except that the first reply of the ``held`` tasks hangs until released
    (their conversations stay in flight, and so do the items pytest waits for)."""

    def __init__(self, models: ScriptedModels, held: set[str], hold_s: float = 120.0) -> None:
        self.models = models
        self.held = set(held)
        self.hold_s = hold_s
        self.released = threading.Event()

    def __call__(self, request: dict[str, Any]) -> Reply:
        task = task_of_agent_request(request)
        if task in self.held and not self.released.is_set():
            return hang(self.hold_s)
        return self.models.agent_handler(request)

    def install(self, server: FakeOpenAIServer) -> None:
        self.models.install(server)
        server.add_handler("agent", self)  # the most recent route wins


def talked(models: ScriptedModels, requests: Sequence[dict[str, Any]]) -> set[str]:
    """The tasks whose conversations sent a model request (user or agent side)."""
    found = {models.tasks.task_of_user_request(r) or task_of_agent_request(r) for r in requests}
    return {task for task in found if task is not None}
