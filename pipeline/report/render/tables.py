"""Numbers as markdown table cells: one formatting for the docs' generated blocks and the claims table."""

from __future__ import annotations

import pandas as pd

from pipeline import markdown


def fmt(x, digits: int = 3, signed: bool = False) -> str:
    """A number for a table cell (NaN empty); integers stay integers."""
    if x is None or pd.isna(x):
        return ""
    if isinstance(x, (int,)) or (isinstance(x, float) and x.is_integer() and abs(x) >= 10):
        return f"{int(x):+d}" if signed else f"{int(x)}"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub markdown table (numbers via :func:`fmt`, pipes in cells escaped)."""

    def cell(x) -> str:
        return (fmt(x) if isinstance(x, float) else str(x)).replace("|", "\\|")

    return markdown.table(list(df.columns), ([cell(x) for x in row] for row in df.itertuples(index=False))) + "\n"
