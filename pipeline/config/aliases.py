"""Old names of config keys: a renamed key keeps working under its old name, with a one-line notice.

The config's words follow the glossary of docs/architecture.md: the retrieval suite is ``suite`` (the code's
word for it), never ``benchmarks``, which names Snakemake's timing files (benchmarks/) beside the speed
benchmarks (pipeline/bench/, ``make bench``). A user's config written before a rename is read as if it used
the new name: each file (and ``--config``) is renamed before the files are merged
(pipeline/config/load.py), so an old overlay extends a new base, and the run says once what to rename.
"""

from __future__ import annotations

from pipeline.config.overrides import deep_merge
from pipeline.config_schema import ConfigTree

RENAMED = {"benchmarks": "suite"}  # old top-level key -> its name now


def rename_keys(raw: ConfigTree, source: str = "the config") -> list[str]:
    """Rename the old keys of ``raw`` in place (one also under its new name is merged under it: the new
    name's values win); the notices, one line each."""
    notices = []
    for old, new in RENAMED.items():
        if old in raw:
            value = raw.pop(old)
            if isinstance(value, dict) and isinstance(raw.get(new), dict):
                value = deep_merge(value, raw[new])
            elif new in raw:
                value = raw[new]
            raw[new] = value
            notices.append(f"notice: config key '{old}' ({source}) is now '{new}'; the old name still works, rename it")
    return notices
