"""What the package keeps out of the cyclic garbage collector's reach, and when.

A scenario session builds objects that live until it ends: one item, one generated class and
one parsed task per scenario (2,285 of each for ``--tau2-telecom-tasks full``, about 170,000
container objects). Every full collection scans all of them again: pytest runs five at the end
of the session (it looks for unraisable exceptions) and the interpreter more at exit, which took
about 1 s after collecting the 2,285 telecom items, longer than the collection itself
(bench/results/collection.md). ``gc.freeze`` moves every object alive at that moment to a
generation no collection scans; the objects stay alive and are still freed by reference
counting, only cycles among them are never collected.

The parsed tau2 DBs are frozen the same way when first read (``tau2_common.tasks.cached_db``).
At the very end of a session everything still alive is frozen once more (``freeze_at_session_end``).
"""

from __future__ import annotations

import gc

__all__ = ["freeze_at_session_end", "freeze_collected", "session_configured"]

_frozen = False
_frozen_at_end = False
_live_sessions = 0


def freeze_collected() -> bool:
    """Collect the young generations, then freeze everything alive; once per process.

    Called when a session has collected scenario items (selected or not); True if it froze now. The young
    collection frees what collection just dropped (and runs its finalizers, so pytest still
    reports an unraisable exception from them) for ~0.2 ms; a full one would cost ~90 ms at
    this point and find only a few dozen more unreachable objects (65 after collecting the 2,285
    telecom items, measured), which are frozen with the rest instead. Once per process because
    a process that runs several sessions in turn (pytest's ``pytester`` in-process runs) would
    otherwise freeze each finished session's cycles for good: the first freeze is bounded.
    """
    global _frozen
    if _frozen:
        return False
    _frozen = True
    gc.collect(1)
    gc.freeze()
    return True


def session_configured() -> None:
    """A session of this process began (pytest_configure); :func:`freeze_at_session_end` pairs with it."""
    global _live_sessions
    _live_sessions += 1


def freeze_at_session_end(*, collect: bool = True) -> bool:
    """At a session's end (its last pytest_unconfigure): one full collection, then freeze what is alive.

    ``collect=False`` (a session that never had a scenario) only ends the session's count: such a
    session built nothing of the plugin's, and pays nothing for it.

    pytest then runs five full collections looking for unraisable exceptions, and the
    interpreter's exit one more. The collection here finds the same garbage and runs its
    finalizers while pytest's unraisable hook still listens; after the freeze those later passes
    scan only what is created after it. An xdist controller, which collects no scenario and so
    never froze, spent 0.19 s from the end of its terminal summary to its exit after a 114-scenario
    sweep, 0.04 s with this (bench/results/llm_speed.md). True if it froze now.

    Skipped while another session of the process is live (pytest's ``pytester`` in-process runs
    inside a test session: the outer session's objects are not ours to freeze) and done once per
    process, so a process that runs sessions in turn freezes a bounded amount.
    """
    global _live_sessions, _frozen_at_end
    _live_sessions = max(0, _live_sessions - 1)
    if not collect or _live_sessions or _frozen_at_end:
        return False
    _frozen_at_end = True
    gc.collect()
    gc.freeze()
    return True
