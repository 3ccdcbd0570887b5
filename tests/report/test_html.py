"""reports/index.html references every figure as a file beside it and names its inputs; it does not
depend on the folder; sections have named anchors and their figures come before their folded tables."""
import os

import pytest

import matplotlib.pyplot as plt

from pipeline.report.render.plots import save_png_svg
from pipeline.report.render.html import FigureEntry, Section, render_html, table_html


def page(root, gold_abs):
    reports = root / "reports"
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    png, svg = save_png_svg(fig, reports / "figures" / "demo")
    (root / "results").mkdir()
    (root / "results" / "x.csv").write_text("a\n1\n")
    entry = FigureEntry("demo", "a demo", ["results/x.csv", str(gold_abs)])
    cwd = os.getcwd()
    os.chdir(root)
    try:
        import pandas as pd

        return render_html("abc123", [Section("Some results", table_html(pd.DataFrame({"a": [1.23456]})), ["demo"])],
                           {"demo": entry}, reports), png.read_bytes(), svg.read_bytes()
    finally:
        os.chdir(cwd)


def test_page_is_light_and_folder_independent(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("id\nq1\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "deeper").mkdir(parents=True)
    one, png1, svg1 = page(tmp_path / "a", gold)
    two, png2, svg2 = page(tmp_path / "b" / "deeper", gold)
    assert one == two and png1 == png2 and svg1 == svg2  # byte-identical, wherever the work folder is
    assert "base64" not in one and '<img alt="demo" src="figures/demo.png">' in one  # a file, not inlined
    assert len(one) < len(png1)  # lighter than its one figure
    assert '<h2 id="some-results">' in one and 'href="#some-results"' in one  # named, not positional
    # the figure first, its raw table folded below it
    assert one.index("<figure") < one.index("<details><summary>the table behind the figures") < one.index("1.235")
    assert 'href="../results/x.csv"' in one and gold.as_uri() in one and "abc123" in one
    assert "sha256:" in one and "1.235" in one


def test_formatted_tables_come_first_and_anchors_are_unique(tmp_path):
    import pandas as pd

    table = table_html(pd.DataFrame({"claim": ["x" * 200]}), caption="what the columns mean")
    page = render_html("h", [Section("Leaderboard", table, [], fold=False)], {}, tmp_path)
    assert "x" * 200 in page and "…" not in page  # a long cell whole: it wraps, never cut short
    assert '<p class="cap">what the columns mean</p>' in page and "<details>" not in page
    with pytest.raises(ValueError, match="share the id"):
        render_html("h", [Section("A b", "", []), Section("a-B", "", [])], {}, tmp_path)
