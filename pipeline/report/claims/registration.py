"""The claims as registered, and which of a run's claims deviate from them (issue #44 item 8).

"Frozen before scoring" was a comment. Here it is a file: ``registration.yaml`` beside claims.yaml holds the
commit the claims were registered at, the sha256 of the claims file then and one fingerprint per claim
(:func:`pipeline.report.claims.claim.fingerprint`: what decides its verdict, not its prose). Every kept run's
``run.json`` records the sha256 of the claims file it measured (``claims_sha256``); a claim whose fingerprint
differs from its registered one reads "deviates from registration" on each of its rows, and one added
since reads "not registered". ``deviations.yaml`` is the log: per change, the claims it touched, what
changed, why, and whether test results had been seen; tests/report/test_registration.py fails when a
deviating claim has no entry there. ``python -m pipeline claims-register`` writes a new registration from
the claims file as committed (the log's history stays).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from pipeline.io import atomic_write_text
from pipeline.paths import CLAIMS_FILE, DEVIATIONS_FILE, REGISTRATION_FILE
from pipeline.provenance import file_hash
from pipeline.report.claims.claim import Claim, fingerprint, raw_claims

REGISTERED, DEVIATES, NOT_REGISTERED = "registered", "deviates from registration", "not registered"


@dataclass(frozen=True)
class Registration:
    commit: str  # the commit whose claims file was registered
    date: str
    claims_sha256: str  # of that claims file
    claims: dict[str, str]  # claim id -> its fingerprint then


def claims_sha256(path: str | Path = CLAIMS_FILE) -> str:
    """The sha256 of a claims file's bytes (what a run's run.json records)."""
    return file_hash(path)


def registration_of(path: str | Path, commit: str, date: str | None = None) -> dict:
    """The registration of the claims file at ``path`` as committed at ``commit`` (registration.yaml's content)."""
    return {
        "commit": commit,
        "date": date or time.strftime("%Y-%m-%d", time.gmtime()),
        "claims_sha256": claims_sha256(path),
        "claims": {str(raw["id"]): fingerprint(raw) for raw in raw_claims(Path(path))},
    }


def write_registration(path: str | Path, commit: str, out: str | Path = REGISTRATION_FILE) -> dict:
    reg = registration_of(path, commit)
    head = (
        "# The claims as registered (issue #44 item 8): written by `python -m pipeline claims-register`, never by hand.\n"
        "# A claim whose fingerprint (what decides its verdict) differs from its own here reads 'deviates from\n"
        "# registration'; deviations.yaml says what changed, why, and whether test results had been seen.\n"
    )
    atomic_write_text(out, head + yaml.safe_dump(reg, sort_keys=False))
    return reg


def read_registration(path: str | Path = REGISTRATION_FILE) -> Registration | None:
    p = Path(path)
    if not p.is_file():
        return None
    raw = yaml.safe_load(p.read_text())
    return Registration(str(raw["commit"]), str(raw["date"]), str(raw["claims_sha256"]), dict(raw["claims"]))


def status(claim: Claim, reg: Registration | None) -> str:
    """A claim's rows' mark: registered, deviates from registration, not registered ('' without a registration
    or for a claim not read from a file)."""
    if reg is None or not claim.fingerprint:
        return ""
    if claim.id not in reg.claims:
        return NOT_REGISTERED
    return REGISTERED if reg.claims[claim.id] == claim.fingerprint else DEVIATES


def read_deviations(path: str | Path = DEVIATIONS_FILE) -> list[dict]:
    p = Path(path)
    return list((yaml.safe_load(p.read_text()) or {}).get("deviations") or []) if p.is_file() else []


def unlogged(claims: Sequence[Claim], reg: Registration | None, log: list[dict]) -> list[str]:
    """Claims that deviate from (or were added after) the registration with no entry in the deviations log."""
    logged = {c for entry in log for c in entry.get("claims") or []}
    return [c.id for c in claims if status(c, reg) in (DEVIATES, NOT_REGISTERED) and c.id not in logged]
