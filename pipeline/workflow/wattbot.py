"""WattBot's files as the rules read them: its documents, their sources, its question splits, and the
options of the ``tree`` verb that parses one document."""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.config_schema import declared_defaults
from pipeline.datasets.wattbot import InputError, check_pdf_dir, document_source, load_labels, load_metadata
from pipeline.specs import ParsingSpec
from pipeline.workflow.params import as_json, shell_arg


def doc_ids(cfg: dict) -> list[str]:
    """All documents of the metadata, or the configured subset (an unknown id is an error)."""
    known = sorted(load_metadata(Path(cfg["wattbot"]["dir"]) / "metadata.csv")["id"])
    subset = cfg["wattbot"].get("docs")
    if not subset:
        return known
    unknown = sorted(set(subset) - set(known))
    if unknown:
        raise ValueError(f"config key 'wattbot.docs': unknown document id(s) {', '.join(unknown)}")
    return sorted(subset)


def pdf_fallback_docs(cfg: dict) -> list[str]:
    """The documents parsed from the extracted text although ``wattbot.pdf_dir`` is set (their PDF is missing
    and ``wattbot.pdf_fallback`` says so); [] without a PDF folder. Without a stated fallback a missing PDF is
    an error naming them all, raised when the DAG is built (before any job runs)."""
    wb = cfg["wattbot"]
    if not wb.get("pdf_dir"):
        return []
    docs = doc_ids(cfg)
    used = check_pdf_dir(docs, Path(wb["pdf_dir"]), wb.get("pdf_fallback"))
    if used:
        shown = ", ".join(used[:5]) + (", ..." if len(used) > 5 else "")
        _say_once(
            f"warning: wattbot.pdf_fallback: {wb['pdf_fallback']}: {len(used)} of {len(docs)} documents "
            f"have no PDF in {wb['pdf_dir']} and are parsed from the extracted text ({shown})"
        )
    return used


_SAID: set[str] = set()


def _say_once(line: str) -> None:
    """The DAG asks for every document's source (twice): the run output states the fallback once."""
    if line not in _SAID:
        _SAID.add(line)
        print(line, file=sys.stderr)


def tree_source(cfg: dict, doc: str) -> str:
    wb = cfg["wattbot"]
    pdf_dir = Path(wb["pdf_dir"]) if wb.get("pdf_dir") else None
    pdf_fallback_docs(cfg)  # a half-filled PDF folder stops the DAG with one line naming every missing PDF
    return str(document_source(doc, Path(wb["dir"]) / "corpus", pdf_dir, wb.get("pdf_fallback")))


def split_source(cfg: dict, split: str) -> str:
    return str(Path(cfg["wattbot"]["dir"]) / cfg["wattbot"]["splits"][split])


def labels_source(cfg: dict, split: str) -> str:
    """The labels file of a labelled split: ``wattbot.solutions[split]``, else (the score split without
    one) the split's own questions file, which carries its labels (train_QA.csv)."""
    wb = cfg["wattbot"]
    name = (wb.get("solutions") or {}).get(split)
    return str(Path(wb["dir"]) / name) if name else split_source(cfg, split)


def extra_labelled_splits(cfg: dict) -> list[str]:
    """The splits scored besides the score split (``wattbot.solutions`` names them; [] without it), sorted."""
    wb = cfg["wattbot"]
    return sorted(s for s in wb.get("solutions") or {} if s != wb["score_split"])


def labelled_splits(cfg: dict) -> list[str]:
    """Every scored split, the score split first: the leaderboard's blocks, in order."""
    return [cfg["wattbot"]["score_split"], *extra_labelled_splits(cfg)]


def check_labels(cfg: dict) -> None:
    """Each ``wattbot.solutions`` file checked before any job (the Snakefile calls this): a split that does
    not exist, a file that is not there, a missing column, a duplicate id or an id that is not a question of
    the split stops the run with one line naming the file, row and column."""
    wb = cfg["wattbot"]
    if not Path(wb["dir"]).is_dir():  # WattBot left out of the DAG (a corpora-only run: pipeline/config check_paths)
        return
    for split in sorted(wb.get("solutions") or {}):
        if split not in wb["splits"]:
            raise InputError(
                f"config key 'wattbot.solutions.{split}': no split '{split}' in wattbot.splits "
                f"({', '.join(sorted(wb['splits']))})"
            )
        load_labels(labels_source(cfg, split), split_source(cfg, split))


def parse_options(cfg: dict, source: str = "") -> str:
    """The ``tree`` verb's parsing options: the heading method for a PDF source (JSON and text trees do not
    use it, so their params, and Snakemake's rerun check, stay as they were), and the vision model when set."""
    parsing = cfg["parsing"]
    headings = f"--headings {parsing['headings']}" if source.lower().endswith(".pdf") else ""
    caps = declared_defaults(ParsingSpec)  # guards, like a timeout: passed when not the tree verb's own default
    for key in ("max_pdf_mb", "max_pdf_pages"):  # (so a PDF's tree params, and rerun check, are as before)
        if headings and parsing[key] != caps[key]:
            headings += f" --{key.replace('_', '-')} {parsing[key]}"
    vision = parsing["vision"]
    if not vision["model"]:
        return headings
    return f"{headings} ".lstrip() + " ".join(
        [
            "--vision-model",
            shell_arg(vision["model"]),
            "--vision-params",
            shell_arg(as_json(vision["params"])),
            "--cache-dir",
            shell_arg(cfg["cache_dir"]),
            "--llm-mode",
            cfg["llm"]["mode"],
        ]
    )
