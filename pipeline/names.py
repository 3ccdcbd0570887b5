"""The one rule for a name that becomes part of a path, and the check that a path built from one stays home.

Why: names reach paths from files other people made: a kept run's ``run.json`` sent by a colleague,
``WATTBENCH_RUN_ID``, a stranger's ``metadata.csv`` or folder of documents, a config's split names. A
name holding ``/`` or ``..`` made ``compare`` write outside ``runs/`` and a kept run's swap delete an
unrelated folder (issue 46). Every such name is checked against :data:`PATTERN` where it is read (a
one-line error naming the field and the file it came from), and every path built from one is resolved
and must stay inside its root (:func:`inside`). The pattern is the config schema's ``definitions/name``
(variant, index and table names), so one rule covers them all.
"""

from __future__ import annotations

import re
from pathlib import Path

PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]*"  # the config's definitions/name (pipeline/config_schema.py DEFINITIONS), anchored there
NAME = re.compile(PATTERN)
MAX_LEN = 200  # a file name, with a suffix, stays under the 255 bytes filesystems take
RULE = "letters, digits, '_', '.' and '-', starting with a letter or digit"
# A split's name becomes the stem of files whose patterns go on past it (``{split}.csv`` beside
# ``{split}.gold.csv``, ``{split}.sizes.csv``): with a '.' a split ``train.gold`` would be read as ``train``'s
# labels. So a split is a name without '.', and the DAG's ``{split}`` wildcard is this same pattern
# (pipeline/rules/common.smk): every split the config takes matches a rule (the config's definitions/split).
SPLIT_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_-]*"


class UnsafeName(ValueError):
    """A name that cannot be part of a path, or a path that leaves its root (one line)."""


def problem(value: object) -> str | None:
    """What keeps ``value`` from being a name (None: it is one)."""
    if not isinstance(value, str) or not value:
        return "is empty" if value in ("", None) else f"is a {type(value).__name__}, not text"
    if len(value) > MAX_LEN:
        return f"is longer than {MAX_LEN} characters"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", value):
        return "has characters other than A-Z a-z 0-9 _ . -"
    if not NAME.fullmatch(value):
        return "does not start with a letter or digit"
    return None


def check_name(value: object, where: str) -> str:
    """``value`` when it is a name; else :class:`UnsafeName`: ``<where>: <value> <what is wrong> (a name is ...)``.
    ``where`` names the field and its source, e.g. ``logs/run.json: field id``."""
    why = problem(value)
    if why:
        raise UnsafeName(f"{where}: {shown(value)} {why} (a name is {RULE})")
    return str(value)


def shown(value: object) -> str:
    """A value as one quoted line (control characters escaped), for messages."""
    return repr(value) if isinstance(value, str) else repr(str(value))


def inside(root: str | Path, *parts: str | Path) -> Path:
    """``root / parts…``, required to resolve (symlinks followed) to a path inside ``root`` resolved;
    :class:`UnsafeName` otherwise. Returns the path as built (not resolved), so messages and links
    keep the names the user knows."""
    path = Path(root).joinpath(*parts)
    base = Path(root).resolve()
    target = path.resolve()
    if target != base and base not in target.parents:
        raise UnsafeName(f"{path}: resolves to {target}, outside {Path(root)}")
    return path
