"""The page's answer first: the headline (best on train, reported on test where labelled, its paired
ties, the claims' verdicts) and the leaderboard and ablation tables as a reader sees them."""
import numpy as np
import pandas as pd

from pipeline.report.pages.headline import best_variant, headline_html
from pipeline.report.params import Resampling
from pipeline.report.render.views import board_caption, board_view, differences_view, ranks

REP = Resampling(seed=0, bootstrap=500, permutations=500)


def board(split: bool = False) -> pd.DataFrame:
    rows = [
        {"variant": "a", "score": 0.6684, "score_lo": 0.55, "score_hi": 0.78, "n": 41, "questions": 39,
         "doc_hit@1": 0.9, "doc_hit@10": 1.0, "doc_hit@3": 0.95, "doc_hit@5": 0.97, "abstained": 0},
        {"variant": "b", "score": 0.6681, "score_lo": 0.55, "score_hi": 0.78, "n": 41, "questions": 39,
         "doc_hit@1": 0.9, "doc_hit@10": 1.0, "doc_hit@3": 0.95, "doc_hit@5": 0.97, "abstained": 0},
        {"variant": "c", "score": 0.1, "score_lo": 0.05, "score_hi": 0.2, "n": 41, "questions": 39,
         "doc_hit@1": 0.1, "doc_hit@10": 0.2, "doc_hit@3": 0.1, "doc_hit@5": 0.1, "abstained": 30},
    ]
    df = pd.DataFrame(rows)
    if split:
        test = df.assign(split="test", score=[0.5, 0.7, 0.1], score_lo=[0.4, 0.6, 0.0], score_hi=[0.6, 0.8, 0.2], n=20)
        df = pd.concat([df.assign(split="train"), test], ignore_index=True)
    return df


def tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    good = rng.integers(0, 2, 41).astype(float)
    flip = good.copy()
    flip[:2] = 1 - flip[:2]  # differs on two questions: tied
    return {v: pd.DataFrame({"score": s}) for v, s in (("a", good), ("b", flip), ("c", np.zeros(41)))}


def test_headline_best_on_train_its_ties_and_the_claims():
    top = best_variant(board(), tables(), REP, {"reproduced": 2, "not run": 3})
    assert (top.best, top.reported_on, top.n, top.ties) == ("a", "train", 41, ("b",))  # c differs: not tied
    text = headline_html(top)
    assert 'id="headline"' in text and "test unlabelled" in text and "0.668" in text and "[95% CI 0.550, 0.780]" in text
    assert "2 reproduced, 3 not run" in text and "<b>b</b>" in text


def test_headline_reports_test_where_labelled():
    top = best_variant(board(split=True), tables(), REP, {})
    assert (top.best, top.reported_on, top.score, top.n) == ("a", "test", 0.5, 20)  # chosen on train, b is better on test
    assert "on test (chosen on train)" in headline_html(top)
    alone = best_variant(board().head(1), tables(), REP, None, "its labelled questions", unlabelled="")
    assert alone.ties == () and "the only variant" in headline_html(alone) and "claims" not in headline_html(alone)


def test_leaderboard_view_names_orders_and_marks_ties():
    view = board_view(board(), "a", ("b",))
    hits = [c for c in view.columns if c.startswith("doc hit")]
    assert hits == ["doc hit@1", "doc hit@3", "doc hit@5", "doc hit@10"]  # numeric, not text order
    assert list(view["rank"]) == ["1=", "1=", "3"] and list(view["vs best"]) == ["best", "tied", ""]
    assert view.loc[0, "score [95% CI]"] == "0.668 [0.550, 0.780]" and view.loc[2, "abstained"] == "30"
    assert "score_lo" not in view.columns
    assert "the other 2 are unanswerable" in board_caption(board()) and ranks(pd.Series([0.5, 0.5])) == ["1=", "1="]


def test_ablation_differences_read_treatment_minus_control():
    summary = pd.DataFrame([{"ablation": "sprout-training", "dataset": "wattbot", "metric": "doc_hit@1",
                             "reference": "sprout", "variant": "sprout-uniform", "n": 39, "diff": 0.0909,
                             "diff_lo": 0.02, "diff_hi": 0.15, "p_value": 0.01}])
    row = differences_view(summary).iloc[0]
    assert row["treatment − control"] == "sprout-uniform − sprout"
    assert row["Δ (treatment − control) [95% CI]"] == "+0.091 [+0.020, +0.150]"


def labels_board() -> pd.DataFrame:
    """The blocks split_blocks.py writes: train (the score split), then test and its Kaggle Usage parts."""
    train, test = board(split=True).pipe(lambda b: (b[b["split"] == "train"], b[b["split"] == "test"]))
    public = test.assign(split="test/Public", score=[0.9, 0.95, 0.99], n=12)  # better than train's best: not ranked with it
    private = test.assign(split="test/Private", score=np.nan, score_lo=np.nan, score_hi=np.nan, n=0)
    return pd.concat([train, test, public, private], ignore_index=True)


def test_headline_ranks_the_score_split_block_and_reports_the_test_block():
    top = best_variant(labels_board(), tables(), REP, {})
    assert (top.best, top.chosen_on, top.reported_on, top.score, top.n) == ("a", "train", "test", 0.5, 20)


def test_leaderboard_view_ranks_each_split_block_on_its_own():
    b = labels_board()
    view = board_view(b, "a", ("b",))
    assert list(view.columns[:3]) == ["split", "rank", "variant"]
    assert list(view["rank"]) == ["1=", "1=", "3", "2", "1", "3", "3", "2", "1", "", "", ""]
    assert list(view["vs best"]) == ["best", "tied", ""] + [""] * 9  # chosen on train: marked there only
    assert "within each split's block" in board_caption(b, "x") and "scored (41)" in board_caption(b)
    # n differs between blocks, never within one: each block's n in the caption, no column (#35: one screen wide)
    assert "n" not in view.columns and "questions" not in view.columns
    assert "per block, train n=41 questions=39, test n=20 questions=39, test/Public n=12" in board_caption(b)
    uneven = b.assign(n=[41, 40, 41] + [20] * 3 + [12] * 3 + [0] * 3)  # within train: shown, and not in the caption
    assert "n" in board_view(uneven).columns and "per block, train questions=39, test n=20" in board_caption(uneven)
