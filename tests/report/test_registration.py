"""The claims' registration (issue #44 item 8): the committed registration is the claims file at its commit,
every claim that deviates from it has an entry in the deviations log, an edit of claims.yaml marks that
claim's rows "deviates from registration" (and an edit of its prose does not), and the verb writes one."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from pipeline.datasets.paths import REPO
from pipeline.paths import CLAIMS_FILE, REGISTRATION_FILE
from pipeline.report.claims.claim import load_claims
from pipeline.report.claims.measure import ClaimsInputs, measure_claims
from pipeline.report.claims.registration import (
    DEVIATES,
    NOT_REGISTERED,
    REGISTERED,
    read_deviations,
    read_registration,
    registration_of,
    status,
    unlogged,
)
from pipeline.report.pages.claims_table import verdict_text
from pipeline.workflow.report_settings import figures_params


def test_every_deviation_from_the_registration_is_logged():
    reg, claims, log = read_registration(), load_claims(), read_deviations()
    assert reg is not None and log
    assert unlogged(claims, reg, log) == []
    for entry in log:  # what, why, and whether test results had been seen
        assert entry["claims"] and entry["what"] and entry["why"] and isinstance(entry["test_results_seen"], bool)
    assert {status(c, reg) for c in claims} <= {REGISTERED, DEVIATES}


def test_the_registration_is_the_claims_file_at_its_commit(tmp_path):
    """registration.yaml's hashes are those of claims.yaml as committed at the registration's commit."""
    reg = read_registration()
    shown = subprocess.run(["git", "show", f"{reg.commit}:{CLAIMS_FILE.relative_to(REPO)}"], cwd=REPO,
                           capture_output=True, text=True)
    if shown.returncode:
        pytest.skip(f"no git history here ({shown.stderr.strip()})")
    (tmp_path / "claims.yaml").write_text(shown.stdout)
    again = registration_of(tmp_path / "claims.yaml", reg.commit, reg.date)
    assert again["claims_sha256"] == reg.claims_sha256 and again["claims"] == reg.claims


def edited(tmp_path, change) -> list:
    raw = yaml.safe_load(CLAIMS_FILE.read_text())
    for c in raw["claims"]:
        change(c)
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return load_claims(path)


def test_an_edited_claim_reads_deviates_from_registration(tmp_path):
    """Edit claims.yaml: the margin of one claim, the prose of another; measure them: only the first deviates."""
    def change(c):
        if c["id"] == "kohaku-hierarchy":
            c["direction"] = "less"
        if c["id"] == "kohaku-bm25":
            c["claim"] = c["claim"] + " (reworded)"
            c["margin_reason"] = "another reason"

    claims = {c.id: c for c in edited(tmp_path, change)}
    ids = [f"q{i}" for i in range(30)]
    rng = np.random.default_rng(0)
    wb = {("answering", v): pd.DataFrame({"score": rng.integers(0, 2, 30).astype(float)}, index=ids)
          for v in ("hier-extractive", "flat-extractive", "convex-extractive")}
    p = figures_params({"report": {"seed": 0, "bootstrap": 200, "permutations": 1000, "ablations": {
        "hierarchy-vs-flat": {"stage": "answering", "variants": ["flat-extractive", "hier-extractive"]},
        "bm25-on-off": {"stage": "answering", "variants": ["hier-extractive", "convex-extractive"]}}},
        "suite": {}, "answering": {}, "retrieval": {}, "config_hash": "h"})
    chosen = [claims["kohaku-hierarchy"], claims["kohaku-bm25"]]
    t = measure_claims(p, wb, {}, p.ablations, chosen, ClaimsInputs(registration=read_registration(), sizing=False))
    t = t.set_index("claim_id")
    assert t.loc["kohaku-hierarchy", "registration"] == DEVIATES
    assert t.loc["kohaku-bm25", "registration"] == REGISTERED  # prose is no deviation
    assert verdict_text(t.loc["kohaku-hierarchy"].to_dict()).split(": ")[1].startswith(DEVIATES)
    added = edited(tmp_path, lambda c: c.update(id=c["id"] + "-new") if c["id"] == "sprout-heads" else None)
    assert status(next(c for c in added if c.id == "sprout-heads-new"), read_registration()) == NOT_REGISTERED


def test_register_verb_writes_a_registration(tmp_path):
    out = tmp_path / "registration.yaml"
    done = subprocess.run([sys.executable, "-m", "pipeline", "claims-register", "--commit", "abc123", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, check=True)
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    written = yaml.safe_load(out.read_text())
    assert printed["commit"] == written["commit"] == "abc123" and printed["claims"] == len(load_claims())
    assert set(written["claims"]) == {c.id for c in load_claims()}
    assert REGISTRATION_FILE.name == "registration.yaml"
