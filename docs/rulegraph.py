"""`make docs-diagram`: the two diagrams of docs/architecture.md, generated, never hand-drawn.

The floors (between the FLOORS markers) are the layers of the ``floors`` import contract in pyproject.toml
([tool.importlinter], checked by `lint-imports`), top floor first. The DAG
(between the RULEGRAPH markers) is Snakemake's rulegraph: it plans the main job (config.yaml, `snakemake -n --rulegraph` in a scratch folder, so no file of this
checkout counts as done, with empty stand-ins for the sample parse-quality PDFs `make run` downloads first) and writes the graph as a Mermaid flowchart between the RULEGRAPH markers
of docs/architecture.md, one box per rule, grouped by the rule file that defines it. No hand-drawn
copy to drift: tests/test_docs.py checks the diagram's rules are the rulegraph's.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"
BEGIN, END = "<!-- BEGIN rulegraph: make docs-diagram -->", "<!-- END rulegraph -->"
FLOORS_BEGIN, FLOORS_END = "<!-- BEGIN floors: make docs-diagram -->", "<!-- END floors -->"
RULE = re.compile(r"^\s*(?:rule|checkpoint)\s+(\w+)\s*:", re.MULTILINE)


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
        sample_pdf_placeholders(Path(work), cfg)
        done = subprocess.run(
            [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", work,
             "--configfile", str(REPO / "config.yaml"), "--config", f"data_root={root}", "-n", "--rulegraph",
             "--quiet", "all"], capture_output=True, text=True, env=env, check=True)
    return done.stdout


def sample_pdf_placeholders(work: Path, cfg: dict) -> None:
    """Empty files where `make run`'s quality-pdfs step puts the sample PDFs, so the plan holds the
    parse_quality rule as `make run`'s does (a dry run only checks that its inputs exist)."""
    sys.path.insert(0, str(REPO))
    from pipeline.parse.quality_pdfs import MANIFEST, load_manifest, select

    (work / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
    (work / MANIFEST).write_bytes((REPO / MANIFEST).read_bytes())  # the rule reads the corpus list from the run's folder
    folder = work / (cfg.get("parsing") or {}).get("quality_dir", "data/parse-corpus")
    folder.mkdir(parents=True, exist_ok=True)
    for e in select(load_manifest(REPO / MANIFEST), "sample"):
        (folder / f"{e.doc}.pdf").touch()


def parse_dot(dot: str) -> tuple[set[str], set[tuple[str, str]]]:
    """Rules and (upstream, downstream) edges of a rulegraph."""
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, re.MULTILINE))
    edges = {(names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.MULTILINE)}
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


def floors_block() -> str:
    """The ``floors`` contract's layers as a text block, top floor first (``a | b``: one floor whose
    packages must not import each other)."""
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (floors,) = [c for c in contracts if c["id"] == "floors"]
    return "\n".join(["```", *floors["layers"], "```"])


def diagram_in(text: str, begin: str = BEGIN, end: str = END) -> str:
    """The block between the markers of ``text``."""
    return text.split(begin, 1)[1].split(end, 1)[0].strip()


def replace_block(text: str, body: str, begin: str, end: str) -> str:
    head, rest = text.split(begin, 1)
    return f"{head}{begin}\n{body}\n{end}{rest.split(end, 1)[1]}"


def parse_mermaid(block: str) -> tuple[set[str], set[tuple[str, str]]]:
    edges = set(re.findall(r"^\s+(\w+) --> (\w+)$", block, re.MULTILINE))
    rules = set(re.findall(r"^    (\w+)$", block, re.MULTILINE))
    return rules, edges


def main() -> None:
    text = replace_block(PAGE.read_text(), floors_block(), FLOORS_BEGIN, FLOORS_END)
    PAGE.write_text(replace_block(text, mermaid(*parse_dot(rulegraph_dot())), BEGIN, END))
    print(f"{PAGE.relative_to(REPO)}: floors and rulegraph diagrams regenerated")


if __name__ == "__main__":
    main()
