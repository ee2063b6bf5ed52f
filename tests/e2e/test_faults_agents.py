"""Fault matrix, agents' processes: an MCP agent that leaves a child behind is scored, and the child stopped.

The agent is tests/support/mcp_scripted_agent.py (the oracle over MCP) started by a shell command
that first puts a ``sleep 300`` in the background, as a helper, a shell job or an ``npx``/``uv``
shim does: the child holds the agent's stdout and stderr open after the agent exits. The runner
watches the process, not its pipes: the conversation is scored as soon as the agent is done, and
the agent's whole process group is stopped. See docs/faults.md ("Nothing runs away").
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_tau2.settings import Settings
from tests.e2e.conftest import scenario_or_skip
from tests.e2e.test_mcp_parity import _plans_file, _run, scripted_command

pytest.importorskip("mcp", reason="the MCP SDK is the optional 'mcp' extra (in the test extra)")

MENU = "restaurant__menu_question"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for good: only its parent has not read its status
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return True


@pytest.mark.parametrize("via", ["http", "stdio"])
def test_an_mcp_agent_that_leaves_a_child_is_scored_and_the_child_stopped(
    via: str, registry: Any, bot_settings: Settings, tmp_path: Path
) -> None:
    scenario = scenario_or_skip(registry, MENU, bot_settings)
    pidfile = tmp_path / "child.pid"
    command = f"sleep 300 & echo $! > {pidfile}; " + scripted_command(
        via, _plans_file(tmp_path, scenario, bot_settings)
    )
    # A reply timeout far under the child's 300 s: were the pipes watched, the scenario would end in
    # "the agent made no call within 20 s ... still running" instead of its score.
    settings = dataclasses.replace(bot_settings, agent="mcp:" + command, agent_timeout=20)
    outcome = _run(scenario_or_skip(registry, MENU, settings), settings)
    assert outcome.conversation.error is None, outcome.conversation.error
    assert outcome.conversation.stop_reason in ("exit", "transfer")
    assert outcome.is_successful is True
    child = int(pidfile.read_text().strip())
    for _ in range(50):  # stopped with the group: SIGTERM, reaped by init
        if not _alive(child):
            break
        time.sleep(0.1)
    alive = _alive(child)
    if alive:  # never leave it behind, even when the test fails
        os.kill(child, 9)
    assert not alive, f"the agent's child {child} is still running"
