"""Pytest fixtures around :mod:`tests.support.fake_openai`.

Register with ``pytest_plugins = ["tests.support.fixtures"]`` in a conftest.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAIServer]:
    """A started loopback OpenAI-compatible server, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture(params=["auto", "litellm"], ids=["wire", "litellm"])
def llm_transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once per LLM transport: ``auto`` (the OpenAI wire path for ``openai/...`` models)
    and ``litellm`` (every call through litellm); see docs/speed.md."""
    monkeypatch.setenv("TAU2_LLM_TRANSPORT", request.param)
    return str(request.param)
