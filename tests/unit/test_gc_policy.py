"""``freeze_collected``: the young generations collected, then everything alive frozen; once per process."""

from __future__ import annotations

import pytest

from pytest_tau2 import gc_policy


def test_collects_then_freezes_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(gc_policy, "_frozen", False)
    monkeypatch.setattr(gc_policy.gc, "collect", lambda *a: calls.append(f"collect{a}") or 0)
    monkeypatch.setattr(gc_policy.gc, "freeze", lambda: calls.append("freeze"))
    assert gc_policy.freeze_collected() is True
    assert gc_policy.freeze_collected() is False  # a later session in the same process freezes nothing more
    assert calls == ["collect(1,)", "freeze"]
