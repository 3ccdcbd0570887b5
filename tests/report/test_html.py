"""reports/index.html embeds every figure and names its inputs; it does not depend on the folder."""
import base64
import os

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

        return render_html("abc123", [Section("S", table_html(pd.DataFrame({"a": [1.23456]})), ["demo"])],
                           {"demo": entry}, reports), png.read_bytes(), svg.read_bytes()
    finally:
        os.chdir(cwd)


def test_page_is_self_contained_and_folder_independent(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("id\nq1\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "deeper").mkdir(parents=True)
    one, png1, svg1 = page(tmp_path / "a", gold)
    two, png2, svg2 = page(tmp_path / "b" / "deeper", gold)
    assert one == two and png1 == png2 and svg1 == svg2  # byte-identical, wherever the work folder is
    assert f"data:image/png;base64,{base64.b64encode(png1).decode()}" in one
    assert 'href="../results/x.csv"' in one and gold.as_uri() in one and "abc123" in one
    assert "sha256:" in one and "1.235" in one
