"""Drives VS Code's own pytest adapter (microsoft/vscode-python, ``python_files/vscode_pytest``) as the
Python extension does, and reads what it sends.

The adapter ships only inside the editor's extension (no package index carries it), and the tests
run offline, so it is never copied here: ``TAU2_VSCODE_PYTHON_FILES`` names a checkout's
``python_files`` folder (``git clone https://github.com/microsoft/vscode-python`` and point it at
``vscode-python/python_files``); the tests that need it are skipped, saying so, when it is unset.

What the extension does (src/client/testing/testController/pytest/): it makes a named pipe (on
Linux and macOS a FIFO), puts the adapter's folder on ``PYTHONPATH`` and the pipe's path in
``TEST_RUN_PIPE``; discovery is ``python -m pytest -p vscode_pytest --collect-only ARGS``;
a run is ``python python_files/vscode_pytest/run_pytest_script.py --rootdir=CWD ARGS`` with the
discovered ids to run, one a line, in the file named by ``RUN_TEST_IDS_PIPE``. The adapter writes
JSON-RPC messages (``content-length`` headers, then the JSON) to the pipe, from every process
that loads it (xdist's workers too).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_VAR = "TAU2_VSCODE_PYTHON_FILES"


def python_files() -> Path | None:
    """The adapter's folder named by the environment, or None (not given, or not the adapter)."""
    given = os.environ.get(ENV_VAR, "")
    if not given:
        return None
    path = Path(given).expanduser().resolve()
    return path if (path / "vscode_pytest" / "__init__.py").is_file() else None


@dataclass
class AdapterRun:
    """One pytest process run by the adapter: the messages it sent and the process's result."""

    messages: list[dict[str, Any]]
    process: subprocess.CompletedProcess[str]
    ids_sent: list[str] = field(default_factory=list)

    def discovered(self) -> dict[str, dict[str, Any]]:
        """Discovered test id -> its test node (``runID``, ``lineno``, ``path``)."""
        found: dict[str, dict[str, Any]] = {}
        for message in self.messages:
            tests = message.get("tests")
            if isinstance(tests, dict):
                _walk(tests, found, Path(message.get("idBase") or ""))
        return found

    def results(self) -> list[tuple[str, str]]:
        """Every (test id, outcome) the adapter sent, in the order it sent them."""
        sent: list[tuple[str, str]] = []
        for message in self.messages:
            result = message.get("result")
            if isinstance(result, dict):
                sent.extend((test_id, outcome["outcome"]) for test_id, outcome in result.items())
        return sent

    def errors(self) -> list[str]:
        return [str(e) for message in self.messages for e in (message.get("error") or [])]


def _walk(node: dict[str, Any], found: dict[str, dict[str, Any]], base: Path) -> None:
    """Collect the test nodes; ids of the compact payload (version 2) are relative to its
    ``idBase`` (the extension joins them back, as here)."""
    if node.get("type_") == "test":
        full = {key: _absolute(node[key], base) if key in ("id_", "runID") else node[key] for key in node}
        found[full["id_"]] = full
    for child in node.get("children") or []:
        if isinstance(child, dict):
            _walk(child, found, base)


def _absolute(test_id: str, base: Path) -> str:
    path, separator, selector = test_id.partition("::")
    return f"{base / path}{separator}{selector}" if not Path(path).is_absolute() else test_id


def discover(python_files: Path, cwd: Path, args: list[str], env: dict[str, str]) -> AdapterRun:
    command = [sys.executable, "-m", "pytest", "-p", "vscode_pytest", "--collect-only", *args]
    return _run(python_files, cwd, command, env, None)


def execute(python_files: Path, cwd: Path, args: list[str], ids: list[str], env: dict[str, str]) -> AdapterRun:
    script = python_files / "vscode_pytest" / "run_pytest_script.py"
    command = [sys.executable, str(script), f"--rootdir={cwd}", *args]
    return _run(python_files, cwd, command, env, ids)


def _run(python_files: Path, cwd: Path, command: list[str], env: dict[str, str], ids: list[str] | None) -> AdapterRun:
    with tempfile.TemporaryDirectory(prefix="vscode-pipe-") as folder:
        pipe = Path(folder, "results")
        os.mkfifo(pipe)
        env = dict(env)
        env["PYTHONPATH"] = os.pathsep.join([str(python_files), *filter(None, [env.get("PYTHONPATH")])])
        env["TEST_RUN_PIPE"] = str(pipe)
        if ids is not None:
            ids_file = Path(folder, "ids.txt")
            ids_file.write_text("\n".join(ids) + "\n", "utf-8")
            env["RUN_TEST_IDS_PIPE"] = str(ids_file)
        reader = _PipeReader(pipe)
        try:
            process = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        finally:
            messages = reader.finish()
    return AdapterRun(messages, process, list(ids or []))


class _PipeReader:
    """Reads the FIFO on a thread while the processes write; held open for writing too, so one
    writer closing it (a worker ending) is no end of the stream."""

    def __init__(self, pipe: Path) -> None:
        self.read_fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
        self.keep_fd = os.open(pipe, os.O_WRONLY)
        self.data = bytearray()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            ready, _, _ = select.select([self.read_fd], [], [], 0.1)
            if ready:
                chunk = os.read(self.read_fd, 65536)
                self.data.extend(chunk)
            elif self.stop.is_set():
                return

    def finish(self) -> list[dict[str, Any]]:
        self.stop.set()
        self.thread.join(timeout=30)
        os.close(self.keep_fd)
        os.close(self.read_fd)
        return _messages(bytes(self.data))


def _messages(data: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC params of each ``content-length``-framed message."""
    found: list[dict[str, Any]] = []
    rest = data
    while rest:
        head, sep, rest = rest.partition(b"\r\n\r\n")
        if not sep:
            break
        headers = dict(line.split(b":", 1) for line in head.split(b"\r\n") if b":" in line)
        length = int(headers[b"content-length"].strip())
        # content-length counts characters of the JSON text; every byte here is ASCII (json.dumps escapes)
        body, rest = rest[:length], rest[length:]
        found.append(json.loads(body)["params"])
    return found
