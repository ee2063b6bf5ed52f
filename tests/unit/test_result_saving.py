"""report/saving.py and report/files.py under write faults: each failure named in one line, the
first one told once, what was written remembered (the item's report then writes nothing twice),
and run-level views written each on its own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from pytest_tau2.report import files, views
from pytest_tau2.report.run_record import RunMetrics
from pytest_tau2.report.saving import ResultWriter, SaveTicket


def _payload(folder: str, n: int = 1) -> dict[str, object]:
    return {"folder": folder, "metrics": {"scenario": folder, "n": n}, "files": {"transcript.json": "[]\n"}}


def test_a_file_that_cannot_be_written_is_named_with_its_reason(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "transcript.json").symlink_to("/dev/full")  # the kernel answers ENOSPC, as a full disk does
    with pytest.raises(files.ResultFileError) as raised:
        files.write_payload(tmp_path, _payload("s"))
    assert str(raised.value) == "s/transcript.json: No space left on device (errno 28)"
    assert raised.value.errno == 28 and not (folder / "metrics.json").exists()


def test_the_writer_tells_the_first_failure_once_and_remembers_what_it_wrote(tmp_path: Path) -> None:
    told: list[str] = []
    writer = ResultWriter(tmp_path, on_failure=told.append)
    ok = _payload("a")
    assert writer.save(ok) is None and writer.holds(ok)
    assert not writer.holds(_payload("a", n=2))  # another result for the same folder: not this one
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "transcript.json").symlink_to("/dev/full")
    assert writer.save(_payload("b")) == "b/transcript.json: No space left on device (errno 28)"
    assert writer.save(_payload("b")) is not None
    assert told == ["b/transcript.json: No space left on device (errno 28)"]  # once, the first
    assert len(writer.failures) == 2 and writer.saved_folders() == ["a"]
    assert writer.failures_to_tell() == writer.failures and writer.failures_to_tell() == []


def test_saves_from_many_threads_each_land_whole(tmp_path: Path) -> None:
    writer = ResultWriter(tmp_path)
    threads = [threading.Thread(target=writer.save, args=(_payload(f"s{i}"),)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(writer.saved_folders()) == sorted(f"s{i}" for i in range(16))
    assert all((tmp_path / f"s{i}" / "metrics.json").is_file() for i in range(16))


def test_a_ticket_is_answered_once_settled() -> None:
    ticket = SaveTicket()
    assert not ticket.wait(0) and not ticket.saved
    ticket.settle("disk full")
    assert ticket.wait(0) and not ticket.saved and ticket.error == "disk full"
    assert SaveTicket.settled(None).saved


def test_a_required_view_that_fails_keeps_no_other_view_from_being_written(tmp_path: Path) -> None:
    (tmp_path / "all_summary.txt").mkdir()  # its rename into place fails
    run = views.RunFiles(tmp_path, [], [], RunMetrics.of([], [], {}), "Success rate: 0/0\n")
    failed = views.write_views(run)
    assert [name for name, _ in failed] == ["all_summary.txt"] and views.VIEWS["all_summary.txt"].required
    assert isinstance(failed[0][1], IsADirectoryError)
    assert (tmp_path / "all_metrics.json").is_file() and (tmp_path / "report.html").is_file()


def test_submit_writes_on_the_writers_thread_and_answers_when_the_files_are_on_disk(tmp_path: Path) -> None:
    writer = ResultWriter(tmp_path)
    seen: list[str] = []
    original = files.write_payload

    def recording(results_dir: Path, payload: dict[str, object]) -> None:
        seen.append(threading.current_thread().name)
        original(results_dir, payload)

    files.write_payload = recording  # type: ignore[assignment]
    try:
        tickets = [writer.submit(_payload(f"s{i}")) for i in range(8)]
        assert writer.flush(timeout=10)
    finally:
        files.write_payload = original  # type: ignore[assignment]
    assert all(t.wait(0) and t.saved for t in tickets)
    assert set(seen) == {"tau2-result-writer"}  # not the caller's (the event loop's) thread
    assert all((tmp_path / f"s{i}" / "metrics.json").is_file() for i in range(8))
    assert sorted(writer.saved_folders()) == [f"s{i}" for i in range(8)]


def test_a_submitted_save_that_fails_answers_its_ticket_and_tells_the_failure_once(tmp_path: Path) -> None:
    told: list[str] = []
    writer = ResultWriter(tmp_path, on_failure=told.append)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "transcript.json").symlink_to("/dev/full")
    bad, good = writer.submit(_payload("b")), writer.submit(_payload("c"))
    assert bad.wait(10) and good.wait(10)
    assert bad.error == "b/transcript.json: No space left on device (errno 28)" and not bad.saved
    assert good.saved and told == [bad.error]


def test_a_payload_the_writer_cannot_handle_is_a_failed_save_not_a_dead_thread(tmp_path: Path) -> None:
    told: list[str] = []
    writer = ResultWriter(tmp_path, on_failure=told.append)
    broken = writer.submit({"folder": "x", "metrics": {}, "files": {"transcript.json": object()}})
    after = writer.submit(_payload("ok"))
    assert broken.wait(10) and after.wait(10)
    assert broken.error is not None and broken.error.startswith("x: ") and told == [broken.error]
    assert after.saved  # the thread lives on


def test_holds_waits_for_what_was_submitted(tmp_path: Path) -> None:
    writer = ResultWriter(tmp_path)
    payload = _payload("a")
    writer.submit(payload)
    assert writer.holds(payload) and writer.metrics_of("a") == payload["metrics"]


def test_submit_waits_for_room_when_the_disk_falls_behind(tmp_path: Path) -> None:
    """At most PENDING_SAVES results wait for the writer (each holds its files' texts): a submit
    beyond that waits until one is written, as the submitter waited for its own write before."""
    from pytest_tau2.report import saving

    writer = ResultWriter(tmp_path)
    disk = threading.Event()
    original = files.write_payload

    def slow(results_dir: Path, payload: dict[str, object]) -> None:
        disk.wait(10)
        original(results_dir, payload)

    files.write_payload = slow  # type: ignore[assignment]
    try:
        # one being written, PENDING_SAVES queued: none of these waits
        tickets = [writer.submit(_payload(f"s{i}")) for i in range(saving.PENDING_SAVES + 1)]
        late = threading.Thread(target=lambda: tickets.append(writer.submit(_payload("late"))))
        late.start()
        late.join(0.3)
        assert late.is_alive()  # no room: it waits for the disk
        disk.set()
        late.join(10)
        assert not late.is_alive() and writer.flush(10)
    finally:
        files.write_payload = original  # type: ignore[assignment]
        disk.set()
    assert all(t.saved for t in tickets) and (tmp_path / "late" / "metrics.json").is_file()


def test_what_to_tell_is_answered_while_a_write_is_on_the_disk(tmp_path: Path) -> None:
    """pytest's thread asks for new failures with every report it makes; a write in progress on the
    writer's thread (a slow disk) must not hold it up."""
    writer = ResultWriter(tmp_path)
    disk, writing = threading.Event(), threading.Event()
    original = files.write_payload

    def slow(results_dir: Path, payload: dict[str, object]) -> None:
        writing.set()
        disk.wait(10)
        original(results_dir, payload)

    files.write_payload = slow  # type: ignore[assignment]
    try:
        ticket = writer.submit(_payload("s0"))
        assert writing.wait(10)
        asked: list[list[str]] = []
        reader = threading.Thread(target=lambda: asked.append(writer.failures_to_tell()))
        reader.start()
        reader.join(2)
        assert not reader.is_alive() and asked == [[]]  # answered with the write still in progress
        assert not ticket.wait(0)
        disk.set()
        assert writer.flush(10) and ticket.saved
    finally:
        files.write_payload = original  # type: ignore[assignment]
        disk.set()
