"""Which rows decide a claim, the family each row is adjusted in, and each claim's one verdict (issue #44
items 4 and 7).

A row is **held-out** (a labelled split nothing was chosen on: WattBot test, a suite dataset, a corpus),
**in-sample** (WattBot train: the defaults, thresholds and weights were chosen on it) or **pooled**.
A claim is decided by its pooled row where it has one (a claim made across datasets), else by its held-out
rows, else (no held-out row: a variant that answers train alone) by its in-sample rows, labelled so.
Claims measured twice (``replicate_of``: two sampling seeds) are one claim decided by both measurements.

Families (Holm's step-down within each, over the rows that test):

- the deciding rows of one system's claims (``KohakuRAG``, ``SproutRAG``): a reader asks which of a paper's
  published claims hold, so the chance of any false "holds" or "fails" among one paper's claims in the
  headline is kept at 5%;
- the other held-out rows of one dataset (``legalbench_rag``: a pooled claim's per-dataset rows): the claims
  measured on one dataset, shown beside the pooled row;
- in-sample rows beside a held-out row: no family, no adjusted p; their verdict is read unadjusted and
  counts for nothing.

A claim's verdict is its deciding rows' verdict where they agree (rows that did not run left out; every
row not run: not run), else undecided, the note naming theirs.
"""

from __future__ import annotations

from collections import defaultdict

from pipeline.report.sections import LABELLED_SET
from pipeline.report.stats.verdicts import UNDECIDED, holm

HELD_OUT, IN_SAMPLE, POOLED = "held-out", "in-sample", "pooled"
IN_SAMPLE_SPLITS = ("train",)  # WattBot's: the split defaults and weights were chosen on
NOT_RUN = "not run"


def sample_of(dataset: str, score_split: str | None) -> str:
    """held-out, in-sample (WattBot train) or pooled, of a row's ``dataset`` value."""
    if dataset == POOLED:
        return POOLED
    split = score_split if dataset == LABELLED_SET else None
    if dataset.startswith(LABELLED_SET + "/"):
        split = dataset.split("/", 1)[1]
    return IN_SAMPLE if split in IN_SAMPLE_SPLITS else HELD_OUT


def deciding(rows: list[dict]) -> list[bool]:
    """Per row (in order), whether it decides its claim (module docstring); rows carry claim_key and sample."""
    out = [False] * len(rows)
    by_claim: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_claim[r["claim_key"]].append(i)
    for idx in by_claim.values():
        for kind in (POOLED, HELD_OUT, IN_SAMPLE):
            chosen = [i for i in idx if rows[i]["sample"] == kind]
            if chosen:
                for i in chosen:
                    out[i] = True
                break
    return out


def family_of(row: dict) -> str:
    """A row's Holm family ('' for none: an in-sample row beside a held-out one)."""
    if row["decides"]:
        return str(row["system"])
    return "" if row["sample"] == IN_SAMPLE else str(row["dataset"])


def holm_in_families(rows: list[dict], tests: list[bool]) -> list[float | None]:
    """Holm-adjusted p per row within its family, over the rows that test (None elsewhere)."""
    out: list[float | None] = [None] * len(rows)
    fams: dict[str, list[int]] = defaultdict(list)
    for i, (r, tested) in enumerate(zip(rows, tests, strict=True)):
        if tested and r["family"]:
            fams[r["family"]].append(i)
    for idx in fams.values():
        for i, adj in zip(idx, holm([float(rows[i]["p_value"]) for i in idx]), strict=True):
            out[i] = adj
    return out


def family_sizes(rows: list[dict], tests: list[bool]) -> dict[str, int]:
    sizes: dict[str, int] = defaultdict(int)
    for r, tested in zip(rows, tests, strict=True):
        if tested and r["family"]:
            sizes[r["family"]] += 1
    return dict(sizes)


def claim_verdicts(rows: list[dict]) -> dict[str, tuple[str, str]]:
    """claim key -> (its verdict, why when its deciding rows disagree)."""
    out = {}
    by_claim: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["decides"]:
            by_claim[r["claim_key"]].append(r)
    for key, rs in by_claim.items():
        ran = [r for r in rs if r["verdict"] != NOT_RUN]
        found = {r["verdict"] for r in ran}
        if not ran:
            out[key] = (NOT_RUN, "")
        elif len(found) == 1:
            out[key] = (found.pop(), "")
        else:
            named = "; ".join(f"{r['claim_id']} on {r['dataset']}: {r['verdict']}" for r in ran)
            out[key] = (UNDECIDED, f"its deciding rows disagree ({named})")
    return out
