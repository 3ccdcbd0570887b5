"""Kept runs: each finished run's reports and per-question scores under ``runs/<run id>/``.

``reports/`` is rewritten in place by every run, so a run that is to be compared later is copied out
at its end (Snakemake's ``onsuccess``, and again by ``make run``/``make resume``'s summary step, after
the steps that add to reports/): ``runs/<id>/reports/`` (the whole folder), ``runs/<id>/scores/<dataset>/<split>/``
(the per-question scores each variant was scored on, every scored split in a folder of its own: WattBot's
train and test files share their names; the heavy ``results/`` stays shared and content-addressed) and
``runs/<id>/run.json``: the run's id, config hash, commit (and whether tracked
files differed from it: ``dirty``), config files, start and end, the encoder each index was built with
(``encoders``: its cache key, e.g. ``…/onnx-qint8-b1-…`` or ``…/onnx-fp32-…``, which ``precision: auto``
picks by CPU) and the CPU's model name, and per scored dataset and split what makes two runs comparable:
the gold file's sha256, the metric profile, and the sha256 of the sorted scored question ids
(pipeline/kept_runs/compare.py refuses when one differs), and the sha256 of the claims file the run measured
(``claims_sha256``: pipeline/report/claims/registration.py). A run kept before splits had folders of their
own recorded ``scores/<dataset>/<file>``; its run.json's paths are read as recorded. ``runs/latest`` names the newest: a
symlink, or a one-line text file where the filesystem has none. ``python -m pipeline runs list|prune`` lists and prunes them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

from pipeline.embed.kernels import cpu_model
from pipeline.io import atomic_write_json, atomic_write_text
from pipeline.names import UnsafeName, check_name, inside, shown
from pipeline.paths import RUNS
from pipeline.provenance import file_hash, git_commit, git_dirty
from pipeline.report.claims.registration import claims_sha256
from pipeline.run_ids import RunState, shown_path

LATEST = "latest"  # runs/latest: the newest kept run
RUN_JSON = "run.json"
SCORES = "scores"
REPORTS = "reports"


@dataclass(frozen=True)
class ScoredSet:
    """One dataset and split a run scored: the gold file, the metric and its settings, and each variant's
    per-question scores (one row per question, ``id_column`` naming it; ``metrics`` are the columns
    compare pairs)."""

    dataset: str
    split: str
    gold: str
    profile: dict
    metrics: tuple[str, ...]
    id_column: str
    scores: dict[str, str]  # variant -> per-question CSV

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.split}"

    def kept_path(self, path: str) -> str:
        """Where a per-question file of this set is kept, relative to the run's folder."""
        return f"{SCORES}/{self.dataset}/{self.split}/{Path(path).name}"


def wattbot_profile(name: str | None = None) -> dict:
    """The WattBot metric profile a per-question CSV was scored with (the primary one unless ``name``d), as
    data: its weights and rules (the normalising functions by name) and the numeric tolerance; two runs
    compare only when equal."""
    from pipeline.registry import metrics
    from pipeline.score.wattbot import TOL

    rules = metrics.find(name).compute if name else metrics.primary().compute
    out = {f.name: getattr(rules, f.name) for f in fields(rules)}
    out = {k: (v.__name__ if callable(v) else list(v) if isinstance(v, tuple) else v) for k, v in out.items()}
    return {**out, "tolerance": TOL}


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def question_ids(s: ScoredSet) -> list[str]:
    """The question ids any variant of ``s`` scored, sorted."""
    ids: set[str] = set()
    for path in s.scores.values():
        ids |= set(pd.read_csv(path, dtype={s.id_column: str}, usecols=[s.id_column])[s.id_column])
    return sorted(ids)


def scored_entry(s: ScoredSet) -> dict:
    """run.json's record of one scored set (the scores' paths relative to the kept run's folder)."""
    ids = question_ids(s)
    return {
        "dataset": s.dataset,
        "split": s.split,
        "gold": s.gold,
        "gold_sha256": file_hash(s.gold),
        "metric_profile": s.profile,
        "metrics": list(s.metrics),
        "id_column": s.id_column,
        "questions": len(ids),
        "questions_sha256": sha256_text("\n".join(ids)),
        "scores": {v: s.kept_path(p) for v, p in sorted(s.scores.items())},
    }


def _iso(t: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if t is not None else None


def run_record(
    state: RunState, sets: Sequence[ScoredSet], ended: float, encoders: dict[str, str] | None = None
) -> dict:
    """run.json: who the run is (fields of logs/run.json read as given: a newer RunState may carry more,
    such as its config hash), what code and encoders made it (``encoders``: "<dataset>/<index>" -> the
    cache key its index manifest records) and what its scores may be compared with."""
    given = asdict(state)
    return {
        "id": state.id,
        "config_hash": given.get("config_hash"),
        "commit": git_commit(),
        "dirty": git_dirty(),
        "config_files": [shown_path(f) for f in given.get("config_files", [])],
        "encoders": dict(sorted((encoders or {}).items())),
        "cpu": cpu_model(),
        "started": _iso(given.get("started")),
        "ended": _iso(ended),
        "resumed": given.get("resumed", 0),
        "claims_sha256": claims_sha256(),
        "scored": [scored_entry(s) for s in sets],
    }


def _fill(folder: Path, reports_dir: Path, sets: Sequence[ScoredSet], record: dict) -> None:
    if reports_dir.is_dir():
        shutil.copytree(reports_dir, folder / REPORTS, symlinks=True)
    for s in sets:
        for path in s.scores.values():
            target = folder / s.kept_path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    atomic_write_json(folder / RUN_JSON, record)


def keep_run(
    state: RunState,
    reports_dir: str | Path,
    sets: Sequence[ScoredSet],
    root: str | Path = RUNS,
    encoders: dict[str, str] | None = None,
) -> Path:
    """Copy the run's reports and per-question scores to ``<root>/<id>/`` (replacing an earlier copy of the
    same run whole: a resumed run is kept again) and point ``<root>/latest`` at it; the folder."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    target = inside(root, check_name(state.id, "the run's id"))
    work = root / f".{state.id}.tmp-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        _fill(work, Path(reports_dir), sets, run_record(state, sets, time.time(), encoders))
        _swap(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    point_latest(root, state.id)
    return target


def _swap(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target``, an earlier one there moved aside first and removed after (put
    back if the move fails)."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        target.rename(old)
    try:
        new.rename(target)
    except OSError:
        if old.exists():
            old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def point_latest(root: Path, run_id: str) -> None:
    """``<root>/latest`` -> ``<id>``: a relative symlink swapped in by rename, else a text file naming it."""
    link, tmp = root / LATEST, root / f".{LATEST}.tmp-{os.getpid()}"
    inside(root, check_name(run_id, "the newest run's id"))
    tmp.unlink(missing_ok=True)
    try:
        os.symlink(run_id, tmp)
    except (OSError, NotImplementedError):  # a filesystem without symlinks
        if link.is_symlink():
            link.unlink()
        atomic_write_text(link, run_id + "\n")
        return
    if link.is_dir() and not link.is_symlink():
        raise ValueError(f"{link} is a folder, not the pointer to the newest run: move it away")
    os.replace(tmp, link)


def latest_id(root: str | Path = RUNS) -> str | None:
    """The id ``<root>/latest`` names (checked as a name: it becomes a path), None when there is none."""
    link = Path(root) / LATEST
    if link.is_symlink():
        value = os.readlink(link).rstrip("/").split("/")[-1]
    elif link.is_file():
        value = link.read_text(encoding="utf-8").strip()
    else:
        return None
    return check_name(value, f"{link}: the newest run's id") if value else None


def resolve_kept(name: str, root: str | Path = RUNS) -> Path:
    """A kept run named on the command line: a folder holding run.json, a run id under ``root``, or
    ``latest``."""
    given = Path(name)
    if (given / RUN_JSON).is_file():
        return given
    run_id = latest_id(root) if name == LATEST else name
    folder = inside(root, run_id or LATEST)
    if not (folder / RUN_JSON).is_file():
        kept = ", ".join(r["id"] for r in kept_runs(root)[-5:]) or "none"
        raise FileNotFoundError(f"{name}: no kept run (no {folder / RUN_JSON}; newest kept here: {kept})")
    return folder


def read_record(folder: str | Path) -> dict:
    """A kept run's run.json, as a colleague may have sent it: its id must be a name (``compare`` names its
    CSV after it) and each per-question scores file must lie inside the kept run's folder (pipeline/names.py);
    else a one-line :class:`~pipeline.names.UnsafeName` naming the field and the file."""
    import json

    path = Path(folder) / RUN_JSON
    record = json.loads(path.read_text(encoding="utf-8"))
    check_name(record.get("id"), f"{path}: field id")
    for entry in record.get("scored") or []:
        for variant, rel in (entry.get("scores") or {}).items():
            where = f"{path}: field scored.scores.{variant}"
            if not isinstance(rel, str) or Path(rel).is_absolute():
                raise UnsafeName(f"{where}: {shown(rel)} is not a path relative to the kept run's folder")
            try:
                inside(folder, rel)
            except UnsafeName:
                raise UnsafeName(f"{where}: {shown(rel)} leads outside the kept run's folder {folder}") from None
    return record


def kept_runs(root: str | Path = RUNS) -> list[dict]:
    """Every kept run's run.json (plus ``folder``), oldest first (by when it was kept)."""
    root = Path(root)
    runs = []
    for run_json in root.glob(f"*/{RUN_JSON}"):
        if run_json.parent.name.startswith(".") or run_json.parent.is_symlink():
            continue
        runs.append({**read_record(run_json.parent), "folder": str(run_json.parent)})
    return sorted(runs, key=lambda r: (r.get("ended") or "", r["id"]))


@dataclass(frozen=True)
class Prune:
    """What ``runs prune`` removes: all but the ``keep`` newest, and those kept more than ``older_than_days``
    ago (either rule removes a run); never the one ``runs/latest`` names."""

    keep: int | None = None
    older_than_days: float | None = None

    def doomed(self, runs: list[dict], latest: str | None, now: float) -> list[dict]:
        if self.keep is None and self.older_than_days is None:
            raise ValueError("runs prune: say what to remove: --keep N and/or --older-than DAYS")
        if self.keep is not None and self.keep < 0:
            raise ValueError(f"runs prune: --keep {self.keep}: a count of runs is 0 or more")
        out = set()
        if self.keep is not None:
            out |= {r["id"] for r in runs[: max(len(runs) - self.keep, 0)]}
        if self.older_than_days is not None:
            cutoff = _iso(now - self.older_than_days * 86400) or ""
            out |= {r["id"] for r in runs if (r.get("ended") or "") < cutoff}
        return [r for r in runs if r["id"] in out and r["id"] != latest]


def prune_runs(rule: Prune, root: str | Path = RUNS, dry_run: bool = False) -> list[str]:
    """Remove the kept runs ``rule`` names (nothing with ``dry_run``); their ids."""
    gone = rule.doomed(kept_runs(root), latest_id(root), time.time())
    if not dry_run:
        for r in gone:
            shutil.rmtree(r["folder"])
    return [r["id"] for r in gone]


def run_line(r: dict, latest: str | None) -> str:
    """One line of ``runs list``: id, when kept, commit, config files, what it scored."""
    scored = ", ".join(f"{s['dataset']}/{s['split']} {len(s['scores'])} variants" for s in r.get("scored", []))
    parts = [
        r["id"],
        (r.get("ended") or "?").replace("T", " ").replace("Z", " UTC"),
        f"commit {(r.get('commit') or 'unknown')[:12]}",
        *([f"config {r['config_hash'][:12]}"] if r.get("config_hash") else []),
        " ".join(r.get("config_files") or []) or "config ?",
        scored or "nothing scored",
    ]
    return "  ".join(parts) + ("  (latest)" if r["id"] == latest else "")
