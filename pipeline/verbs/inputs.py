"""ingest, tree and the parse verbs: from the inputs to DocTrees."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pipeline.verbs.base import named_pairs, verb


def cmd_ingest(a) -> None:
    from pipeline.datasets.ingest import ingest

    print(json.dumps(ingest(a.metadata, named_pairs(a.split), a.metadata_out, named_pairs(a.out_split))))


def cmd_corpus_ingest(a) -> None:
    from pipeline.datasets.corpus import CorpusSource, ingest_corpus
    from pipeline.parse.titles import document_title

    opt = {k: Path(v) for k, v in (("solutions", a.solutions), ("metadata", a.metadata)) if v}
    src = CorpusSource(a.name, Path(a.pdf_dir), Path(a.questions), **opt)
    print(json.dumps(ingest_corpus(src, Path(a.out_dir), title_of=document_title)))


def cmd_first_questions(a) -> None:
    from pipeline.datasets.first_n import first_questions

    print(json.dumps({"questions": len(first_questions(a.questions, a.limit, a.out))}))


def cmd_questions_gold(a) -> None:
    """The labels of the questions a file lists: the verbs first-gold (a smoke run's) and power-gold (a power
    sample's), each named for the rule that calls it."""
    from pipeline.datasets.first_n import first_gold

    print(json.dumps({"gold": first_gold(a.gold, a.questions, a.out)}))


def cmd_tree(a) -> None:
    from pipeline.parse.commands import describer_from, pdf_limits
    from pipeline.parse.document import parse_document
    from pipeline.parse.errors import ParseError, failed_tree
    from pipeline.provenance import write_manifest

    try:
        tree = parse_document(
            a.source, a.doc_id, a.title, describe=describer_from(a), headings=a.headings, limits=pdf_limits(a)
        )
    except ParseError as exc:  # the run goes on; `parse-errors` reports it at the end
        print(f"warning: {exc}", file=sys.stderr)
        tree = failed_tree(a.doc_id, a.source, exc.reason)
    tree.check()
    tree.save(a.out)
    suffix = Path(a.source).suffix.lstrip(".")
    shaped = (
        {"parser": suffix}
        | ({"headings": a.headings} if suffix == "pdf" else {})
        | ({"vision_model": a.vision_model} if a.vision_model else {})
    )
    write_manifest(a.out, shaped, [a.source])


def add_question_cut_verbs(sub) -> None:
    """The verbs that cut a split's questions and their labels: a smoke run's first N, a power sample's labels."""
    s = verb(
        sub,
        "first-questions",
        cmd_first_questions,
        "a smoke run's questions (config limit: N): the first N of a split, in file order, and their labels",
        "--questions",
        "--out",
    )
    s.add_argument("--limit", type=int, required=True, help="how many questions (the config's limit)")
    verb(
        sub,
        "first-gold",
        cmd_questions_gold,
        "a smoke run's labels: those of the questions first-questions kept (CSV with id, or a suite's gold JSONL)",
        "--gold",
        "--questions",
        "--out",
    )
    verb(
        sub,
        "power-gold",
        cmd_questions_gold,
        "a power sample's labels: those of the questions power-sample drew",
        "--gold",
        "--questions",
        "--out",
    )


def add_verbs(sub) -> None:
    """ingest, tree and the parse verbs: from the inputs to DocTrees."""
    s = verb(
        sub, "ingest", cmd_ingest, "validate WattBot inputs, write clean UTF-8 copies", "--metadata", "--metadata-out"
    )
    s.add_argument(
        "--split", action="append", default=[], metavar="NAME=PATH", help="a question split to check (repeatable)"
    )
    s.add_argument(
        "--out-split",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="where to write the clean copy of split NAME (repeatable)",
    )

    add_question_cut_verbs(sub)

    s = verb(
        sub,
        "corpus-ingest",
        cmd_corpus_ingest,
        "check your own corpus (documents, questions, labels), write clean copies",
    )
    s.add_argument("--name", required=True, help="the corpus's name (its key under corpora: in the config)")
    s.add_argument(
        "--pdf-dir", required=True, help="the folder of its documents: <doc_id>.pdf, .txt or .md (doc id = file stem)"
    )
    s.add_argument("--questions", required=True, help="its questions CSV, UTF-8: id, question[, answer_unit]")
    s.add_argument(
        "--solutions",
        default=None,
        help="its labels CSV in the WattBot format, UTF-8: id, answer_value, answer_unit, ref_id[, ...] (optional)",
    )
    s.add_argument(
        "--metadata",
        default=None,
        help="its documents CSV in the WattBot format, UTF-8: id, type, title, year, citation, url (optional; "
        "default: titles from the PDFs' metadata or the file names, empty url)",
    )
    s.add_argument(
        "--out-dir", required=True, help="the folder to write metadata.csv, questions.csv and solutions.csv into"
    )

    s = sub.add_parser(
        "tree", help="parse one document (a PDF, WattBot's pre-extracted JSON or text) into a DocTree JSON"
    )
    s.add_argument(
        "--source", required=True, help="the document: a PDF, a pre-extracted JSON (WattBot's) or a text file"
    )
    s.add_argument("--doc-id", required=True, help="its id (metadata.csv's id column)")
    s.add_argument("--title", default=None, help="its title (default: the one the document carries)")
    s.add_argument("--out", required=True, help="the DocTree JSON to write")
    from pipeline.parse.commands import add_headings_arg, add_parse_verbs, add_pdf_limit_args, add_vision_args

    add_vision_args(s)
    add_headings_arg(s)
    add_pdf_limit_args(s)
    s.set_defaults(fn=cmd_tree)
    add_parse_verbs(sub)
