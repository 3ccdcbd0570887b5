"""Power-sized samples (``power_subsets:``): the files a group's variants answer and are scored on.

A group's variants answer its sample of ``power_subsets.split`` instead of the whole split
(pipeline/report/stats/power.py sizes and draws it; the ``power_sample`` rule): their answer job reads
the sample's questions, their scoring job the sample's labels. The sample is drawn from the split's
labelled ids alone (the ``labelled_ids`` rule), so no answer job reads a labels file
(tests/labels/test_no_leakage.py). Without ``power_subsets`` every path is what it was.
"""

from __future__ import annotations

from pipeline import paths
from pipeline.workflow.datasets import gold_path, questions_path
from pipeline.workflow.params import as_json


def power_split(cfg: dict) -> str | None:
    return (cfg.get("power_subsets") or {}).get("split")


def groups(cfg: dict) -> dict[str, dict]:
    return (cfg.get("power_subsets") or {}).get("groups") or {}


def group_of(cfg: dict, variant: str, split: str) -> str | None:
    """The group whose sample ``variant`` answers on ``split`` (None: it answers every question)."""
    if split != power_split(cfg):
        return None
    return next((g for g, spec in groups(cfg).items() if variant in spec["variants"]), None)


def answer_questions(cfg: dict, variant: str, dataset: str, split: str) -> str:
    """The questions an answer job of ``variant`` reads: its group's sample, else the split's."""
    group = group_of(cfg, variant, split) if dataset == paths.WATTBOT else None
    return paths.power_questions(group, split) if group else questions_path(dataset, split)


def split_labels(cfg: dict, variant: str, split: str) -> str:
    """The labels ``variant`` is scored against on ``split``: those of its group's sample, else the split's."""
    group = group_of(cfg, variant, split)
    return paths.power_gold(group, split) if group else gold_path(cfg, paths.WATTBOT, split)


def pilot_files(cfg: dict, group: str) -> dict[str, str]:
    """The group's variants' per-question scores on the score split: the pilot its sample is sized from."""
    return {v: paths.per_question(v) for v in groups(cfg)[group]["variants"]}


def sample_params(cfg: dict, group: str) -> str:
    """The ``power-sample`` verb's params: seed, floor and the group's claims as the sizing reads them
    (variants and published effect from pipeline/report/claims/claims.yaml, each with its cap)."""
    from pipeline.report.claims.claim import load_claims

    spec, ps = groups(cfg)[group], cfg["power_subsets"]
    by_id = {c.id: c for c in load_claims()}
    claims = []
    for cid, cap in spec["claims"].items():
        c = by_id.get(cid)
        if c is None:
            raise ValueError(f"config key 'power_subsets.groups.{group}.claims': no claim '{cid}' in claims.yaml")
        if not isinstance(c.control, str) or c.effect is None or c.effect.on(paths.WATTBOT) is None:
            raise ValueError(
                f"config key 'power_subsets.groups.{group}.claims': claim '{cid}' needs one control and a "
                "published effect on wattbot to be sized by power"
            )
        missing = [v for v in c.variants if v not in spec["variants"]]
        if missing:
            raise ValueError(
                f"config key 'power_subsets.groups.{group}.variants': claim '{cid}' also compares {', '.join(missing)}"
            )
        value = c.effect.on(paths.WATTBOT)
        claims.append(
            dict(
                id=cid,
                treatment=c.treatment,
                control=c.control,
                effect=value,
                kind=c.effect.kind,
                metric=c.metric,
                cap=int(cap),
            )
        )
    return as_json({"seed": ps["seed"], "floor": ps["floor"], "claims": claims})


def sample_caps(cfg: dict) -> dict[tuple[str, str], int]:
    """(variant, split) -> the most questions its group's sample can hold (its largest cap): the estimate's count."""
    split = power_split(cfg)
    return {(v, str(split)): max(spec["claims"].values()) for spec in groups(cfg).values() for v in spec["variants"]}
