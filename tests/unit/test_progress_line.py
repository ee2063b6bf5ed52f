"""The live progress line's text and when it is shown (plugin/progress.py)."""

from __future__ import annotations

import pytest

from pytest_tau2.plugin.progress import CI_INTERVAL_S, REDRAW_S, fitted, mode_of, progress_text
from pytest_tau2.settings import Settings


def test_the_text_says_done_in_flight_pass_rate_cost_rate_and_eta() -> None:
    text = progress_text(done=40, total=114, in_flight=12, passed=35, cost=0.421, calls=246, elapsed=20.0)
    assert text == "tau2: 40/114 done, 12 in flight | 35 passed (88%) | $0.4210 | 12.3 calls/s | ETA 37s"
    start = progress_text(done=0, total=114, in_flight=8, passed=0, cost=None, calls=0, elapsed=0.0)
    assert start == "tau2: 0/114 done, 8 in flight | 0 passed | $ unpriced | 0.0 calls/s"
    end = progress_text(done=114, total=114, in_flight=0, passed=100, cost=None, calls=1230, elapsed=3725.0)
    assert end.endswith("| 0.3 calls/s | 1h02m elapsed")


@pytest.mark.parametrize(
    ("interval", "tty", "quiet", "environ", "expected"),
    [
        (None, True, False, {}, ("live", REDRAW_S)),
        (None, True, True, {}, (None, 0.0)),  # -q: nothing
        (None, False, False, {}, (None, 0.0)),  # a pipe: nothing
        (None, False, False, {"CI": "true"}, ("lines", CI_INTERVAL_S)),
        (None, True, False, {"CI": "1"}, ("lines", CI_INTERVAL_S)),  # CI with a terminal: plain lines
        (None, False, True, {"CI": "true"}, (None, 0.0)),
        (None, False, False, {"CI": "false"}, (None, 0.0)),
        (10.0, False, True, {}, ("lines", 10.0)),  # asked for: even under -q
        (0.0, True, False, {"CI": "true"}, (None, 0.0)),  # 0: off
    ],
)
def test_when_the_line_is_shown(
    interval: float | None, tty: bool, quiet: bool, environ: dict[str, str], expected: tuple[str | None, float]
) -> None:
    assert mode_of(Settings(progress_interval=interval), tty=tty, quiet=quiet, environ=environ) == expected


def test_a_narrow_room_shows_fewer_parts_never_a_cut_word() -> None:
    """The line's room is what is left of pytest's current line (160 columns less a -v node id):
    it shows whole parts only (issue 38 point 7: ``... | $ unpri``)."""
    text = progress_text(done=0, total=391, in_flight=8, passed=0, cost=None, calls=0, elapsed=0.0)
    parts = text.split(" | ")
    for room in range(len(text) + 3):
        shown = fitted(text, room)
        assert len(shown) <= room
        kept = shown[1:].split(" | ") if shown else []
        assert kept == parts[: len(kept)], (room, shown)  # whole parts, from the first
    assert fitted(text, len(text) + 1) == " " + text
    assert fitted(text, 50) == " tau2: 0/391 done, 8 in flight | 0 passed"  # "$ unpriced" left out, not cut
