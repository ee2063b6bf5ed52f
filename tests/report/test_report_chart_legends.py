"""The report's charts in headless Chromium: no legend entry is clipped, and a pass^k curve
identical to another one does not hide it (issue 38 point 7: the comparison view of runs with
long names, and two runs with the same pass^k).

The charts are rendered as the report renders them (report/html/charts.py) and measured in the
browser: every legend text lies inside its SVG, and both curves of an identical pair can be seen.
"""

from __future__ import annotations

from typing import Any

from pytest_tau2.report.html import charts

LONG = [
    "/tmp/tau2-calibration/a-flaw10-seed1",
    "/tmp/tau2-calibration/b-flaw30-seed2",
    "/tmp/tau2-calibration/c-flaw30-seed3",
    "/home/me/runs/another-long-run-name",
]
SAME = [(1, 0.9), (2, 0.8), (3, 0.7)]


def _measure(browser: Any, svg: str) -> dict[str, Any]:
    page = browser.new_page()
    try:
        page.set_content(f"<!doctype html><html><body style='margin:0'>{svg}</body></html>")
        return dict(
            page.evaluate(
                """() => {
                const svg = document.querySelector('svg');
                const box = svg.getBoundingClientRect();
                const legends = [...svg.querySelectorAll('text.legend')].map(t => {
                    const r = t.getBoundingClientRect();
                    return {text: t.textContent, left: r.left - box.left, right: r.right - box.left,
                            top: r.top - box.top, bottom: r.bottom - box.top};
                });
                const paths = [...svg.querySelectorAll('path.line')].map(p => p.getAttribute('stroke-dasharray'));
                return {width: box.width, height: box.height, legends, paths};
            }"""
            )
        )
    finally:
        page.close()


def test_no_legend_entry_is_clipped_and_rows_do_not_overlap(browser: Any) -> None:
    curves = [(name, [(1, 0.5 + i / 10), (2, 0.4 + i / 10)]) for i, name in enumerate(LONG)]
    for svg in (
        charts.line_chart(curves, title="pass^k"),
        charts.bar_chart([charts.Bar("x", [(0.5, "50%")] * len(LONG))], title="bars", series=LONG),
        charts.histogram([(name, [1.0, 2.0]) for name in LONG], title="durations"),
    ):
        seen = _measure(browser, svg)
        assert len(seen["legends"]) == len(LONG)
        for entry in seen["legends"]:
            assert 0 <= entry["left"] and entry["right"] <= seen["width"], (entry, seen["width"])
        rows = sorted({round(e["top"]) for e in seen["legends"]})
        assert len(rows) > 1  # four long names do not fit one row of 640 px: they wrap
        first_plot_y = min(e["bottom"] for e in seen["legends"] if round(e["top"]) == rows[-1])
        assert first_plot_y < seen["height"]


def test_an_identical_pass_k_curve_is_drawn_so_that_both_show(browser: Any) -> None:
    svg = charts.line_chart([("run A", SAME), ("run B", SAME), ("run C", [(1, 0.5), (2, 0.4), (3, 0.3)])], title="k")
    seen = _measure(browser, svg)
    assert seen["paths"] == [None, "6 5", None]  # B dashed over A: A's colour shows through its gaps
    assert "(the same values as run A)" in svg  # B's legend entry and points say so
    assert svg.count('r="2.2"') == len(SAME) and svg.count('r="3.5"') == 2 * len(SAME)
