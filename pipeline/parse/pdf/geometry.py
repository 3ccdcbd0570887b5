"""Page boxes (x0, y0, x1, y1 in points): whether one lies in another, and the box around several."""

from __future__ import annotations


def inside_box(box, outer, tol: float = 2.0) -> bool:
    """Whether ``box``'s centre lies in ``outer`` (grown by ``tol`` points)."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return outer[0] - tol <= cx <= outer[2] + tol and outer[1] - tol <= cy <= outer[3] + tol


def union_box(boxes) -> list[float]:
    """The smallest box holding all of ``boxes``."""
    boxes = list(boxes)
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]
