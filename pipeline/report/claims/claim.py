"""A published claim as data: one entry of ``claims.yaml``, read and checked (:func:`load_claims`).

A claim names an ablation, a treatment and a control variant, a metric, datasets, the claimed direction of
treatment - control and, where the source gives one, the published effect. What it decides with is fixed
before the data it is judged on (issue #44):

- its control: one variant, or the best of candidates (``best_of``) chosen per dataset on data no row is
  judged on (``chosen``: the suite's pilot, config.pilot.yaml), with where and why (``why``);
- a ``negligible`` claim's smallest effect of interest (``margin``) with its reason (``margin_reason``);
- a second measurement of one claim (another sampling seed) says so (``replicate_of``): one claim in the
  headline;
- a claim made on average over datasets gives that average (``pooled``), and what its source averaged that
  this harness does not have (``pooled.absent``).

Each claim's fingerprint (:func:`fingerprint`) hashes what decides its verdict, not its prose, so a run can
say which claims differ from the registered ones (pipeline/report/claims/registration.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from pipeline.paths import CLAIMS_FILE
from pipeline.registry import metrics

DIRECTIONS = ("greater", "less", "negligible")
EFFECT_KINDS = ("absolute", "relative")
# Keys that explain rather than decide: a change of their text is no deviation from the registration
PROSE = frozenset({"claim", "source", "published", "alike_because", "margin_reason", "control_why", "ref", "why"})


@dataclass(frozen=True)
class Effect:
    """A published effect: treatment - control in the metric's units (absolute) or as a fraction of the
    control's mean (relative); one value, or one per dataset."""

    value: float | dict[str, float]
    kind: str
    ref: str

    def on(self, dataset: str) -> float | None:
        """The published value for ``dataset`` (None where the source gives none)."""
        if isinstance(self.value, dict):
            v = self.value.get(dataset)
            return None if v is None else float(v)
        return float(self.value)


@dataclass(frozen=True)
class Pooled:
    """A claim made on average over datasets: the published average, where it is read, and the datasets its
    source averaged that this harness has not (name -> why)."""

    value: float | None
    ref: str
    absent: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """One published claim as data (a row of claims.yaml)."""

    id: str
    system: str
    claim: str
    source: str
    published: str
    ablation: str
    treatment: str
    control: str | list[str]  # a variant, or the candidates of a best_of control
    metric: str
    datasets: tuple[str, ...]
    direction: str
    margin: float | None = None
    testable_if: dict | None = None
    effect: Effect | None = None
    alike_because: str = ""  # why the variants may score alike on every question (added to such rows' note)
    chosen: dict[str, str] = field(default_factory=dict)  # best_of: dataset -> the candidate chosen in advance
    control_why: str = ""  # how the control was fixed before the data it is judged on
    margin_reason: str = ""  # why the smallest effect of interest is the margin (negligible claims)
    replicate_of: str = ""  # another measurement (a sampling seed) of this claim: one claim in the headline
    pooled: Pooled | None = None
    fingerprint: str = ""  # sha256 of what decides the verdict (:func:`fingerprint`); '' when not read from a file

    @property
    def variants(self) -> list[str]:
        return [self.treatment, *([self.control] if isinstance(self.control, str) else self.control)]

    @property
    def key(self) -> str:
        """The claim the headline counts this one as (its own id, or the claim it replicates)."""
        return self.replicate_of or self.id

    def control_on(self, dataset: str) -> str | None:
        """The control on ``dataset``: the named variant, or the candidate chosen in advance (None: none was)."""
        if isinstance(self.control, str):
            return self.control
        return self.chosen.get(dataset.split("/")[0])

    def control_text(self) -> str:
        return self.control if isinstance(self.control, str) else "best of " + ", ".join(self.control)


def control_of(claim: Claim, tables: dict[str, pd.DataFrame]) -> str:
    """The best of the claim's candidates by mean ``claim.metric`` on ``tables`` (ties: the name): how a best_of
    control is chosen on a pilot (``suite-power`` prints it; claims.yaml's ``control.chosen`` records it)."""
    candidates = [claim.control] if isinstance(claim.control, str) else claim.control
    return max(candidates, key=lambda v: (tables[v][claim.metric].mean(), v))


def fingerprint(raw: dict) -> str:
    """sha256 of a claims.yaml entry without its prose (:data:`PROSE`, at any depth): what decides the verdict."""

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in PROSE}
        return [strip(v) for v in x] if isinstance(x, list) else x

    text = json.dumps(strip(raw), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _effect(cid: str, raw: dict | None) -> Effect | None:
    """The ``effect:`` entry of a claim, checked (one error naming the claim)."""
    if raw is None:
        return None
    if raw.get("kind") not in EFFECT_KINDS or not raw.get("ref"):
        raise ValueError(f"claims.yaml: claim {cid}: effect needs kind ({' or '.join(EFFECT_KINDS)}) and ref")
    values = raw.get("value")
    numbers = list(values.values()) if isinstance(values, dict) else [values]
    if not numbers or not all(_number(v) and v != 0 for v in numbers):
        raise ValueError(f"claims.yaml: claim {cid}: effect value must be a non-zero number (or one per dataset)")
    assert isinstance(values, (int, float, dict))  # checked above: a number, or one per dataset
    return Effect(values, raw["kind"], str(raw["ref"]))


def _control(cid: str, raw) -> tuple[str | list[str], dict[str, str], str]:
    """(control, chosen, why) of a claim: a named variant, or ``{best_of, chosen, why}`` whose choice per
    dataset is one of its candidates, made in advance (issue #44 item 3)."""
    if isinstance(raw, str):
        return raw, {}, ""
    if not isinstance(raw, dict) or not isinstance(raw.get("best_of"), list) or not raw["best_of"]:
        raise ValueError(f"claims.yaml: claim {cid}: control is a variant or {{best_of: [...], chosen: ..., why: ...}}")
    chosen = raw.get("chosen") or {}
    if not chosen or not raw.get("why"):
        raise ValueError(
            f"claims.yaml: claim {cid}: a best_of control names its choice per dataset, made before the data it "
            "is judged on (control.chosen), and where it was made (control.why)"
        )
    wrong = {d: v for d, v in chosen.items() if v not in raw["best_of"]}
    if wrong:
        raise ValueError(f"claims.yaml: claim {cid}: control.chosen {wrong} is not among best_of {raw['best_of']}")
    return list(raw["best_of"]), {str(d): str(v) for d, v in chosen.items()}, str(raw["why"])


def _pooled(cid: str, raw: dict | None) -> Pooled | None:
    if raw is None:
        return None
    value = raw.get("value")
    if value is not None and not (_number(value) and value != 0) or not raw.get("ref"):
        raise ValueError(f"claims.yaml: claim {cid}: pooled needs ref and a non-zero value (or none)")
    return Pooled(None if value is None else float(value), str(raw["ref"]), dict(raw.get("absent") or {}))


def _metric(cid: str, name: str) -> str:
    """A claim's ``metric``: a registered measure a claim may name (pipeline/registry/metrics.py's ``CLAIMS``
    view: those with a value per question)."""
    try:
        m, _ = metrics.parse(name)
    except (KeyError, ValueError) as e:
        raise ValueError(f"claims.yaml: claim {cid}: metric: {e.args[0]}") from None
    if metrics.CLAIMS not in m.shown:
        raise ValueError(f"claims.yaml: claim {cid}: metric {name!r} has no value per question to compare")
    return name


def _claim(raw: dict) -> Claim:
    cid = raw.get("id", "?")
    if raw.get("direction") not in DIRECTIONS:
        raise ValueError(f"claims.yaml: claim {cid}: direction must be one of {DIRECTIONS}")
    if raw["direction"] == "negligible" and not (raw.get("margin") and raw.get("margin_reason")):
        raise ValueError(
            f"claims.yaml: claim {cid}: a 'negligible' claim needs a margin (its smallest effect of interest) "
            "and margin_reason (why that one, not chosen from results)"
        )
    control, chosen, why = _control(cid, raw.get("control"))
    return Claim(
        cid,
        raw["system"],
        raw["claim"],
        raw["source"],
        str(raw["published"]),
        raw["ablation"],
        raw["treatment"],
        control,
        _metric(cid, raw["metric"]),
        tuple(raw["datasets"]),
        raw["direction"],
        raw.get("margin"),
        raw.get("testable_if"),
        _effect(cid, raw.get("effect")),
        str(raw.get("alike_because") or ""),
        chosen,
        why or str(raw.get("control_why") or ""),
        str(raw.get("margin_reason") or ""),
        str(raw.get("replicate_of") or ""),
        _pooled(cid, raw.get("pooled")),
        fingerprint(raw),
    )


def raw_claims(path: Path = CLAIMS_FILE) -> list[dict]:
    """The entries of a claims file as written."""
    return list(yaml.safe_load(Path(path).read_text())["claims"])


def load_claims(path: Path = CLAIMS_FILE) -> list[Claim]:
    """Read and check claims.yaml (one clear error naming the claim and key)."""
    out = [_claim(raw) for raw in raw_claims(path)]
    ids = [c.id for c in out]
    if len(set(ids)) != len(out):
        raise ValueError("claims.yaml: duplicate claim id")
    for c in out:
        if c.replicate_of and c.replicate_of not in ids:
            raise ValueError(f"claims.yaml: claim {c.id}: replicate_of names no claim ('{c.replicate_of}')")
    return out
