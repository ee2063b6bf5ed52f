"""The --dist load scheduler under --tau2-concurrency: items go out longest expected first, dealt
to the workers in turn, when they outnumber the slots of all workers; otherwise as xdist would."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_tau2.plugin.xdist_scheduler import make_scheduler


class Node:
    """A worker as xdist's scheduler drives it."""

    def __init__(self, name: str) -> None:
        self.name, self.shutting_down = name, False
        self.sent: list[int] = []
        self.gateway = SimpleNamespace(id=name)

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _config(workers: int) -> Any:
    options = {"tx": [f"{workers}*popen"], "maxschedchunk": None}
    return SimpleNamespace(option=SimpleNamespace(dist="load"), getoption=options.get, getvalue=options.get)


def _scheduled(
    lengths: list[int], concurrency: int, workers: int = 2, ids: list[str] | None = None
) -> tuple[Any, list[Node]]:
    ids = ids or [f"test_scenarios.py::test_scenario[s{i}]" for i in range(len(lengths))]
    by_id = dict(zip(ids, lengths, strict=True))
    scheduler = make_scheduler(_config(workers), None, concurrency, lambda nodeid: by_id.get(nodeid, 0))
    nodes = [Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, ids)
    scheduler.schedule()
    return scheduler, nodes


def test_more_items_than_slots_go_out_longest_first_dealt_in_turn() -> None:
    lengths = [1, 9, 3, 8, 2, 7, 5, 6, 4, 0, 9, 1]  # 12 items, 2 workers x 2 slots: 5 queued each
    scheduler, (gw0, gw1) = _scheduled(lengths, concurrency=2)
    # snake order (gw0, gw1, gw1, gw0, gw0, ...) over the items longest first, equal ones in session order
    assert gw0.sent == [1, 5, 7, 2, 4] and [lengths[i] for i in gw0.sent] == [9, 7, 6, 3, 2]
    assert gw1.sent == [10, 3, 6, 8, 0] and [lengths[i] for i in gw1.sent] == [9, 8, 5, 4, 1]
    assert scheduler.pending == [11, 9]  # the shortest, for whichever worker reports first


def test_a_worker_that_reports_gets_the_longest_items_left() -> None:
    lengths = [1, 9, 3, 8, 2, 7, 5, 6, 4, 0, 9, 1]
    scheduler, (gw0, _) = _scheduled(lengths, concurrency=2)
    left = [lengths[i] for i in scheduler.pending]
    done = gw0.sent[0]
    scheduler.mark_test_complete(gw0, done)
    assert lengths[gw0.sent[-1]] == left[0]


def test_no_more_items_than_slots_go_out_as_xdist_sends_them() -> None:
    lengths = [1, 9, 3, 8, 2, 7]  # 6 items, 2 workers x 4 slots: all start at once anyway
    _, (gw0, gw1) = _scheduled(lengths, concurrency=4)
    assert gw0.sent == [0, 1, 4] and gw1.sent == [2, 3, 5]  # xdist's chunks of 2 in session order, then topped up


def test_longest_first_keeps_each_modules_tests_together() -> None:
    lengths = [0, 0, 5, 9, 1, 7]  # two plain tests of one module, then four scenarios of another
    ids = ["test_app.py::test_a", "test_app.py::test_b", *(f"test_scenarios.py::test_scenario[s{i}]" for i in range(4))]
    scheduler, (gw0, gw1) = _scheduled(lengths, concurrency=2, ids=ids)  # 6 items > 2 workers x 2 slots
    # order 0, 1 (test_app.py as collected), then 3, 5, 2, 4 (scenarios longest first), dealt in snake order
    assert gw0.sent == [0, 5, 2] and gw1.sent == [1, 3, 4] and scheduler.pending == []


def test_a_crashed_workers_items_go_back_longest_first() -> None:
    lengths = [1, 9, 3, 8, 2, 7, 5, 6, 4, 0, 9, 1]
    scheduler, (_, gw1) = _scheduled(lengths, concurrency=2)
    scheduler.remove_node(gw1)  # xdist re-queues its items (the first, running one, is reported as crashed)
    assert len(scheduler.pending) == 2 + 4  # the pool and gw1's items but its first
    assert [lengths[i] for i in scheduler.pending] == sorted((lengths[i] for i in scheduler.pending), reverse=True)


@pytest.mark.parametrize(("items", "loads"), [(4, 0), (5, 1)])
def test_the_scenarios_are_read_only_when_the_items_outnumber_the_slots(items: int, loads: int) -> None:
    """The controller reads the scenarios' lengths (a thread, ~0.1 s of CPU) only to deal more
    items than the workers' slots longest first; 4 items fit 2 workers x 2 slots."""
    ids = [f"test_scenarios.py::test_scenario[s{i}]" for i in range(items)]
    calls: list[int] = []
    scheduler = make_scheduler(_config(2), None, 2, lambda nodeid: 1, preload=lambda: calls.append(1))
    nodes = [Node(f"gw{i}") for i in range(2)]
    for node in nodes:
        scheduler.add_node(node)
    for node in nodes:
        scheduler.add_node_collection(node, ids)
    scheduler.schedule()
    assert len(calls) == loads
    assert sorted(nodes[0].sent + nodes[1].sent + scheduler.pending) == list(range(items))
