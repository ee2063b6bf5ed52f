"""``--tau2-shard I/N``: which scenarios one CI shard runs.

The selection is a pure function of the scenario names the run collected, so every shard of a
matrix (same project, same options) computes the same partition without talking to the others:

- the distinct scenario names are sorted and dealt round-robin: shard ``I`` takes the names at
  positions ``I-1, I-1+N, I-1+2N, ...``. Shard sizes differ by at most one scenario;
- all trials of one scenario (``<name>-t1`` .. ``<name>-tK``) share the scenario's name (the
  key the plugin gives), so they always land in the same shard (pass^k needs them together);
- items that are not scenarios (a project's ordinary tests) are dealt the same way by node id,
  so each runs in exactly one shard.

Adding or removing a scenario can move others to a neighbouring shard; that is fine because a
shard is only meaningful next to its siblings of the same run (``pytest-tau2 merge`` checks it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
_SHARD = re.compile(r"^\s*(?P<index>[0-9]+)\s*/\s*(?P<count>[0-9]+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int
    """1-based."""
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def takes(self, position: int) -> bool:
        """Whether the name at ``position`` (0-based, in sorted order) belongs to this shard."""
        return position % self.count == self.index - 1


def parse_shard(text: str) -> Shard:
    """``"2/3"`` -> ``Shard(2, 3)``; a ValueError saying what a shard looks like otherwise."""
    match = _SHARD.match(text)
    if match is None:
        raise ValueError(f"expects I/N (shard I of N, e.g. 1/4), got {text!r}")
    index, count = int(match["index"]), int(match["count"])
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"expects I/N with 1 <= I <= N, got {text!r}")
    return Shard(index, count)


def select(items: Sequence[T], key: Callable[[T], tuple[str, str]], shard: Shard) -> tuple[list[T], list[T]]:
    """Split ``items`` into (kept, dropped) for ``shard``, keeping their order.

    ``key(item)`` is ``(group, name)``: names are dealt round-robin within each group
    (``"scenario"`` and ``"other"``), and items with the same name stay together.
    """
    names: dict[str, set[str]] = {}
    for item in items:
        group, name = key(item)
        names.setdefault(group, set()).add(name)
    taken = {
        (group, name)
        for group, members in names.items()
        for position, name in enumerate(sorted(members))
        if shard.takes(position)
    }
    kept: list[T] = []
    dropped: list[T] = []
    for item in items:
        (kept if key(item) in taken else dropped).append(item)
    return kept, dropped
