"""The legibility check every figure passes when it is saved: hand-made figures whose answer is known,
then every figure of the tiny grid redrawn from its real results."""

import json

import pandas as pd
import pytest

from pipeline.report.render.figure_check import IllegibleFigure, check_legible, problems
from pipeline.report.render.plots import DPI, plt, save_figure


def clean_figure():
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar(["a", "b", "c"], [0.2, 0.5, 0.4], label="score")
    ax.set_title("a clean figure")
    ax.set_ylabel("score")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def test_a_clean_figure_passes():
    fig = clean_figure()
    assert problems(fig, DPI) == []
    check_legible(fig, "clean", DPI)


def test_a_6_pt_label_fails_with_one_line_naming_figure_and_text():
    fig = clean_figure()
    fig.axes[0].set_xlabel("tiny words", fontsize=6)
    with pytest.raises(IllegibleFigure) as err:
        check_legible(fig, "demo-figure", DPI)
    message = str(err.value)
    assert "figure demo-figure" in message and "'tiny words' is 6 pt" in message and "\n" not in message


def test_8_pt_is_the_floor():
    fig = clean_figure()
    fig.axes[0].set_xlabel("just legible", fontsize=8)
    assert problems(fig, DPI) == []
    fig.axes[0].set_xlabel("just illegible", fontsize=7.5)
    assert problems(fig, DPI) == ["'just illegible' is 7.5 pt"]


def test_overlapping_annotations_fail_and_apart_they_pass():
    fig = clean_figure()
    ax = fig.axes[0]
    ax.annotate("first label", (1, 0.5), fontsize=9)
    second = ax.annotate("second label", (1, 0.5), xytext=(3, 2), textcoords="offset points", fontsize=9)
    assert problems(fig, DPI) == ["'first label' overlaps 'second label'"]
    second.xyann = (0, 30)  # 30 pt higher: clear of the first
    assert problems(fig, DPI) == []


def test_overlapping_tick_labels_fail():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks(range(6), [f"long label {i}" for i in range(6)], fontsize=9)
    assert any("overlaps" in p for p in problems(fig, DPI))


def test_a_legend_over_bars_or_text_fails():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(["a", "b"], [1.0, 1.0], label="tall bars")
    ax.legend(fontsize=9, loc="upper left")
    assert any("covers" in p for p in problems(fig, DPI))
    ax.get_legend().remove()
    ax.set_ylim(0, 2)
    ax.legend(fontsize=9, loc="upper left")  # above the bars now
    ax.annotate("a note", (0, 1.9), fontsize=9, va="top")  # under the legend's frame
    found = problems(fig, DPI)
    assert len(found) == 1 and "'a note' overlaps 'legend (tall bars...)'" in found[0]


def test_hidden_empty_and_out_of_view_texts_do_not_count():
    fig = clean_figure()
    ax = fig.axes[0]
    ax.text(0, 0.3, "hidden", fontsize=5).set_visible(False)
    ax.text(0, 0.3, "   ", fontsize=5)
    ax.set_yticks([0, 0.5, 5], ["0", "0.5", "out of view"], fontsize=9)
    ax.set_ylim(0, 1)
    assert problems(fig, DPI) == []


def test_save_figure_checks_before_it_writes(tmp_path):
    fig = clean_figure()
    fig.axes[0].set_title("small", fontsize=5)
    with pytest.raises(IllegibleFigure, match="figure bad: .*'small' is 5 pt"):
        save_figure(fig, tmp_path / "bad")
    assert list(tmp_path.iterdir()) == []
    assert [p.name for p in save_figure(clean_figure(), tmp_path / "good")] == ["good.png", "good.svg"]


def test_every_tiny_grid_figure_redrawn_from_its_results_passes(tiny_run, tmp_path):
    """The figures rule drew them through the check already; here each figure function is called
    again on the run's own tables (save_figure raises on a failing one)."""
    from pipeline.registry import metrics
    from pipeline.report.pages import ensemble_size as ES
    from pipeline.report.pages.figures import headline
    from pipeline.report.render import ablation_figures as A
    from pipeline.report.render import plots
    from pipeline.report.sections import labelled_rows
    from pipeline.report.telemetry.cost import pareto_front

    work, _ = tiny_run
    wb, figs = work / "reports" / "wattbot", work / "reports" / "figures"
    drawn = []
    board = pd.read_csv(wb / "leaderboard.csv")
    panels, profile = metrics.columns(metrics.LEADERBOARD_FIGURE), metrics.primary().name
    plots.score_by_variant(board, tmp_path / "score_by_variant.png", panels, profile)
    recall_ks = metrics.find("doc_recall").computed()
    plots.doc_recall_by_variant(pd.read_csv(wb / "retrieval.csv"), tmp_path / "doc_recall_by_variant.png", recall_ks)
    cost = pd.read_csv(wb / "cost.csv")
    drawn += A.leaderboard_ci(cost, tmp_path / "leaderboard-ci")
    fronts = [pareto_front(cost, x, "score") for x in ("tokens_per_question", "context_tokens")]
    drawn += A.pareto(cost, *fronts, tmp_path / "pareto-tokens")
    stats = pd.read_csv(wb / "ablations.csv")
    for name, part in stats[labelled_rows(stats["dataset"])].groupby("ablation"):
        drawn += A.ablation_bars(part, name, "", tmp_path / f"ablation-{name}")
    for name, part in stats[~labelled_rows(stats["dataset"])].groupby("ablation"):
        drawn += A.ablation_suite(part, name, tmp_path / f"ablation-{name}-suite")
    diffs = pd.read_csv(wb / "ablation_differences.csv")
    ks = sorted({int(m.split("@")[1]) for m in diffs["metric"] if m.startswith("ie@")})  # the suite's ks
    drawn += A.differences_forest(headline(diffs, ks), tmp_path / "diff")
    drawn += A.differences_forest(diffs.iloc[:0], tmp_path / "no-diff")  # none: a figure that says so
    attr = pd.read_csv(wb / "attribution.csv", dtype={"id": str})
    grid = attr.pivot(index="id", columns="variant", values="class")
    drawn += A.attribution_grid(grid, attr.drop_duplicates("id").set_index("id")["type"], tmp_path / "grid")
    curves = pd.read_csv(wb / "ensemble_size.csv")
    for _, curve in curves.groupby("ensemble"):
        drawn += ES.draw_curve(curve.reset_index(drop=True), tmp_path / f"ensemble-{curve['ensemble'].iloc[0]}")
    assert (tmp_path / "score_by_variant.png").exists() and len(drawn) >= 8
    # and the run itself wrote every planned figure (each through the same check)
    manifest = json.loads((work / "reports" / "index.html.manifest.json").read_text())
    assert manifest and sorted(p.stem for p in figs.glob("*.png")) == sorted(p.stem for p in figs.glob("*.svg"))


def test_the_time_table_figure_passes_too(monkeypatch):
    """time_table.py (telemetry, a floor that may not import render) saves its figure itself: checked
    here on a table of the default grid's rules instead."""
    from matplotlib.figure import Figure

    from pipeline.report.telemetry.time_table import figure_png

    checked, savefig = [], Figure.savefig

    def checked_savefig(fig, *args, **kwargs):
        check_legible(fig, "time-per-rule", fig.dpi)
        checked.append(fig)
        return savefig(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", checked_savefig)
    rules = ["answer", "index", "retrieve", "sprout_attention", "suite_evaluate", "tree", "evaluate", "figures"]
    table = pd.DataFrame({"rule": rules, "jobs": range(1, 9), "wall_s": [900.0, 300, 40, 445, 30, 120, 5, 20]})
    table["cpu_s"] = table["wall_s"] * 0.8
    assert figure_png(table)[:4] == b"\x89PNG" and len(checked) == 1
