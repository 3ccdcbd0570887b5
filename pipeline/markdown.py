"""GitHub markdown tables: the one renderer behind every generated table (README, docs/, reports/).

Below every stage (parse, embed, sprout and report all render tables), so it imports nothing of
the pipeline. Cells are written as ``str()`` gives them: callers format numbers and escape pipes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table_lines(header: Sequence, rows: Iterable[Sequence]) -> list[str]:
    """``| a | b |``, then ``|---|---|``, then one such line per row."""

    def line(cells: Sequence) -> str:
        return "| " + " | ".join(map(str, cells)) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(r) for r in rows)]


def table(header: Sequence, rows: Iterable[Sequence]) -> str:
    """:func:`table_lines` joined by newlines (no newline after the last row)."""
    return "\n".join(table_lines(header, rows))
