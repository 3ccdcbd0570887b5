"""``python -m pipeline compare A B``: two kept runs (pipeline/kept_runs/store.py), question by question.

A is the control, B the treatment: per dataset and split both scored, per variant both ran and per
metric, the paired difference B − A of the mean on the questions both scored, with the paired sign-flip
test's p and the 95% interval that is its inversion (the ablations' :func:`pipeline.report.stats.ablation.compare`,
the same sign convention: treatment − control), and the variants only one run has. Every split a run kept
is paired (WattBot's train and test each); a run kept before splits had folders of their own is read
from the paths its run.json recorded. Two runs are
compared only on the same footing: when a shared dataset's gold file, metric profile or scored
question set differ, it refuses with one line (the CLI exits 2) instead of printing differences that
measure the change of data or metric rather than of the system.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.kept_runs.store import RUNS, read_record, resolve_kept
from pipeline.names import inside
from pipeline.report.params import DEFAULT_RESAMPLING, Resampling
from pipeline.report.stats.ablation import compare

COLUMNS = [
    "dataset",
    "split",
    "metric",
    "variant",
    "control",
    "treatment",
    "n",
    "control_mean",
    "treatment_mean",
    "diff",
    "diff_lo",
    "diff_hi",
    "p_value",
    "only_in",
]


class NotComparable(ValueError):
    """Two runs scored on different gold files, metrics or questions: one line saying which."""


@dataclass(frozen=True)
class KeptScores:
    """One dataset and split a kept run scored (an entry of ``run.json``'s ``scored``), typed."""

    dataset: str
    split: str
    id_column: str
    scores: dict[str, str]  # variant -> its per-question file, relative to the kept run's folder
    metrics: list[str]
    gold: str
    gold_sha256: str
    metric_profile: dict
    questions: int
    questions_sha256: str

    @classmethod
    def from_dict(cls, entry: dict) -> KeptScores:
        return cls(**{k: entry[k] for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class KeptRun:
    folder: Path
    record: dict

    @classmethod
    def named(cls, name: str, root: str | Path = RUNS) -> KeptRun:
        folder = resolve_kept(name, root)
        return cls(folder, read_record(folder))

    @property
    def id(self) -> str:
        return self.record["id"]

    def scored(self) -> dict[str, KeptScores]:
        return {f"{s['dataset']}/{s['split']}": KeptScores.from_dict(s) for s in self.record.get("scored", [])}

    def table(self, entry: KeptScores, variant: str) -> pd.DataFrame:
        col = entry.id_column
        return pd.read_csv(inside(self.folder, entry.scores[variant]), dtype={col: str}).set_index(col)


def check_comparable(a: KeptRun, b: KeptRun) -> list[str]:
    """The dataset/split keys both scored, after checking each is scored alike (else :class:`NotComparable`)."""
    sa, sb = a.scored(), b.scored()
    shared = [k for k in sa if k in sb]  # in the order the run scored them: WattBot first
    if not shared:
        raise NotComparable(f"compare {a.id} {b.id}: no dataset and split scored by both ({_keys(sa)} vs {_keys(sb)})")
    for key in shared:
        x, y = sa[key], sb[key]
        why = None
        if x.gold_sha256 != y.gold_sha256:
            why = f"the gold file differs ({x.gold} sha256 {x.gold_sha256[:12]} vs {y.gold_sha256[:12]})"
        elif x.metric_profile != y.metric_profile:
            keys = sorted(k for k in {*x.metric_profile, *y.metric_profile} if _differs(x, y, k))
            why = f"the metric profile differs ({', '.join(keys)})"
        elif x.questions_sha256 != y.questions_sha256:
            why = f"the scored question set differs ({x.questions} vs {y.questions} questions)"
        if why:
            raise NotComparable(f"compare {a.id} {b.id}: not comparable on {key}: {why}")
    return shared


def _differs(x: KeptScores, y: KeptScores, k: str) -> bool:
    return x.metric_profile.get(k) != y.metric_profile.get(k)


def _keys(scored: dict) -> str:
    return ", ".join(sorted(scored)) or "nothing"


def _base(a: KeptRun, b: KeptRun, entry: KeptScores) -> dict:
    return {"dataset": entry.dataset, "split": entry.split, "control": a.id, "treatment": b.id}


def paired_rows(a: KeptRun, b: KeptRun, key: str, rep: Resampling) -> list[dict]:
    """One row per variant both ran and metric: B − A on their shared questions."""
    x, y = a.scored()[key], b.scored()[key]
    rows = []
    for v in sorted(set(x.scores) & set(y.scores)):
        tables = {a.id: a.table(x, v), b.id: b.table(y, v)}
        for m in x.metrics:
            control, treatment = compare(tables, [a.id, b.id], m, rep)
            rows.append(
                {**_base(a, b, x), "metric": m, "variant": v, "n": treatment["n"]}
                | {"control_mean": control["mean"], "treatment_mean": treatment["mean"]}
                | {k: treatment[k] for k in ("diff", "diff_lo", "diff_hi", "p_value")}
            )
    return rows


def only_rows(a: KeptRun, b: KeptRun) -> list[dict]:
    """One row per variant only one run has, in a dataset both scored or in one only that run scored."""
    rows = []
    for side, run, mine, other in (("control", a, a.scored(), b.scored()), ("treatment", b, b.scored(), a.scored())):
        for key, entry in mine.items():
            theirs = set(other[key].scores) if key in other else set()
            alone = sorted(set(entry.scores) - theirs)
            rows += [{**_base(a, b, entry), "variant": v, "only_in": f"{side} {run.id}"} for v in alone]
    return rows


def compare_runs(a: KeptRun, b: KeptRun, rep: Resampling = DEFAULT_RESAMPLING) -> pd.DataFrame:
    """The comparison table (:data:`COLUMNS`): the paired rows, then the variants only one run has."""
    if a.folder.resolve() == b.folder.resolve():
        raise NotComparable(f"compare {a.id} {b.id}: the same kept run twice")
    rows = [r for key in check_comparable(a, b) for r in paired_rows(a, b, key, rep)]
    return pd.DataFrame(rows + only_rows(a, b)).reindex(columns=COLUMNS)


def _fmt(x: float, signed: bool = False) -> str:
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def compare_lines(a: KeptRun, b: KeptRun, table: pd.DataFrame) -> list[str]:
    """The printed comparison: a header naming control and treatment, one line per paired row, then the
    variants only one run has."""
    lines = [
        f"compare {a.id} (control, A) -> {b.id} (treatment, B): B − A on the questions both scored, "
        "95% interval of the paired sign-flip test (its inversion), its p"
    ]
    paired = table[table["only_in"].isna()]
    if len(paired):
        shown = pd.DataFrame(
            {
                "dataset/split": paired["dataset"] + "/" + paired["split"],
                "metric": paired["metric"],
                "variant": paired["variant"],
                "n": paired["n"].astype(int),
                "A": paired["control_mean"].map(_fmt),
                "B": paired["treatment_mean"].map(_fmt),
                "B − A [95% CI]": [
                    f"{_fmt(d, True)} [{_fmt(lo, True)}, {_fmt(hi, True)}]"
                    for d, lo, hi in zip(paired["diff"], paired["diff_lo"], paired["diff_hi"])
                ],
                "p": paired["p_value"].map(lambda p: f"{p:.3g}"),
            }
        )
        lines += shown.to_string(index=False).splitlines()
    for who in table["only_in"].dropna().unique():
        only = table[table["only_in"] == who]
        lines.append(f"only in {who}: " + ", ".join(only["dataset"] + "/" + only["split"] + " " + only["variant"]))
    return lines


def default_out(a: KeptRun, b: KeptRun, root: str | Path = RUNS) -> Path:
    return inside(root, f"compare-{a.id}-{b.id}.csv")  # ids are names (read_record): this stays in root
