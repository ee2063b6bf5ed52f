"""Inline SVG charts: horizontal bars, a histogram, a line chart.

Hand-written rather than a plotting library: the report needs three small chart kinds whose
colours follow the page's light/dark theme (CSS classes, ``currentColor``), and the SVG stays
a few kilobytes with no script (docs/report.md has the comparison with pygal).
Series are coloured by the classes ``s0``..``s5`` of the stylesheet.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from pytest_tau2.report.html import formatting

WIDTH = 640
LABEL_W = 150
BAR_X = LABEL_W + 10
BAR_W = 250
SERIES_CLASSES = 6


@dataclass
class Bar:
    """One category: a value (0..max) and its annotation per series; None draws no bar."""

    label: str
    values: Sequence[tuple[float | None, str]]
    tone: str = ""
    """An extra CSS class for the label (e.g. ``bad`` for a failing domain)."""


def _svg(height: float, body: list[str], title: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {height:.0f}" width="{WIDTH}" height="{height:.0f}" '
        f'role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


LEGEND_ROW = 16
"""Height of one row of the legend; entries that would pass the chart's right edge start a new row."""


def _legend_places(names: Sequence[str]) -> list[tuple[float, int]]:
    """Each entry's x and row: rows wrap at the chart's width, so no entry is clipped."""
    places, x, row = [], float(BAR_X), 0
    for name in names:
        width = 24 + 7 * min(len(name), 28)
        if x > BAR_X and x + width - 10 > WIDTH:
            x, row = float(BAR_X), row + 1
        places.append((x, row))
        x += width
    return places


def legend_height(names: Sequence[str]) -> int:
    """The extra height a legend of these names takes beyond its first row."""
    return LEGEND_ROW * max((row for _, row in _legend_places(names)), default=0)


def _legend(names: Sequence[str], y: float, notes: Sequence[str] = ()) -> list[str]:
    out = []
    for i, (name, (x, row)) in enumerate(zip(names, _legend_places(names), strict=True)):
        ty = y + row * LEGEND_ROW
        note = notes[i] if i < len(notes) and notes[i] else ""
        out.append(f'<rect class="s{i % SERIES_CLASSES}" x="{x:.0f}" y="{ty - 9:.0f}" width="10" height="10" rx="2"/>')
        out.append(
            f'<text class="legend" x="{x + 14:.0f}" y="{ty:.0f}"><title>{escape(name + note)}</title>'
            f"{escape(_short(name, 28))}</text>"
        )
    return out


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    series: Sequence[str] = (),
    max_value: float = 1.0,
    tone_by_value: bool = False,
) -> str:
    """Horizontal bars, one group per category and one bar per series; values from 0 to max_value.

    ``tone_by_value`` (rates, with a single series): the bar is the passing share in the "good"
    colour and the rest of the track the "bad" one, so a failing category stands out.
    """
    n_series = max((len(b.values) for b in bars), default=1)
    bar_h = 16 if n_series == 1 else 11
    group_h = n_series * (bar_h + 3) + 9
    top = 22 + legend_height(series) if len(series) > 1 else 4
    height = top + len(bars) * group_h + 4
    body = _legend(series, 14) if len(series) > 1 else []
    for g, bar in enumerate(bars):
        y0 = top + g * group_h
        label_y = y0 + (n_series * (bar_h + 3)) / 2 + 4
        tone = f" {bar.tone}" if bar.tone else ""
        body.append(
            f'<text class="label{tone}" x="{LABEL_W}" y="{label_y:.1f}" text-anchor="end">'
            f"<title>{escape(bar.label)}</title>{escape(_short(bar.label, 24))}</text>"
        )
        for i, (value, note) in enumerate(bar.values):
            y = y0 + i * (bar_h + 3)
            toned = tone_by_value and n_series == 1 and value is not None
            track = "track miss" if toned and value is not None and value < max_value else "track"
            body.append(f'<rect class="{track}" x="{BAR_X}" y="{y}" width="{BAR_W}" height="{bar_h}" rx="3"/>')
            if value is not None and max_value > 0:
                w = max(0.0, min(1.0, value / max_value)) * BAR_W
                fill = "ok" if toned else f"s{i % SERIES_CLASSES}"
                body.append(
                    f'<rect class="{fill}" x="{BAR_X}" y="{y}" width="{w:.1f}" height="{bar_h}" '
                    f'rx="3"><title>{escape(note)}</title></rect>'
                )
            body.append(f'<text class="note" x="{BAR_X + BAR_W + 8}" y="{y + bar_h - 3.5:.1f}">{escape(note)}</text>')
    return _svg(height, body, title)


def _bins(values: Sequence[float]) -> list[float]:
    """Bin edges: logarithmic when the values span more than two decades, else linear."""
    positive = [v for v in values if v > 0]
    low, high = (min(positive), max(positive)) if positive else (0.0, 1.0)
    if high <= low:
        return [low * 0.9, high * 1.1] if high > 0 else [0.0, 1.0]
    if low > 0 and high / low > 100:
        a, b = math.floor(math.log10(low) * 4) / 4, math.ceil(math.log10(high) * 4) / 4
        steps = max(1, round((b - a) * 4))
        return [10 ** (a + (b - a) * i / steps) for i in range(steps + 1)]
    step = _nice_step(high / 12)
    edges = [0.0]
    while edges[-1] < high:
        edges.append(edges[-1] + step)
    return edges


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    return float(next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw))


def histogram(
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    fmt: Callable[[float | None], str] = formatting.seconds,
) -> str:
    """Counts of values per bin, one bar per series in each bin; the x axis labels bin edges."""
    every = [v for _, values in series for v in values]
    edges = _bins(every)
    counts = [[0] * (len(edges) - 1) for _ in series]
    for s, (_, values) in enumerate(series):
        for v in values:
            i = next((j for j in range(len(edges) - 1) if v < edges[j + 1]), len(edges) - 2)
            counts[s][max(0, i)] += 1
    peak = max((c for row in counts for c in row), default=0) or 1
    names = [name for name, _ in series]
    left, right, top, plot_h = 46, WIDTH - 12, 24 + legend_height(names) if len(series) > 1 else 10, 150
    base = top + plot_h
    slot = (right - left) / (len(edges) - 1)
    bar_w = max(1.0, (slot - 4) / len(series))
    body = _legend(names, 14) if len(series) > 1 else []
    for tick in _ticks(peak):
        y = base - tick / peak * plot_h
        body.append(f'<line class="grid" x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        body.append(f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick}</text>')
    for s, row in enumerate(counts):
        for i, c in enumerate(row):
            if not c:
                continue
            h = c / peak * plot_h
            x = left + i * slot + 2 + s * bar_w
            label = f"{series[s][0]}: " if len(series) > 1 else ""
            body.append(
                f'<rect class="s{s % SERIES_CLASSES}" x="{x:.1f}" y="{base - h:.1f}" width="{bar_w:.1f}" '
                f'height="{h:.1f}" rx="2"><title>{escape(label)}{c} between {escape(fmt(edges[i]))} and '
                f"{escape(fmt(edges[i + 1]))}</title></rect>"
            )
    every_nth = max(1, math.ceil(len(edges) / 8))
    last = len(edges) - 1
    for i, edge in enumerate(edges):
        # every n-th edge, and the last one unless it would crowd the one shown before it
        if i % every_nth == 0 or (i == last and last % every_nth > every_nth // 2):
            x = left + i * slot
            body.append(
                f'<text class="axis" x="{x:.1f}" y="{base + 16}" text-anchor="middle">{escape(fmt(edge))}</text>'
            )
    body.append(f'<line class="axisline" x1="{left}" x2="{right}" y1="{base}" y2="{base}"/>')
    return _svg(base + 24, body, title)


def _ticks(peak: int) -> list[int]:
    step = max(1, int(_nice_step(peak / 4)))
    return list(range(0, peak + 1, step))


def line_chart(curves: Sequence[tuple[str, Sequence[tuple[int, float]]]], *, title: str) -> str:
    """Values from 0 to 1 over integer k (pass^k), one line per curve.

    A curve identical to an earlier one would hide it: it is drawn dashed, with smaller points,
    over the earlier one (both colours show), and its legend entry and points say which it equals."""
    ks = sorted({k for _, points in curves for k, _ in points}) or [1]
    names = [name for name, _ in curves]
    left, right, top, plot_h = 46, WIDTH - 20, 24 + legend_height(names) if len(curves) > 1 else 12, 170
    base = top + plot_h
    span = max(1, ks[-1] - ks[0])

    def x_of(k: int) -> float:
        return left + (k - ks[0]) / span * (right - left) if len(ks) > 1 else (left + right) / 2

    same: list[str | None] = []  # the earlier curve each one coincides with
    for i, (_, points) in enumerate(curves):
        key = sorted((k, round(v, 9)) for k, v in points)
        same.append(
            next((names[j] for j in range(i) if sorted((k, round(v, 9)) for k, v in curves[j][1]) == key), None)
        )
    notes = [f" (the same values as {other})" if other else "" for other in same]
    body = _legend(names, 14, notes) if len(curves) > 1 else []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = base - tick * plot_h
        body.append(f'<line class="grid" x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        body.append(f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    for k in ks:
        body.append(f'<text class="axis" x="{x_of(k):.1f}" y="{base + 16}" text-anchor="middle">k={k}</text>')
    for i, (name, points) in enumerate(curves):
        cls = f"s{i % SERIES_CLASSES}"
        coords = [(x_of(k), base - max(0.0, min(1.0, v)) * plot_h, k, v) for k, v in sorted(points)]
        path = " ".join(f"{'M' if j == 0 else 'L'}{x:.1f},{y:.1f}" for j, (x, y, _, _) in enumerate(coords))
        dashed = ' stroke-dasharray="6 5"' if same[i] else ""
        body.append(f'<path class="line {cls}" d="{path}"{dashed}/>')
        radius = 2.2 if same[i] else 3.5
        for x, y, k, v in coords:
            body.append(
                f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="{radius}">'
                f"<title>{escape(name)}: pass^{k} = {v:.3f}{escape(notes[i])}</title></circle>"
            )
    return _svg(base + 24, body, title)
