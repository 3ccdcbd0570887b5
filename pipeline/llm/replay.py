"""Replay packs: the cached replies one run used, to reproduce it elsewhere without a key.

``python -m pipeline export-replay RUN OUT`` reads the ``usage`` rows of run ``RUN``
(:mod:`pipeline.llm.usage`: every request it answered, made or cached) and writes, in folder
``OUT``, ``llm.sqlite`` (a reply cache holding those replies and only those, plus the run's usage
rows) and ``manifest.json`` (the run, the counts per model and variant, the source cache, the
code's commit, and the requests the run used that have no stored reply: transport failures, which
a replay cannot reproduce). On the other machine, the same config with the pack as its cache
folder, ``--config cache_dir=OUT 'llm={mode: replay}'`` (Snakemake deep-merges ``llm``), reads
every reply from the pack: no key needed, no call leaves, and a request the pack lacks stops the
job (:class:`pipeline.llm.gateway.CacheMiss`). The run's embedding cache is made there too
(encoders are computed again; the pack holds only LLM replies).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

from pipeline.credentials import findings
from pipeline.io import atomic_write_json
from pipeline.llm.cache import LLMCache
from pipeline.llm.usage import ensure_table, open_read_only
from pipeline.provenance import file_hash, git_commit
from pipeline.run_ids import shown_path

PACK_DB = "llm.sqlite"
MANIFEST = "manifest.json"


def export_replay(cache_path: str | Path, run: str, out: str | Path, run_state: dict | None = None) -> dict:
    """Write the pack of ``run`` from the cache at ``cache_path`` into ``out``; its manifest."""
    out = Path(out)
    if (out / PACK_DB).exists():
        raise ValueError(f"{out / PACK_DB} exists: export into a new folder")
    src = open_read_only(cache_path)
    try:
        usage = src.execute("SELECT * FROM usage WHERE run = ? ORDER BY rowid", (run,)).fetchall()
        keys = sorted({row[3] for row in usage})
        calls = [
            r
            for i in range(0, len(keys), 500)
            for r in src.execute(
                f"SELECT key, request, result FROM calls WHERE key IN ({','.join('?' * len(keys[i : i + 500]))})",
                keys[i : i + 500],
            ).fetchall()
        ]
    except sqlite3.OperationalError as exc:  # a cache from before run attribution: no usage table
        raise ValueError(f"{cache_path}: no usage records ({exc}); only runs since run ids were added export") from None
    finally:
        src.close()
    if not usage:
        raise ValueError(f"run {run}: no LLM calls recorded in {cache_path} (python -m pipeline cost lists the runs)")
    _no_credentials(calls, cache_path)
    _write_pack(out / PACK_DB, calls, usage)
    stored = {r[0] for r in calls}
    manifest = {
        "run": run,
        "made_by": "python -m pipeline export-replay",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": git_commit(),
        "source_cache": shown_path(cache_path),
        "replies": len(calls),
        "requests_without_reply": sorted(set(keys) - stored),
        "models": dict(sorted(Counter(json.loads(r[1])["model"] for r in calls).items())),
        "variants": dict(sorted(Counter(row[1] for row in usage if row[3] in stored).items())),
        "run_state": run_state,
        "sha256": file_hash(out / PACK_DB),
        "use": f"--config cache_dir={out} 'llm={{mode: replay}}'",
    }
    atomic_write_json(out / MANIFEST, manifest)
    return manifest


def _no_credentials(calls: list[tuple], cache_path: str | Path) -> None:
    """A pack is made to be shared: a stored request whose parameters or endpoint hold a credential (a cache
    filled before issue 46, when ``extra_headers: {Authorization: …}`` passed the config check) stops the
    export with one line naming the row and the key, never the value."""
    for key, request, _ in calls:
        stored = json.loads(request)
        found = findings(stored.get("params") or {}, "params.") + findings({"endpoint": stored.get("endpoint") or ""})
        if found:
            raise ValueError(
                f"{cache_path}: the request of row {key[:12]} holds a credential at {found[0][0]} ({found[0][1]}); "
                "a replay pack is made to be shared: not exported"
            )


def _write_pack(path: Path, calls: list[tuple], usage: list[tuple]) -> None:
    """A reply cache with only these rows (the cache's own schema), as one self-contained file."""
    cache = LLMCache(path)
    ensure_table(cache)
    with cache.transaction() as db:
        db.executemany("INSERT OR IGNORE INTO calls VALUES (?, ?, ?)", calls)
        db.executemany(f"INSERT INTO usage VALUES ({','.join('?' * len(usage[0]))})", usage)
    cache.close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=DELETE")  # no -wal/-shm beside it: one file to copy
    con.close()
