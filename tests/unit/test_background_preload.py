"""The wire path's HTTP client imported on a thread from pytest_configure on (run/session.py), so the
part of its import outside the GIL overlaps collection; litellm's stays on the main thread."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pytest_tau2.run.session import start_background_preload
from pytest_tau2.settings import Settings

WIRE = json.dumps({"api_base": "http://127.0.0.1:9/v1", "api_key": "k"})


def test_a_wire_only_run_imports_its_http_client_on_a_thread() -> None:
    settings = Settings(agent_model="openai/a", agent_args=WIRE, user_model="openai/u", user_args=WIRE)
    thread = start_background_preload(settings)
    assert thread is not None and thread.name == "tau2-preload" and thread.daemon
    thread.join(timeout=30)
    assert not thread.is_alive() and "aiohttp" in sys.modules


def test_a_run_that_needs_litellm_or_calls_no_model_starts_no_thread() -> None:
    assert start_background_preload(Settings()) is None  # the offline default: no model
    litellm = Settings(agent_model="openai/a", agent_args=WIRE, llm_transport="litellm")
    assert start_background_preload(litellm) is None  # imported on the main thread, as before


PROBE = """
import json, os, sys, threading

def pytest_configure(config):
    with open(os.environ["PRELOAD_PROBE_OUT"], "w", encoding="utf-8") as fh:
        json.dump({"thread": "tau2-preload" in getattr(sys, "_tau2_threads_at_conftest", [])}, fh)
"""


def _started_before_conftests(tmp_path: Path, *args: str) -> dict[str, bool]:
    (tmp_path / "preload_probe.py").write_text(PROBE, "utf-8")
    conftest = "import sys, threading\nsys._tau2_threads_at_conftest = [t.name for t in threading.enumerate()]\n"
    (tmp_path / "conftest.py").write_text(conftest, "utf-8")  # the threads alive when the conftest loads
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n", "utf-8")
    out = tmp_path / "probe.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TAU2_"))}
    env.update(PYTHONPATH=str(tmp_path), PRELOAD_PROBE_OUT=str(out), LITELLM_LOCAL_MODEL_COST_MAP="True")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "preload_probe", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(out.read_text("utf-8"))


def test_a_model_on_the_command_line_starts_the_import_before_the_conftest_files(tmp_path: Path) -> None:
    assert _started_before_conftests(tmp_path, "--tau2-agent-model", "openai/a")["thread"]


def test_no_model_collect_only_or_an_xdist_controller_starts_nothing_early(tmp_path: Path) -> None:
    assert not _started_before_conftests(tmp_path)["thread"]  # a project that never names a model
    assert not _started_before_conftests(tmp_path, "--tau2-agent-model", "openai/a", "--collect-only")["thread"]
    assert not _started_before_conftests(tmp_path, "--tau2-user-model", "openai/u", "-n", "1")["thread"]
