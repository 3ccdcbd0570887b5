"""`make readme`: generated blocks are filled from reports/ (fixture results), stamped, and no result
number is typed by hand in the results-bearing sections of README.md and docs/."""
import json
import re

import pandas as pd
import pytest
import yaml

from pipeline.config import OVERLAY_CONFIGS
from pipeline.datasets.paths import REPO
from pipeline.provenance import write_manifest
from pipeline.publish.bench_doc import save_bench
from pipeline.publish.results_doc import render_attribution
from pipeline.publish.readme import BEGIN, END, REGISTRY, Renderer, doc_files, fill, split_name, write_run_readme


def block(name: str, body: str = "old 0.123\n") -> str:
    return f"{BEGIN.format(name)}\n{body}{END.format(name)}"


@pytest.fixture
def reports(tmp_path):
    """A reports/ folder as a run leaves it: files the renderers read, with manifests."""
    r = tmp_path / "reports"
    (r / "wattbot").mkdir(parents=True)
    (r / "retrieval").mkdir()
    pd.DataFrame({"variant": ["a", "b"], "backend": ["extractive"] * 2, "retrieval": ["x", "y"],
                  "score": [0.6681, 0.5], "score_lo": [0.556, 0.4], "score_hi": [0.781, 0.6], "value": [0.585, 0.4],
                  "ref": [0.89, 0.7], "na": [0.951, 0.9], "score_2026": [0.629, 0.45], "doc_hit@1": [0.949, 0.7],
                  "doc_recall@5": [1.0, 0.9], "abstained": [0, 3], "failures": [0, 1], "n": [41, 41]}
                 ).to_csv(r / "wattbot" / "leaderboard.csv", index=False)
    write_manifest(r / "wattbot" / "leaderboard.csv", {"k": 1})
    pd.DataFrame({"retrieval": ["x"], "doc_hit@1": [0.949], "doc_recall@5": [0.987], "doc_precision@5": [0.754],
                  "context_tokens": [4758.0], "quote_in_context": [0.714], "questions": [39]}
                 ).to_csv(r / "wattbot" / "retrieval.csv", index=False)
    pd.DataFrame([{"dataset": "hotpotqa", "variant": "bm25", "k": k, "recall": 0.7, "precision": 0.4, "ie": 0.1 * k,
                   "ndcg@10": 0.745, "mrr": 0.839, "queries": 70} for k in (1, 3, 5)]
                 ).to_csv(r / "retrieval" / "metrics.csv", index=False)
    write_manifest(r / "retrieval" / "metrics.csv", {"suite": 1})
    pd.DataFrame([{"ablation": "bm25-on-off", "dataset": "wattbot", "metric": "score", "reference": "a",
                   "variant": "b", "n": 41, "diff": -0.055, "diff_lo": -0.121, "diff_hi": -0.007, "p_value": 0.06}]
                 ).to_csv(r / "wattbot" / "ablation_differences.csv", index=False)
    pd.DataFrame({"variant": ["a"], "correct": [21], "wrong_value": [17]}).to_csv(r / "wattbot" / "attribution_counts.csv",
                                                                                   index=False)
    write_manifest(r / "claims.csv", {"figures": 1})  # the figures rule's manifest covers its tables (no claims here)
    save_bench({"windows_per_s": 1.04, "beam_search_ms_per_query_b1": 0.23, "docs": ["a2020", "b2021"]}, r, "sprout", {"docs": 2})
    save_bench({"fidelity_vs_fp32": {"mean_cosine": 0.998}}, r, "main", {"docs": 3})
    return r


def test_fill_renders_every_registered_block_from_reports(reports):
    commit = json.loads((reports / "wattbot" / "leaderboard.csv.manifest.json").read_text())["git_commit"][:12]
    made = [n for n, r in REGISTRY.items() if (reports / r.source).exists()]
    assert {"results-leaderboard", "results-retrieval", "results-ablations", "bench-sprout"} <= set(made)
    text = "intro\n" + "\n".join(block(n) for n in made) + "\noutro 7\n"
    out = fill(text, reports)
    assert out.startswith("intro\n") and out.endswith("\noutro 7\n") and "old 0.123" not in out
    assert "| a | extractive | x | 0.668 [0.556, 0.781] |" in out  # the leaderboard, from the CSV
    assert f"from `reports/wattbot/leaderboard.csv` (commit `{commit}`, config hash `" in out
    assert "| hotpotqa | bm25 | 0.100 | 0.300 | 0.500 |" in out  # IE@1, @3, @5 of the suite
    assert "-0.055 [-0.121, -0.007]" in out and "| a | 21 | 17 |" in out
    assert "| windows_per_s | 1.04 |" in out and "| fidelity_vs_fp32 · mean_cosine | 0.998 |" in out  # bench JSON
    assert "from `reports/bench/sprout.json` (commit" in out and "| docs | a2020, b2021 |" in out
    assert fill(out, reports) == out  # idempotent: a second `make readme` changes nothing


def test_a_block_whose_source_the_folder_lacks_keeps_its_last_rendering(reports):
    """Rendering from one reports folder (measurement blocks from --bench): a block whose file is not there
    keeps its last rendering and its old stamp; a block never rendered says what is missing."""
    old = "<sub>Rendered by `make readme` from `reports/claims.csv` (commit `abc`, config hash `def`).</sub>\n\nold 0.123\n"
    assert fill(block("claims", old), reports) == block("claims", old)  # no claims.csv in this reports folder
    assert "the last run made no `reports/claims.csv`" in fill(block("claims", ""), reports)


def test_a_source_without_its_manifest_keeps_the_block_and_no_stamp_says_unknown(reports):
    (reports / "wattbot" / "leaderboard.csv.manifest.json").unlink()
    assert fill(block("results-leaderboard"), reports) == block("results-leaderboard")
    assert "unknown" not in fill(block("results-leaderboard", ""), reports)


def test_tables_beside_a_rule_output_are_stamped_from_its_manifest(reports):
    """retrieval.csv has no manifest of its own: the report rule's leaderboard.csv manifest stamps it (same rule,
    same params); the figures rule's tables take claims.csv's."""
    lb = json.loads((reports / "wattbot" / "leaderboard.csv.manifest.json").read_text())["config_hash"][:12]
    fig = json.loads((reports / "claims.csv.manifest.json").read_text())["config_hash"][:12]
    out = fill(block("results-retrieval") + block("results-attribution"), reports)
    assert f"from `reports/wattbot/retrieval.csv` (commit `" in out and f"config hash `{lb}`" in out
    assert f"from `reports/wattbot/attribution_counts.csv` (commit `" in out and f"config hash `{fig}`" in out


def test_make_run_writes_its_blocks_to_reports_and_leaves_the_checkout(reports, tmp_path):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    readme = "# x\n" + block("results-attribution") + "\n" + block("claims") + "\n"
    (repo / "README.md").write_text(readme)
    out = write_run_readme(repo, reports)
    assert out == reports / "README.md" and (repo / "README.md").read_text() == readme
    text = out.read_text()
    assert "| a | 21 | 17 |" in text and "## results-attribution (as in README.md)" in text
    assert "Not made by this run: `claims` (`reports/claims.csv`)" in text and "old 0.123" not in text


def test_registering_a_renderer_is_one_entry(reports, tmp_path):
    (reports / "x.csv").write_text("n\n5\n")
    reg = {"mine": Renderer(render_attribution, "wattbot/attribution_counts.csv", "claims.csv")}
    assert "| a | 21 | 17 |" in fill(block("mine"), reports, reg)
    with pytest.raises(ValueError, match="'nobody' has no renderer"):
        fill(block("nobody"), reports)
    with pytest.raises(ValueError, match="without a matching END"):
        fill(BEGIN.format("claims") + "\nno end\n", reports)


# ---------------------------------------------------------------- no hand-typed results
#
# Which text counts: all of README.md and every docs/*.md (whichever pages exist, so pages added later
# are checked too). In them, outside generated blocks, fenced code, inline `code`, link targets and HTML
# comments, a RESULT NUMBER is (a) a decimal fraction (0.668, .585, 3.1), (b) a percentage (27%), or
# (c) a measured duration or rate (12 min, 9.1 ms, 240 sentences/s).
# Not results, hence allowed: versions (2.13.0, v1.2, CC BY 4.0), addresses (127.0.0.1), issue numbers (#17), integers without a unit
# (41 questions, 1400×900, sizes of data sets), numbers that are config values (the numeric leaves of
# config.yaml and config.full.yaml, e.g. a 0.7 fusion weight) or the interval level 95%. A constant of the
# code or an assumption that is not measured (a threshold, an estimate's input) goes in inline `code`.
# A measured figure goes in a generated block (pipeline/publish/readme.py REGISTRY) or is left out.
README_LIMIT = 12 * 1024  # issue 16 item 7: README ≤ 12 KB, the rest in docs/
NUMBER = re.compile(r"(?<![\w.#])[-+−]?(?:\d+(?:,\d{3})*)?\.\d+(?![\w.])"
                    r"|(?<![\w.])\d+(?:\.\d+)?\s?%"
                    r"|(?<![\w.])\d+(?:[.,]\d+)?\s?(?:ms|s|min|h|sentences/s|tokens/s|windows/s)\b")
VERSION = re.compile(r"\bv?\d+(?:\.\d+){2,}\b|\bCC BY(?:-[A-Z]{2})* \d\.\d\b")  # 2.13.0, 127.0.0.1, CC BY-SA 4.0


def prose(text: str) -> str:
    """The hand-written part: generated blocks, code, link targets and comments removed."""
    text = re.sub(r"<!-- BEGIN generated: ([\w.-]+) -->.*?<!-- END generated: \1 -->", "", text, flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return VERSION.sub("", text)


def config_numbers() -> set[str]:
    out = {"95%"}

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, (int, float)) and not isinstance(x, bool):
            out.add(f"{x}")

    for name in ("config.yaml", *OVERLAY_CONFIGS):
        walk(yaml.safe_load((REPO / name).read_text()))
    return out


def hand_typed(text: str, allowed: set[str]) -> list[str]:
    return [m.group(0) for m in NUMBER.finditer(prose(text)) if m.group(0).replace(",", "").strip() not in allowed]


def test_the_rule_catches_results_and_spares_the_rest():
    allowed = {"0.7", "95%"}
    text = ("score 0.668 (value .585), +27% tokens, 12 min 17 s, 240 sentences/s, weight 0.7, 95% CI, "
            "torch 2.13.0, issue #17, CC BY-NC-SA 4.0, 127.0.0.1, `F1 < 0.5`, 41 questions, `0.5 in code`, 1400×900 px\n" + block("claims", "0.999\n"))
    assert hand_typed(text, allowed) == ["0.668", ".585", "27%", "12 min", "17 s", "240 sentences/s"]


@pytest.mark.parametrize("path", doc_files(REPO), ids=lambda p: p.relative_to(REPO).as_posix())
def test_no_hand_typed_result_in_readme_or_docs(path):
    found = hand_typed(path.read_text(), config_numbers())
    assert not found, f"{path.relative_to(REPO)}: result numbers typed by hand (put them in a generated block): {found}"


def test_every_block_in_readme_and_docs_is_registered():
    for path in doc_files(REPO):
        for name in re.findall(r"<!-- BEGIN generated: ([\w.-]+) -->", path.read_text()):
            assert split_name(name)[0] in REGISTRY, f"{path.name}: block {name} has no renderer"


def test_readme_is_short_and_its_links_resolve():
    text = (REPO / "README.md").read_text()
    assert len(text.encode()) <= README_LIMIT, f"README.md is {len(text.encode())} bytes; move sections to docs/"
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if not t.startswith(("http", "#"))]
    assert "docs/results.md" in targets and "docs/guarantees.md" in targets
    assert [t for t in targets if not (REPO / t).exists()] == []
    assert "make run" in text and "make test" in text


def test_the_leaderboard_block_leads_with_the_labelled_test_split(reports):
    """README's leaderboard block: the labelled test split first, the score split after it, labelled in-sample
    (issue #44 item 13: the report's headline does the same)."""
    from pipeline.publish.results_doc import render_leaderboard

    path = reports / "wattbot" / "leaderboard.csv"
    train = pd.read_csv(path).assign(split="train")
    test = train.assign(split="test", score=[0.5, 0.596], score_lo=[0.45, 0.54], score_hi=[0.55, 0.65], n=[187, 187])
    pd.concat([train, test.iloc[::-1]])[["split", *train.columns[:-1]]].to_csv(path, index=False)
    text = render_leaderboard(reports)
    first, second = text.index("**Test**"), text.index("**Score split `train`**")
    assert first < second and "187 questions" in text[first:second] and "in-sample" in text[second:]
    assert text.index("| b | extractive | y | 0.596 [0.540, 0.650]") < second


def test_readmes_leaderboard_is_the_test_table_alone(reports):
    """README's block: the test split's table, no train rows (docs/results.md has both; README stays in 12 KB)."""
    from pipeline.publish.results_doc import render_leaderboard_lead

    path = reports / "wattbot" / "leaderboard.csv"
    single = render_leaderboard_lead(reports)
    assert single.startswith("41 questions,") and "Score split" not in single  # one block: as before
    train = pd.read_csv(path).assign(split="train")
    test = train.assign(split="test", score=[0.5, 0.596], score_lo=[0.45, 0.54], score_hi=[0.55, 0.65], n=[187, 187])
    pd.concat([train, test.iloc[::-1]])[["split", *train.columns[:-1]]].to_csv(path, index=False)
    text = render_leaderboard_lead(reports)
    assert text.startswith("**Test** (held out") and text.count("| answering variant |") == 1
    assert "187 questions" in text and "41 questions" not in text and "train" not in text
    assert text.index("| b | extractive | y | 0.596 [0.540, 0.650]") < text.index("| a | extractive | x | 0.500 [0.450, 0.550]")
    assert "0.668" not in text  # the train split's score: docs/results.md's block
