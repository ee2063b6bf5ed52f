"""The wire path's HTTP client imported on a thread from pytest_configure on (run/session.py), so the
part of its import outside the GIL overlaps collection; litellm's stays on the main thread."""

from __future__ import annotations

import json
import sys

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
