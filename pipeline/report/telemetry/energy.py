"""What a run costs the planet: an energy and CO2 *estimate* per answering and retrieval variant.

WattBot is about AI's energy, so the harness says what its own run drew: what the run measured (CPU
seconds per job from Snakemake's ``benchmarks/*.tsv``, attributed to a variant by the benchmark
path's wildcards; the tokens of LLM calls to models served elsewhere) times a stated power model
(config ``energy``). The constants are assumptions, not measurements; what is counted, the formula
and why RAPL is not read: docs/energy.md. It depends on measured time, so it is run telemetry
(``reports/energy.telemetry.{csv,json}``), outside the byte-identical results.
"""

from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from pipeline.io import atomic_write_text
from pipeline.report.telemetry.time_table import ANSWER_TELEMETRY, BENCHMARK_PATTERNS, JobTime, read_benchmarks
from pipeline.report_specs import PowerModel  # config `energy`: its keys declared beside its fields

TABLE, SUMMARY = "energy.telemetry.csv", "energy.telemetry.json"
COLUMNS = ["kind", "variant", "jobs", "cpu_s", "cpu_kwh", "hosted_llm_tokens", "llm_kwh", "kwh", "gco2e"]
# benchmark wildcard -> the kind of variant it names (the first one a path has wins)
VARIANT_WILDCARDS = {"av": "answering", "rv": "retrieval", "index": "index"}
RAPL_GLOB = "/sys/class/powercap/intel-rapl*/energy_uj"
ESTIMATE = (
    "An estimate, not a measurement: measured CPU seconds and hosted LLM tokens times stated constants "
    "(docs/energy.md)."
)


def _wildcard_regex(pattern: str) -> re.Pattern:
    """A benchmark pattern with named groups: variant names and splits are one path segment, other
    wildcards (e.g. ``{scope}``, which may hold a slash) anything."""
    out = []
    for part in re.split(r"(\{\w+\})", pattern):
        name = part[1:-1] if part.startswith("{") else None
        if name is None:
            out.append(re.escape(part))
        else:
            out.append(f"(?P<{name}>[^/]+)" if name in (*VARIANT_WILDCARDS, "split") else f"(?P<{name}>.+)")
    return re.compile("".join(out) + "$")


RULE_WILDCARDS = {rule: _wildcard_regex(p) for rule, p in BENCHMARK_PATTERNS.items()}


def attribute(job: JobTime) -> tuple[str, str]:
    """``(kind, variant)`` a job's CPU seconds count for: its ``{av}``/``{rv}``/``{index}`` wildcard,
    else ``("shared", rule)``."""
    rx = RULE_WILDCARDS.get(job.rule)
    m = rx.match(f"benchmarks/{job.job}.tsv") if rx else None
    if m:
        for wildcard, kind in VARIANT_WILDCARDS.items():
            if m.groupdict().get(wildcard):
                return kind, m.group(wildcard)
    return "shared", job.rule


@dataclass(frozen=True)
class EnergyInputs:
    """What the estimate reads of the config, parsed once by its driver (the ``time-table`` verb): the
    constants and the answering variants whose LLM calls are not served elsewhere."""

    power: PowerModel
    served_here: frozenset[str] = frozenset()

    def served_elsewhere(self, av: str) -> bool:
        """Whether ``av``'s calls ran on someone else's machine; a variant no longer in the config counts
        as served elsewhere (the higher estimate)."""
        return av not in self.served_here


def hosted_tokens(root: str | Path, inputs: EnergyInputs) -> dict[str, int]:
    """Answering variant -> prompt + generated tokens of its live calls to a model served elsewhere
    (every split's telemetry)."""
    from pipeline.io import read_jsonl

    out: dict[str, int] = {}
    for path in sorted(Path(root).glob(ANSWER_TELEMETRY)):
        av = path.parent.name
        if not inputs.served_elsewhere(av):
            continue
        live = [r for r in read_jsonl(path) if not r.get("cached")]
        tokens = sum(int(r.get("prompt_tokens") or 0) + int(r.get("completion_tokens") or 0) for r in live)
        out[av] = out.get(av, 0) + tokens
    return out


def energy_table(jobs: list[JobTime], tokens: dict[str, int], power: PowerModel) -> pd.DataFrame:
    """One row per (kind, variant), the most energy first, then ``all``: CPU s and tokens, kWh, gCO2e."""
    rows: dict[tuple[str, str], dict] = {}
    for j in jobs:
        row = rows.setdefault(attribute(j), {"jobs": 0, "cpu_s": 0.0, "hosted_llm_tokens": 0})
        row["jobs"] += 1
        row["cpu_s"] += j.cpu_s
    for av, n in tokens.items():
        rows.setdefault(("answering", av), {"jobs": 0, "cpu_s": 0.0, "hosted_llm_tokens": 0})["hosted_llm_tokens"] += n
    counted = ["kind", "variant", "jobs", "cpu_s", "hosted_llm_tokens"]
    df = pd.DataFrame([{"kind": k, "variant": v, **r} for (k, v), r in rows.items()], columns=counted)
    total = {"kind": "all", "variant": "all", **{c: df[c].sum() for c in ("jobs", "cpu_s", "hosted_llm_tokens")}}
    df = pd.concat([df, pd.DataFrame([total])], ignore_index=True) if len(df) else pd.DataFrame([total])
    df["cpu_kwh"] = df["cpu_s"].map(power.cpu_kwh)
    df["llm_kwh"] = df["hosted_llm_tokens"].map(power.llm_kwh)
    df["kwh"] = df["cpu_kwh"] + df["llm_kwh"]
    df["gco2e"] = df["kwh"].map(power.gco2e)
    df["order"] = df["kind"] == "all"
    df = df.sort_values(["order", "kwh", "kind", "variant"], ascending=[True, False, True, True], kind="stable")
    for c in ("cpu_kwh", "llm_kwh", "kwh"):
        df[c] = df[c].round(9)
    df["cpu_s"] = df["cpu_s"].round(1)
    df["gco2e"] = df["gco2e"].round(6)
    return df[COLUMNS].reset_index(drop=True)


def rapl_note(pattern: str = RAPL_GLOB) -> str:
    """Whether RAPL energy counters are readable here (never used for the numbers: see the module)."""
    readable = [p for p in glob.glob(pattern) if os.access(p, os.R_OK)]
    if readable:
        return (
            f"RAPL counters are readable here ({len(readable)}) but not used: they cannot be split between jobs "
            "running side by side; the stated constants are used instead."
        )
    return "No readable RAPL counters here: the stated constants are the only source (a TDP-style fallback)."


def energy_summary(table: pd.DataFrame, power: PowerModel, rapl: str) -> dict:
    """The totals with every assumption beside them (``reports/energy.telemetry.json``)."""
    total = table[table["kind"] == "all"].iloc[0]
    return {
        "estimate": True,
        "note": ESTIMATE,
        "kwh": float(total["kwh"]),
        "gco2e": float(total["gco2e"]),
        "cpu_s": float(total["cpu_s"]),
        "hosted_llm_tokens": int(total["hosted_llm_tokens"]),
        "power_model": asdict(power),
        "formula": (
            "CPU kWh = CPU s x cpu_watts_per_core x pue / 3.6e6; LLM kWh = hosted tokens / 1000 x "
            "llm_wh_per_1k_tokens / 1000; gCO2e = kWh x grid_gco2_per_kwh"
        ),
        "rapl": rapl,
    }


def write_energy(root: str | Path, reports: str | Path, inputs: EnergyInputs) -> dict:
    """Read ``<root>/benchmarks`` and the answer telemetry; write the table and the summary into ``reports``."""
    power = inputs.power
    table = energy_table(read_benchmarks(root), hosted_tokens(root, inputs), power)
    reports = Path(reports)
    atomic_write_text(reports / TABLE, table.to_csv(index=False, lineterminator="\n"))
    summary = energy_summary(table, power, rapl_note())
    atomic_write_text(reports / SUMMARY, json.dumps(summary, indent=1) + "\n")
    return summary


def energy_line(summary: dict, label: str = "Energy") -> str:
    """The run summary's one line: total kWh and gCO2e, labelled an estimate, with its main constants."""
    p = summary["power_model"]
    return (
        f"{label} (estimate): {summary['kwh']:.3g} kWh, {summary['gco2e']:.3g} gCO2e "
        f"({p['cpu_watts_per_core']:g} W per busy core, {p['llm_wh_per_1k_tokens']:g} Wh per 1k hosted LLM tokens, "
        f"{p['grid_gco2_per_kwh']:g} gCO2/kWh, {p['country']}; docs/energy.md)"
    )
