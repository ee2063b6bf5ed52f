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
