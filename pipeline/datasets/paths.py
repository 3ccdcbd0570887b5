"""Where the shared data (WattBot's, the suite's) lives when nobody says otherwise.

``WATTBENCH_DATA`` wins; else ``<repo>/../shared/data`` (the layout of every developer
and CI checkout). Data is never copied into the repo.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def data_root() -> Path:
    return Path(os.environ.get("WATTBENCH_DATA", REPO.parent / "shared" / "data"))


def wattbot_dir() -> Path:
    return data_root() / "wattbot"
