"""`make docs-diagram`: the DAG diagram of docs/architecture.md, generated from Snakemake's rulegraph.

Plans the main job (config.yaml, `snakemake -n --rulegraph` in a scratch folder, so no file of this
checkout counts as done) and writes the graph as a Mermaid flowchart between the RULEGRAPH markers
of docs/architecture.md, one box per rule, grouped by the rule file that defines it. No hand-drawn
copy to drift: tests/test_docs.py checks the diagram's rules are the rulegraph's.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"
BEGIN, END = "<!-- BEGIN rulegraph: make docs-diagram -->", "<!-- END rulegraph -->"
RULE = re.compile(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", re.M)


def rule_files() -> dict[str, str]:
    """Rule name -> the file defining it (``Snakefile``, ``wattbot.smk``, ...)."""
    out = {}
    for path in [REPO / "Snakefile", *sorted((REPO / "pipeline" / "rules").glob("*.smk"))]:
        out.update({m.group(1): path.name for m in RULE.finditer(path.read_text())})
    return out


def rulegraph_dot(data_root: str | None = None) -> str:
    """``snakemake -n --rulegraph`` of config.yaml's main job, planned in a scratch folder."""
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    env = {**os.environ, **{k: os.environ.get(k, "planning-only") for k in (cfg.get("llm") or {}).get("envvars", [])}}
    root = data_root or str((REPO.parent / "shared" / "data").resolve())
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", work,
             "--configfile", str(REPO / "config.yaml"), "--config", f"data_root={root}", "-n", "--rulegraph",
             "--quiet", "all"], capture_output=True, text=True, env=env, check=True)
    return done.stdout


def parse_dot(dot: str) -> tuple[set[str], set[tuple[str, str]]]:
    """Rules and (upstream, downstream) edges of a rulegraph."""
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, re.M))
    edges = {(names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.M)}
    return set(names.values()), edges


def mermaid(rules: set[str], edges: set[tuple[str, str]]) -> str:
    files = rule_files()
    lines = ["```mermaid", "flowchart LR"]
    for group in sorted({files.get(r, "?") for r in rules}):
        lines.append(f"  subgraph {group.replace('.', '_')}[{group}]")
        lines += [f"    {r}" for r in sorted(rules) if files.get(r, "?") == group]
        lines.append("  end")
    lines += [f"  {a} --> {b}" for a, b in sorted(edges)]
    return "\n".join([*lines, "```"])


def diagram_in(text: str) -> str:
    """The Mermaid block between the markers of ``text``."""
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def parse_mermaid(block: str) -> tuple[set[str], set[tuple[str, str]]]:
    edges = set(re.findall(r"^\s+(\w+) --> (\w+)$", block, re.M))
    rules = set(re.findall(r"^    (\w+)$", block, re.M))
    return rules, edges


def main() -> None:
    text = PAGE.read_text()
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    PAGE.write_text(f"{head}{BEGIN}\n{mermaid(*parse_dot(rulegraph_dot()))}\n{END}{tail}")
    print(f"{PAGE.relative_to(REPO)}: rulegraph diagram regenerated")


if __name__ == "__main__":
    main()
