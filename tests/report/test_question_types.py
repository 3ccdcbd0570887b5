"""Per question type (#33 item 7), on hand-made per-question tables whose answer is known: a variant's weakest
type is named only where its whole 95% interval lies below its overall score (never from a point interval); the
per-type table has a block per Usage value; the small multiples are written through the legibility check, n in
each panel title, in a section of their own."""

import json

import pandas as pd
import pytest

from pipeline.config import load_config, validate
from pipeline.datasets.paths import REPO, data_root
from pipeline.paths import Reports
from pipeline.report.pages import question_types as QT
from pipeline.report.pages.split_blocks import by_type
from pipeline.report.params import Leaderboard, Resampling
from pipeline.report.render import figure_check, plots
from pipeline.report.render.html import render_html

REP = Resampling(seed=0, bootstrap=500, permutations=500)
FLAGS = ("Quote", "Table", "Figure", "Math", "is_NA")
SIZES = {"Quote": 30, "Table": 10, "Figure": 10, "Math": 12, "is_NA": 8}  # the Public split's small Math and is_NA


def cycle(values: list[float], n: int) -> list[float]:
    return [values[i % len(values)] for i in range(n)]


VARIANTS = {
    # Math scores 0.12 on average, everything else 0.875: its interval lies far below the overall 0.745
    "weak-math": {t: cycle([0.0, 0.1, 0.25] if t == "Math" else [1.0, 0.75], n) for t, n in SIZES.items()},
    # Math is its lowest (0.33 against 0.5 elsewhere) but 12 questions of 1s and 0s: its interval reaches 0.47
    "even": {t: cycle([1.0, 0.0, 0.0] if t == "Math" else [1.0, 0.0], n) for t, n in SIZES.items()},
    # is_NA's 8 questions all score 0: below the overall score, but a point interval, which is no evidence
    "alike": {t: [0.0] * n if t == "is_NA" else cycle([1.0, 0.75], n) for t, n in SIZES.items()},
}


def per_question(scores: dict[str, list[float]], usage: list[str]) -> pd.DataFrame:
    """The evaluate stage's per-question table: each question one type flag, its score and components."""
    rows = [
        {"id": f"q{len(scores)}{t}{i}", "value": s, "ref": s, "na": 1.0, "score": s, **{f: int(f == t) for f in FLAGS}}
        for t, values in scores.items()
        for i, s in enumerate(values)
    ]
    return pd.DataFrame(rows).assign(Usage=cycle(usage, len(rows)))


def tables(tmp_path, usage: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the leaderboard's blocks: variant, score, n per split and Usage value; the per-type table, as the report
    rule writes it)."""
    files, board = {}, []
    for name, scores in VARIANTS.items():
        pq = per_question(scores, usage)
        files[name] = str(tmp_path / f"{name}.csv")
        pq.to_csv(files[name], index=False)
        for block, part in (("test", pq), *((f"test/{u}", pq[pq["Usage"] == u]) for u in ("Public", "Private"))):
            score = part["score"].mean() if len(part) else None
            board.append({"split": block, "variant": name, "score": score, "n": len(part)})
    return pd.DataFrame(board), by_type(Leaderboard({}, REP), {"test": files})


def test_a_weakest_type_is_named_only_where_its_interval_lies_below_the_overall_score(tmp_path):
    board, types = tables(tmp_path, ["Public"])  # the shipped file: Public rows only
    found = {v.variant: v for v in QT.verdicts(board, types)}
    assert sorted(found) == sorted(VARIANTS) and {v.block for v in found.values()} == {"test"}  # Public is test
    weak = found["weak-math"]
    assert weak.weakest is not None and (weak.weakest.type, weak.weakest.n) == ("Math", 12)
    assert weak.weakest.hi < weak.overall and "weakest type Math" in weak.line() and "n=12" in weak.line()
    even = found["even"]
    math = types[(types["variant"] == "even") & (types["split"] == "test")].set_index("type").loc["Math"]
    assert math["score"] == types[types["variant"] == "even"]["score"].min()  # its weakest type, by point
    assert math["score_lo"] < even.overall <= math["score_hi"]  # whose interval reaches the overall score
    assert even.weakest is None and even.line().endswith(": no type is clearly weaker.") and "n=70" in even.line()
    alike = found["alike"]
    assert alike.weakest is None and "not named: is_NA, whose 8 question(s) all scored 0.000" in alike.line()


def test_the_per_type_table_has_a_block_per_usage_value(tmp_path):
    board, types = tables(tmp_path, ["Public", "Private"])  # the full 282-row file's shape
    assert list(dict.fromkeys(types["split"])) == ["test", "test/Public", "test/Private"]
    n = types[types["variant"] == "even"].groupby("split", sort=False)["n"].sum().to_dict()
    assert n == {"test": 70, "test/Public": 35, "test/Private": 35}
    assert QT.shown_blocks(board, types) == ["test", "test/Public", "test/Private"]  # both parts differ from test
    _, public_only = tables(tmp_path, ["Public"])
    private = public_only[public_only["split"] == "test/Private"]
    assert len(private) == 15 and (private["n"] == 0).all() and private["score"].isna().all()  # reported, empty


def test_the_small_multiples_are_written_legible_with_n_in_each_title(tmp_path, monkeypatch):
    board, types = tables(tmp_path, ["Public", "Private"])
    path = tmp_path / "leaderboard_by_type.csv"
    types.to_csv(path, index=False)
    drawn = []
    save = plots.save_png_svg
    monkeypatch.setattr(plots, "save_png_svg", lambda fig, stem: drawn.append(fig) or save(fig, stem))
    section, entry = QT.section(str(path), board, tmp_path / "figures", [str(path)], REP)
    assert (tmp_path / "figures" / "question-types.png").exists() and (
        tmp_path / "figures" / "question-types.svg"
    ).exists()
    titles = [ax.get_title() for ax in drawn[0].axes]
    assert len(titles) == 3 * 5 and "test: Math (n=12)" in titles and "test/Private: is_NA (n=4)" in titles
    # the section: its own anchor, the lines beside the figure, which is an <img> file like every other
    page = render_html("", [section], {entry.stem: entry}, tmp_path)
    assert 'id="per-question-type"' in page and 'href="#per-question-type"' in page
    assert '<img alt="question-types" src="figures/question-types.png">' in page
    assert "weak-math on test (overall 0.745, n=70): weakest type Math" in page and "is_NA n=8" in section.text
    # the legibility check applies: with a 9 pt floor its 8 pt variant names fail the drawing
    monkeypatch.setattr(figure_check, "MIN_POINTS", 9.0)
    with pytest.raises(figure_check.IllegibleFigure, match="figure question-types: .* is 8 pt"):
        QT.section(str(path), board, tmp_path / "again", [str(path)], REP)


def test_the_figure_is_planned_where_another_split_is_labelled():
    from pipeline.workflow import by_type_report, figure_stems, figures_params

    cfg = validate(load_config(REPO / "config.yaml", {"data_root": str(data_root())}))
    assert by_type_report(cfg) == [Reports().leaderboard_by_type] and "question-types" in figure_stems(cfg)
    assert json.loads(figures_params(cfg))["by_type"] == Reports().leaderboard_by_type
    cfg["wattbot"].pop("solutions")  # no other labelled split: the params and figures as before
    assert by_type_report(cfg) == [] and "question-types" not in figure_stems(cfg)
    assert "by_type" not in json.loads(figures_params(cfg))


@pytest.mark.slow
def test_the_tiny_grid_with_test_labels_draws_the_section(tmp_path):
    """The rules wired end to end: the tiny grid with the shipped Public test labels writes the per-type table
    with its blocks, the figure the figures rule planned, the page's section (nav, anchor, a loaded <img>) and
    index.md's lines; the page passes the browser check (where Chromium is installed)."""
    import yaml
    from dag_runner import snakemake

    from pipeline.report.render.browser import find_chromium, inspect_page, problems

    cfgfile = tmp_path / "labels.yaml"
    cfgfile.write_text(
        yaml.safe_dump(
            {
                "extends": str(REPO / "tests" / "tiny.yaml"),
                "wattbot": {"solutions": {"train": "train_QA.csv", "test": "test_solutions_public.csv"}},
            }
        )
    )
    work = tmp_path / "work"
    done = snakemake(work, configfile=cfgfile)
    assert done.returncode == 0, done.stderr[-3000:]
    reports = work / "reports"
    types = pd.read_csv(reports / "wattbot" / "leaderboard_by_type.csv")
    assert list(dict.fromkeys(types["split"])) == ["test", "test/Public", "test/Private"]
    n = types[types["split"] == "test"].drop_duplicates("type").set_index("type")["n"].to_dict()
    assert n["Math"] == 12 and n["is_NA"] == 8  # the Public split's small types
    assert (reports / "figures" / "question-types.png").exists() and (
        reports / "figures" / "question-types.svg"
    ).exists()
    page = (reports / "index.html").read_text()
    assert 'href="#per-question-type"' in page and 'id="per-question-type"' in page and "(overall " in page
    assert page.index('id="claims"') < page.index('id="per-question-type"') < page.index('id="ablations"')
    index = (reports / "index.md").read_text()
    assert "## Per question type" in index and "on test (overall " in index and "test/Public (overall" not in index
    if find_chromium() is not None:  # the whole page reads well, the leaderboard's four blocks included (#35)
        assert problems(inspect_page(reports / "index.html")) == []
