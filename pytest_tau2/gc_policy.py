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
"""

from __future__ import annotations

import gc

__all__ = ["freeze_collected"]

_frozen = False


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
