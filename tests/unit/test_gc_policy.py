"""``freeze_collected``: the young generations collected, then everything alive frozen; once per
process. ``freeze_at_session_end``: one full collection, then a freeze, at the end of the outermost
session; once per process."""

from __future__ import annotations

import pytest

from pytest_tau2.plugin import gc_policy


def test_collects_then_freezes_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(gc_policy, "_frozen", False)
    monkeypatch.setattr(gc_policy.gc, "collect", lambda *a: calls.append(f"collect{a}") or 0)
    monkeypatch.setattr(gc_policy.gc, "freeze", lambda: calls.append("freeze"))
    assert gc_policy.freeze_collected() is True
    assert gc_policy.freeze_collected() is False  # a later session in the same process freezes nothing more
    assert calls == ["collect(1,)", "freeze"]


def test_session_end_freezes_once_outermost_only(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(gc_policy, "_frozen_at_end", False)
    monkeypatch.setattr(gc_policy, "_live_sessions", 0)
    monkeypatch.setattr(gc_policy.gc, "collect", lambda *a: calls.append(f"collect{a}") or 0)
    monkeypatch.setattr(gc_policy.gc, "freeze", lambda: calls.append("freeze"))
    gc_policy.session_configured()  # a test session ...
    gc_policy.session_configured()  # ... running another in its process (pytester in-process)
    assert gc_policy.freeze_at_session_end() is False  # the inner one: the outer session's objects are live
    assert calls == []
    assert gc_policy.freeze_at_session_end() is True
    assert calls == ["collect()", "freeze"]  # a full collection first: no garbage is frozen
    gc_policy.session_configured()
    assert gc_policy.freeze_at_session_end() is False  # once per process
    assert calls == ["collect()", "freeze"]


def test_a_session_without_scenarios_ends_without_a_collection(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26.3: a session that never had a scenario built nothing of the plugin's: no full GC."""
    calls: list[str] = []
    monkeypatch.setattr(gc_policy, "_frozen_at_end", False)
    monkeypatch.setattr(gc_policy, "_live_sessions", 0)
    monkeypatch.setattr(gc_policy.gc, "collect", lambda *a: calls.append(f"collect{a}") or 0)
    monkeypatch.setattr(gc_policy.gc, "freeze", lambda: calls.append("freeze"))
    gc_policy.session_configured()
    assert gc_policy.freeze_at_session_end(collect=False) is False
    assert calls == [] and gc_policy._live_sessions == 0
    gc_policy.session_configured()  # a later scenario session of the process still freezes once
    assert gc_policy.freeze_at_session_end() is True
    assert calls == ["collect()", "freeze"]
