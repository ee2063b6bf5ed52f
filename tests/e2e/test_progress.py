"""The live progress line (plugin/progress.py) in real runs against the loopback model server.

On a terminal (a pseudo-terminal here) the line is drawn at the end of pytest's current line and
erased before pytest writes: what the terminal finally shows is pytest's own output, unchanged.
Where stdout is a pipe nothing is added, unless CI is set (or --tau2-progress-interval asks),
and then the same text comes as plain lines of their own.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.llm_scripts import REPO_ROOT, ScriptedModels, Tasks, model_options, node, subprocess_env
from tests.support.fake_openai import FakeOpenAIServer

TASKS = ("0", "1", "2", "3", "4", "5")
PROGRESS = re.compile(r"tau2: \d+/6 done, \d+ in flight \| \d+ passed[^|\x08]* \| \$ unpriced \| [\d.]+ calls/s")


def _args(server: FakeOpenAIServer, tmp: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        *(node(f"tau2_retail__{t}") for t in TASKS),
        *model_options(server),
        "--tau2-concurrency",
        "2",
        "-p",
        "no:cacheprovider",
        f"--tau2-results-dir={tmp / 'results'}",
        *extra,
    ]


def _serve(server: FakeOpenAIServer) -> None:
    ScriptedModels(Tasks.load("retail")).install(server)


def run_in_terminal(args: list[str], env: dict[str, str]) -> bytes:
    """The bytes a terminal receives from ``args`` run on a pseudo-terminal."""
    main, secondary = pty.openpty()
    process = subprocess.Popen(args, cwd=REPO_ROOT, env=env, stdin=secondary, stdout=secondary, stderr=secondary)
    os.close(secondary)
    received = bytearray()
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal (EIO on Linux)
            break
        if not chunk:
            break
        received += chunk
    process.wait(timeout=240)
    os.close(main)
    return bytes(received)


def screen(raw: str) -> list[str]:
    """What a terminal shows after ``raw``: backspaces move left, text overwrites, colours dropped."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", raw).replace("\r\n", "\n")
    lines: list[list[str]] = [[]]
    column = 0
    for char in text:
        line = lines[-1]
        if char == "\n":
            lines.append([])
            column = 0
        elif char == "\r":
            column = 0
        elif char == "\b":
            column = max(0, column - 1)
        else:
            line.extend(" " * (column - len(line) + 1)) if column >= len(line) else None
            line[column] = char
            column += 1
    return ["".join(line).rstrip() for line in lines]


def _body(lines: list[str]) -> list[str]:
    """The lines from the first scenario's to pytest's own summary line, addresses and times left out."""
    start = next(i for i, line in enumerate(lines) if line.startswith("scenarios/"))
    # prompt tokens (and so the totals' token counts): the fake server numbers tool-call ids per
    # server, in the order calls arrive
    volatile = r"127\.0\.0\.1:\d+|/tmp/\S+|in [\d.]+s|\d+ prompt|\d+ tokens"
    return [re.sub(volatile, "_", line) for line in lines[start:]]


@pytest.mark.parametrize("verbose", [[], ["-v"]], ids=["dots", "verbose"])
def test_on_a_terminal_one_line_updates_in_place_and_leaves_pytest_output_as_it_was(
    tmp_path: Path, verbose: list[str]
) -> None:
    env = subprocess_env(COLUMNS="160", TERM="dumb")
    env.pop("CI", None)
    with FakeOpenAIServer(latency_s=0.05) as server:
        _serve(server)
        raw = run_in_terminal(_args(server, tmp_path, *verbose), env).decode("utf-8", "replace")
    drawn = PROGRESS.findall(raw)
    assert len(drawn) >= 2, raw[-3000:]  # redrawn as the sweep went on
    shown = screen(raw)
    assert not any("tau2: " in line and " done, " in line for line in shown), "\n".join(shown)  # erased at the end
    assert any(re.search(r"\b6 passed\b", line) for line in shown), "\n".join(shown)
    if verbose:  # line for line what the same run shows without the progress line
        with FakeOpenAIServer(latency_s=0.05) as server:
            _serve(server)
            args = _args(server, tmp_path / "without", *verbose, "--tau2-progress-interval", "0")
            reference = screen(run_in_terminal(args, env).decode("utf-8", "replace"))
        assert PROGRESS.search(raw) and _body(shown) == _body(reference)
        assert len([line for line in shown if re.search(r"\] PASSED +\[ *\d+%\]$", line)]) == 6, shown
    else:
        assert "scenarios/test_scenarios.py ......" in "\n".join(shown), "\n".join(shown)
        assert any(re.search(r"^scenarios/test_scenarios\.py \.{6} +\[100%\]$", line) for line in shown), shown


def test_quiet_or_a_pipe_shows_no_progress_and_ci_shows_plain_lines(tmp_path: Path) -> None:
    env = subprocess_env()
    env.pop("CI", None)
    with FakeOpenAIServer(latency_s=0.05) as server:
        _serve(server)
        quiet = run_in_terminal(_args(server, tmp_path / "q", "-q"), env).decode("utf-8", "replace")
        piped = subprocess.run(_args(server, tmp_path / "p"), cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        ci = subprocess.run(
            _args(server, tmp_path / "ci", "--tau2-progress-interval", "0.3"),
            cwd=REPO_ROOT,
            env={**env, "CI": "true"},
            capture_output=True,
            text=True,
        )
    assert "6 passed" in quiet and "tau2: " not in quiet.replace("tau2: agent=", "")
    assert piped.returncode == 0 and not PROGRESS.search(piped.stdout), piped.stdout
    assert ci.returncode == 0, ci.stdout
    lines = [line for line in ci.stdout.splitlines() if PROGRESS.search(line)]
    ends = re.compile(r" \| (ETA \S+|\S+ elapsed)$")
    assert lines and all(PROGRESS.fullmatch(ends.sub("", line)) for line in lines), ci.stdout
    assert "\b" not in ci.stdout
    # each on a line of its own: without them, pytest's line of dots is whole
    without = re.sub(r"\n?tau2: \d+/6 done[^\n]*\n", "", ci.stdout)
    assert re.search(r"^scenarios/test_scenarios\.py \.{6} +\[100%\]$", without, re.MULTILINE), ci.stdout
