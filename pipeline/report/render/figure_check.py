"""Legibility of a figure at the size it is saved, measured from matplotlib's own text extents.

Every figure goes through :func:`check_legible` just before it is written (plots.save_figure), so a
figure whose labels a reader cannot read fails the run that draws it, with one line naming the
figure and the texts, instead of being found by eye in the report. Three rules:

- no visible text under ``MIN_POINTS`` (8 pt) at the saved size (``bbox_inches="tight"`` crops, it
  never scales, so a text's point size is its size in the file);
- no two visible texts overlapping by more than ``SLACK_PX`` both ways (tick labels, annotations,
  titles; a legend counts as one box, its own entries are laid out by matplotlib);
- no legend over a bar of an axes (a legend placed inside the data hides what it explains).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox

MIN_POINTS = 8.0
SLACK_PX = 2.0  # boxes include a little padding: touching is not overlapping
SHOWN = 4  # offending texts named in the error; the rest are counted


class IllegibleFigure(ValueError):
    """A figure breaks a legibility rule; the message is one line."""


@dataclass(frozen=True)
class Box:
    """A visible text (or a whole legend) and where it lands in the saved image, in pixels."""

    label: str
    box: Bbox
    points: float | None = None  # font size; None for a legend (its texts are checked on their own)


def _undrawn_tick_labels(fig: Figure) -> set[int]:
    """Tick labels of ticks outside their axis's view: matplotlib keeps them but never draws them."""
    out: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not lo - 1e-9 * (abs(hi - lo) or 1) <= tick.get_loc() <= hi + 1e-9 * (abs(hi - lo) or 1):
                    out.update(id(t) for t in (tick.label1, tick.label2))
    return out


def _shown(text: Text) -> bool:
    """Drawn and not empty: the text and its axes (if any) visible."""
    return bool(text.get_text().strip()) and text.get_visible() and (text.axes is None or text.axes.get_visible())


def layout(fig: Figure, dpi: float) -> tuple[list[Box], list[Box], list[tuple[Legend, Bbox]]]:
    """(texts outside legends, legend texts, legends with their frames) as drawn at ``dpi``."""
    fig.set_dpi(dpi)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    legends: list[Legend] = [*fig.legends, *(leg for ax in fig.axes if (leg := ax.get_legend()) is not None)]
    in_legend = {id(t) for leg in legends for t in [*leg.get_texts(), leg.get_title()]}
    skip = _undrawn_tick_labels(fig) | {id(t) for ax in fig.axes for t in (ax.xaxis.offsetText, ax.yaxis.offsetText)}
    texts: list[Box] = []
    legend_texts: list[Box] = []
    for t in fig.findobj(Text):
        if id(t) in skip or not _shown(t):
            continue
        # Text's own extent: an annotation's would add its leader line, which may cross other labels
        box = Box(t.get_text().replace("\n", " "), Text.get_window_extent(t, renderer), float(t.get_fontsize()))
        (legend_texts if id(t) in in_legend else texts).append(box)
    frames = [(leg, leg.get_window_extent(renderer)) for leg in legends if leg.get_visible()]
    return texts, legend_texts, frames


def _overlap(a: Bbox, b: Bbox) -> bool:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > SLACK_PX and h > SLACK_PX


def _bars_under(leg: Legend, frame: Bbox, fig: Figure) -> list[str]:
    """Bars (rectangles with an area) of the legend's figure that its frame covers."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    hit = []
    for ax in fig.axes:
        for p in ax.patches:
            if isinstance(p, Rectangle) and p.get_visible() and p.get_width() and p.get_height():
                if _overlap(frame, p.get_window_extent(renderer)):
                    hit.append(f"a bar of '{ax.get_title() or ax.get_ylabel() or 'an axes'}'")
    return hit


def problems(fig: Figure, dpi: float) -> list[str]:
    """Every broken rule of ``fig`` saved at ``dpi``, one short phrase each (empty: legible)."""
    texts, legend_texts, frames = layout(fig, dpi)
    out = [f"'{b.label[:40]}' is {b.points:g} pt" for b in [*texts, *legend_texts] if (b.points or 0) < MIN_POINTS]
    legend_boxes = [Box(f"legend ({', '.join(t.get_text() for t in leg.get_texts()[:2])}...)", f) for leg, f in frames]
    for a, b in combinations([*texts, *legend_boxes], 2):
        if _overlap(a.box, b.box):
            out.append(f"'{a.label[:40]}' overlaps '{b.label[:40]}'")
    for (leg, frame), box in zip(frames, legend_boxes):
        bars = _bars_under(leg, frame, fig)
        if bars:
            out.append(f"{box.label} covers {len(bars)} bar(s), first {bars[0]}")
    return out


def check_legible(fig: Figure, name: str, dpi: float) -> None:
    """Raise :class:`IllegibleFigure` (one line: the figure, then the first few offending texts) when
    ``fig`` saved at ``dpi`` breaks a rule of this module."""
    found = problems(fig, dpi)
    if found:
        more = f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
        raise IllegibleFigure(
            f"figure {name}: illegible at {dpi:g} dpi (min {MIN_POINTS:g} pt, no overlaps): "
            + "; ".join(found[:SHOWN])
            + more
        )
