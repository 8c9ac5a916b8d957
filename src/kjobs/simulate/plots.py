"""Inline SVG charts for `kjobs simulate --report` (`kjobs.simulate.report`): a timeline of bars, step lines over
time and histograms, drawn as plain SVG strings so the report needs no script, font or network to render.

Every chart takes data already reduced by the report (virtual seconds, counts, colours) and returns one `<svg>`
element; text is escaped here, so callers pass raw names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 1100
LEFT = 120
"""Room on the left for row labels and the y axis."""
RIGHT = 20


@dataclass(frozen=True)
class Bar:
    """One attempt on the timeline: row, start, when it started running (None: never), end, colour, tooltip."""

    row: int
    start: float
    running: float | None
    end: float
    colour: str
    title: str


@dataclass(frozen=True)
class Line:
    """A step line: (x, y) points in order, its colour and legend label."""

    label: str
    colour: str
    points: Sequence[tuple[float, float]]


def nice_ticks(top: float, count: int = 6) -> list[float]:
    """Round tick values from 0 to at least `top` (1, 2 or 5 times a power of ten apart)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [round(i * step, 9) for i in range(math.ceil(top / step - 1e-9) + 1)]


def time_unit(top: float) -> tuple[float, str]:
    """The unit an axis reaching `top` virtual seconds is labelled in: seconds, minutes, hours or days."""
    for size, unit in ((86400.0, "d"), (3600.0, "h"), (60.0, "m")):
        if top >= 3 * size:
            return size, unit
    return 1.0, "s"


def time_ticks(top: float, count: int = 6) -> list[float]:
    """Round tick values in the axis' time unit (`time_unit`), in seconds."""
    size, _ = time_unit(top)
    return [t * size for t in nice_ticks(top / size, count)]


def seconds_label(value: float, top: float | None = None) -> str:
    """A time label in the unit of an axis reaching `top` (default: the value's own): `90s`, `15m`, `2.5h`."""
    size, unit = time_unit(value if top is None else top)
    return f"{value / size:.3g}{unit}"


def human(seconds: float) -> str:
    """`1h 2m 3s` (Kubernetes' short duration style, to the second), for a total time."""
    whole = round(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days}d" * bool(days), f"{hours}h" * bool(hours), f"{minutes}m" * bool(minutes)]
    return " ".join([p for p in parts if p] + ([f"{secs}s"] if secs or not whole else []))


def _x_axis(ticks: list[float], scale: float, y: float, height: float, time_axis: bool) -> list[str]:
    parts = []
    for tick in ticks:
        x = LEFT + tick * scale
        label = seconds_label(tick, ticks[-1]) if time_axis else f"{tick:g}"
        parts.append(f'<line x1="{x:.1f}" y1="{y - height:.1f}" x2="{x:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{x:.1f}" y="{y + 14:.1f}" text-anchor="middle" class="tick">{escape(label)}</text>')
    return parts


def timeline(bars: Sequence[Bar], rows: Sequence[str], span: float) -> str:
    """Bars per row over virtual time: pale while the pod is pending, full colour while it runs; a bar too short
    to see is drawn 2 px wide."""
    row_height = max(3.0, min(18.0, 540.0 / max(1, len(rows))))
    top, plot_h = 10.0, row_height * len(rows)
    ticks = time_ticks(span or 1.0)
    scale = (WIDTH - LEFT - RIGHT) / (ticks[-1] or 1.0)
    parts = _x_axis(ticks, scale, top + plot_h, plot_h, time_axis=True)
    if row_height >= 9:
        for i, label in enumerate(rows):
            y = top + (i + 0.5) * row_height + 4
            parts.append(f'<text x="{LEFT - 6}" y="{y:.1f}" text-anchor="end" class="tick">{escape(label)}</text>')
    for bar in bars:
        y, h = top + bar.row * row_height + row_height * 0.12, row_height * 0.76
        x0 = LEFT + bar.start * scale
        x1 = max(LEFT + bar.end * scale, x0 + 2)
        xr = LEFT + bar.running * scale if bar.running is not None else x1
        title = f"<title>{escape(bar.title)}</title>"
        parts.append(
            f'<g><rect x="{x0:.1f}" y="{y:.1f}" width="{max(xr - x0, 0):.1f}" height="{h:.1f}" '
            f'fill="{bar.colour}" fill-opacity="0.35"/>'
            f'<rect x="{xr:.1f}" y="{y:.1f}" width="{max(x1 - xr, 2 if bar.running is not None else 0):.1f}" '
            f'height="{h:.1f}" fill="{bar.colour}"/>{title}</g>'
        )
    height = top + plot_h + 24
    return _svg(height, parts)


def step_lines(lines: Sequence[Line], span: float, marks: Sequence[tuple[float, str]] = ()) -> str:
    """Step lines over virtual time (each value holds until the next point), with labelled vertical marks."""
    plot_h, top = 260.0, 20.0
    ticks = time_ticks(span or 1.0)
    scale = (WIDTH - LEFT - RIGHT) / (ticks[-1] or 1.0)
    y_top = max((y for line in lines for _, y in line.points), default=1.0)
    y_ticks = nice_ticks(max(y_top, 1.0), 5)
    y_scale = plot_h / y_ticks[-1]
    base = top + plot_h
    parts = _x_axis(ticks, scale, base, plot_h, time_axis=True)
    for tick in y_ticks:
        y = base - tick * y_scale
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{tick:g}</text>')
    end_x = LEFT + ticks[-1] * scale
    for line in lines:
        coords, last_y = [], base
        for x, value in line.points:
            px, py = LEFT + x * scale, base - value * y_scale
            coords.append(f"{px:.1f},{last_y:.1f} {px:.1f},{py:.1f}")
            last_y = py
        coords.append(f"{end_x:.1f},{last_y:.1f}")
        parts.append(
            f'<polyline points="{" ".join(coords)}" fill="none" stroke="{line.colour}" stroke-width="2">'
            f"<title>{escape(line.label)}</title></polyline>"
        )
    for x, label in marks:
        px = LEFT + x * scale
        parts.append(f'<line x1="{px:.1f}" y1="{top:.1f}" x2="{px:.1f}" y2="{base:.1f}" class="mark"/>')
        parts.append(f'<text x="{px - 4:.1f}" y="{top - 6:.1f}" text-anchor="end" class="tick">{escape(label)}</text>')
    return _svg(base + 24, parts)


def histogram(values_by_group: Mapping[str, Sequence[float]], colours: Mapping[str, str], *, time_axis: bool) -> str:
    """Stacked histogram of values (about 20 bins), one colour per group (e.g. per outcome)."""
    values = [v for group in values_by_group.values() for v in group]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    bins = 20 if high > low else 1
    width = (high - low) / bins if high > low else 1.0
    counts = {g: [0] * bins for g in values_by_group}
    for group, group_values in values_by_group.items():
        for v in group_values:
            counts[group][min(bins - 1, int((v - low) / width))] += 1
    top_count = max((sum(counts[g][i] for g in counts) for i in range(bins)), default=1)
    plot_h, top = 200.0, 10.0
    base = top + plot_h
    y_ticks = nice_ticks(max(top_count, 1), 4)
    y_scale = plot_h / y_ticks[-1]
    bin_w = (WIDTH - LEFT - RIGHT) / bins
    parts = []
    for tick in y_ticks:
        y = base - tick * y_scale
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{tick:g}</text>')

    def label(v: float) -> str:
        return seconds_label(v, high) if time_axis else f"{v:.4g}"

    for i in range(bins):
        x, stacked = LEFT + i * bin_w, 0
        lo, hi = low + i * width, low + (i + 1) * width
        for group in counts:
            n = counts[group][i]
            if not n:
                continue
            y = base - (stacked + n) * y_scale
            parts.append(
                f'<rect x="{x + 1:.1f}" y="{y:.1f}" width="{bin_w - 2:.1f}" height="{n * y_scale:.1f}" '
                f'fill="{colours.get(group, "#888")}"><title>{escape(group)}: {n} run(s) in '
                f"{escape(label(round(lo, 3)))}–{escape(label(round(hi, 3)))}</title></rect>"
            )
            stacked += n
        if bins == 1 or i % max(1, bins // 5) == 0:
            parts.append(
                f'<text x="{x:.1f}" y="{base + 14:.1f}" text-anchor="start" class="tick">'
                f"{escape(label(round(lo, 3)))}</text>"
            )
    return _svg(base + 24, parts)


def _svg(height: float, parts: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height:.0f}" '
        f'viewBox="0 0 {WIDTH} {height:.0f}">' + "".join(parts) + "</svg>"
    )
