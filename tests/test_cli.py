"""The CLI explains itself: every verb has a description and every option a help text (read off the
parser, so a new verb or flag without one fails here); the verbs the rules and the Makefile call
exist; `list` and `config` show the grid and where each resolved value came from."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from pipeline.cli import USER_VERBS, build_parser, main

ROOT = Path(__file__).resolve().parents[1]
GRID = str(ROOT / "tests" / "grid.yaml")


def verbs() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_verb_has_a_description_and_every_option_a_help_text():
    missing = []
    for name, parser in verbs().items():
        if not (parser.description or "").strip():
            missing.append(f"{name}: no description")
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}: no help")
        parser.format_help()  # renders (a stray % in a help text would raise here)
    assert not missing, missing


def test_help_shows_the_description_and_meaningful_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    assert "indexing and encoder throughput" in out  # the verb's description
    assert "(default: 3)" in out and "default: config.yaml)" in out
    assert "(default: None)" not in out and "(default: False)" not in out


def test_top_level_help_lists_user_verbs_first_and_the_rules_verbs_apart(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    by_hand, _, steps = out.partition("steps the Snakemake rules call")
    assert steps, out
    for name in USER_VERBS:
        assert re.search(rf"^  {re.escape(name)}\s", by_hand, re.M), name
    for name in ("ingest", "index", "retrieve", "answer", "evaluate", "figures", "suite-export"):
        assert re.search(rf"^  {re.escape(name)}\s", steps, re.M) and not re.search(rf"^  {name}\s", by_hand, re.M)


def test_every_verb_the_rules_and_the_makefile_call_exists():
    called = set()
    for path in [*ROOT.glob("pipeline/rules/*.smk"), ROOT / "Makefile"]:
        called |= set(re.findall(r"(?:{PY:q}|python) -m pipeline ([a-z][a-z0-9-]*)", path.read_text(encoding="utf-8")))
    assert len(called) > 20 and called <= set(verbs()), called - set(verbs())
    assert set(USER_VERBS) <= set(verbs())


def test_a_renamed_verb_still_runs_under_its_old_name_with_a_one_line_notice(tmp_path, capsys):
    """`parse-corpus` became `quality-pdfs` (a corpus is a `corpora:` entry: docs/architecture.md#glossary): the old
    name runs the new verb, says so in one line, and the top-level --help lists the rename."""
    from pipeline.verbs.base import RENAMED_VERBS, current_verb

    assert RENAMED_VERBS and set(RENAMED_VERBS.values()) <= set(verbs()) and not set(RENAMED_VERBS) & set(verbs())
    assert current_verb(["-v", "parse-corpus", "--scope", "sample"]) == ["-v", "quality-pdfs", "--scope", "sample"]
    notice = capsys.readouterr().err.strip().splitlines()
    assert len(notice) == 1 and "'parse-corpus' is now 'quality-pdfs'" in notice[0]
    assert current_verb(["quality-pdfs", "--out-dir", "parse-corpus"]) == ["quality-pdfs", "--out-dir", "parse-corpus"]
    assert not capsys.readouterr().err  # only the verb's place is read: a value named like an old verb stays
    with pytest.raises(SystemExit):
        main(["parse-corpus", "--help"])
    out = capsys.readouterr()
    assert "python -m pipeline quality-pdfs" in out.out and "is now 'quality-pdfs'" in out.err
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "parse-corpus -> quality-pdfs" in capsys.readouterr().out


def test_every_rule_calls_the_verb_of_its_name():
    """Rule `x_y` runs `python -m pipeline x-y`, or a verb its rule file's variants share (listed here with why)."""
    shared = {
        "evaluate_split": "evaluate",  # WattBot's other labelled splits, scored as the score split is
        "retrieve_llm": "retrieve",  # an LLM planner's retrievals: a rule of its own for its llm_api share
        "retrieve_batch": "retrieve",  # a batch of a split's queries (--batch): the whole job's code on its rows
        "retrieve_crossfit_batch": "retrieve-crossfit",  # a batch of a cross-fitted retrieval's queries (--batch)
        "encoder_qint8_rr": "encoder-qint8",  # the reduce-range file of the same export
        "sprout_fold_index": "index",  # a cross-fitted fold's trained-head index, built with that fold's heads
    }
    rule = re.compile(r"^\s*(?:rule|checkpoint) (\w+):\n(.*?)(?=^\s*(?:rule|checkpoint) |^\S|\Z)", re.M | re.S)
    calls = {}
    for path in ROOT.glob("pipeline/rules/*.smk"):
        text = path.read_text(encoding="utf-8")
        consts = dict(re.findall(r'^([A-Z_]+) = "(.*)"$', text, re.M))
        for name, body in rule.findall(text):
            shell = re.search(r"shell: (?:\"(.*)\"|([A-Z_]+)$|wf\.(\w+)\((.*)\))", body, re.M)
            if shell.group(3):  # a shell text the workflow builds (pipeline/workflow/crossfit.py crossfit_shell)
                import pipeline.workflow as wf

                fn = getattr(wf, shell.group(3))
                line = eval(f"fn({shell.group(4)})", {"fn": fn})  # noqa: S307 - the repo's own rule file
            else:
                line = shell.group(1) or consts[shell.group(2)]
            calls[name] = re.search(r"-m pipeline ([a-z][a-z0-9-]*)", line).group(1)
    assert len(calls) > 30, calls
    wrong = {n: v for n, v in calls.items() if v != shared.get(n, n.replace("_", "-"))}
    assert not wrong, wrong


def test_list_shows_every_section_of_the_grid(capsys):
    assert main(["list", "--config", GRID, "--presets", str(ROOT)]) == 0
    out = capsys.readouterr().out
    cfg = yaml.safe_load(Path(GRID).read_text(encoding="utf-8"))
    sections = dict(re.findall(r"^(\w+) \((\d+)\):$", out, re.M))
    assert sections == {
        "datasets": str(1 + len(cfg["suite"]["datasets"])),
        "retrieval": str(len(cfg["retrieval"])),
        "answering": str(len(cfg["answering"])),
        "ablations": str(len(cfg["report"]["ablations"])),
        "presets": str(len(list(ROOT.glob("config*.yaml")))),
    }
    assert re.search(r"^  hier-convex\s+hier \(tree\) top 16, levels sentence\+paragraph, \+ bm25 convex 0.7$", out, re.M)
    assert re.search(r"^  ens5\s+ensemble of convex-extractive, .*llm-cf \(answer_priority vote\)$", out, re.M)
    assert re.search(r"^  llm-cf\s+llm local/gemma3-270m on hier-convex, splits train, prompt context_first$", out, re.M)
    assert re.search(r"^  fusion-retrieval\s+retrieval: hier-convex vs hier-rrf vs hier-dense$", out, re.M)
    assert re.search(r"^  config\.mpnet\.yaml\s+The strong-encoder ablation", out, re.M)

    assert main(["list", "ablations", "--config", GRID]) == 0
    only = capsys.readouterr().out
    assert only.startswith("ablations (") and "retrieval (" not in only
    with pytest.raises(SystemExit):
        main(["list", "variants", "--config", GRID])  # not a section: argparse names the choices


def test_config_prints_the_resolved_config_and_each_values_source(tmp_path, capsys):
    from pipeline.config import load_config

    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("report: {bootstrap: 500}\nllm: {timeout_s: 60}\n", encoding="utf-8")
    assert main(["config", "--config", GRID, str(overlay), "--set", "data_root=/elsewhere", "--set", "cache_journal=nfs"]) == 0
    out = capsys.readouterr().out
    resolved = load_config([GRID, str(overlay)], {"data_root": "/elsewhere", "cache_journal": "nfs"})
    assert yaml.safe_load(out) == resolved  # valid YAML: the comments carry the sources
    source = {m[0]: m[1] for m in re.findall(r"^\s*([\w.-]+): .*#\s(\S+)$", out, re.M)}
    assert source["bootstrap"] == str(overlay) and source["timeout_s"] == str(overlay)
    assert source["data_root"] == "--set" and source["cache_journal"] == "--set"
    assert source["permutations"] == GRID  # set by the first file, not overridden
    assert source["fetch_dir"] == "default"  # a declared default, no file sets it
    assert re.search(r"^  dir: /elsewhere/wattbot\s+# " + re.escape(GRID), out, re.M)  # resolved, from its file


def test_config_errors_name_the_file(tmp_path, capsys):
    assert main(["config", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err


def test_fixed_values_are_choices_from_their_source():
    from pipeline.parse.quality_pdfs import SCOPES
    from pipeline.score.wattbot import PROFILES
    from pipeline.llm_models import LLM_MODES
    from pipeline.specs import HEADINGS

    def choices(verb: str, flag: str):
        return tuple(next(a for a in verbs()[verb]._actions if flag in a.option_strings).choices)

    assert choices("score", "--profile") == tuple(PROFILES)  # kept literal there: importing pandas would slow every job
    assert choices("parse", "--headings") == HEADINGS and choices("tree", "--llm-mode") == LLM_MODES
    assert choices("parse-quality", "--scope") == SCOPES == choices("quality-pdfs", "--scope")


def test_list_tells_apart_variants_whose_lines_read_the_same():
    from pipeline.verbs.grid import distinguished

    lines = {"a": "hier top 16", "b": "hier top 16", "c": "bm25 top 16", "d": "bm25 top 8"}
    entries = {"a": {"top_k": 16, "context": {"dedup": "tree"}}, "b": {"top_k": 16, "context": {"dedup": "none"}, "x": 1},
               "c": {"top_k": 16}, "d": {"top_k": 8}}
    assert distinguished(lines, entries) == {
        "a": 'hier top 16; context.dedup "tree", x (unset)',
        "b": 'hier top 16; context.dedup "none", x 1',
        "c": "bm25 top 16",
        "d": "bm25 top 8",
    }


@pytest.mark.parametrize("section", ["retrieval", "answering"])
def test_list_of_the_default_grid_has_no_two_variant_lines_alike(capsys, section):
    assert main(["list", section, "--config", str(ROOT / "config.yaml")]) == 0
    rows = [line.split(None, 1)[1] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert len(rows) > 5 and len(rows) == len(set(rows))
