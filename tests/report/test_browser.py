"""reports/index.html in a real headless Chromium at 1400x900 (Debian's chromium; `make test` installs
it): the tiny grid's report reads well, and a page built to be bad fails every check."""
import os

import pytest

from pipeline.report.export.browser import find_chromium, inspect_page, problems

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(find_chromium() is None and not os.environ.get("CI"),
                                 reason="chromium not installed (make test installs it)")]


def test_bad_page_fails_every_check(tmp_path):
    """The checks can fail: a wide table, a tall row, a missing figure, a dangling link, and the
    headline and leaderboard pushed below the first screen."""
    long_cell = "word " * 400
    page = tmp_path / "bad.html"
    page.write_text(
        "<html><body><h1>bad</h1><div style='height:1200px'></div><nav><a href='#nowhere'>x</a></nav>"
        f"<div class='tw' style='overflow-x:auto'><table><tr><td style='width:300px'>{long_cell}</td></tr></table></div>"
        "<div style='width:3000px'>wide</div><img alt='broken' src='missing.png'>"
        "<h2 id='the-answer'>The answer</h2><div id='headline'>best: x</div>"
        "<h2 id='leaderboard'>Leaderboard</h2><div class='tw'><table><tbody><tr><td>v</td></tr></tbody></table></div>"
        "</body></html>")
    found = "\n".join(problems(inspect_page(page)))
    for expected in ("page scrolls sideways", "px tall", "figure not loaded: broken", "#nowhere",
                     "does not show the headline", "does not show the first leaderboard row"):
        assert expected in found


@pytest.mark.slow
def test_tiny_grid_report_reads_well_in_chromium(tiny_run):
    """The report of a real (tiny) run: no check fails, and the first screen is kept as a PNG beside
    the report, outside the byte-identical set."""
    work, _ = tiny_run
    html = work / "reports" / "index.html"
    shot = work / "reports" / "index.screenshot.png"
    check = inspect_page(html, shot)
    assert problems(check) == [], problems(check)
    assert check.images >= 6 and check.title_visible and check.headline_visible and check.leaderboard_visible
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 1400  # one screen wide


@pytest.mark.slow
def test_tiny_grid_with_a_corpus_reads_well_in_chromium(tmp_path):
    """#35's done-when: the tiny grid plus a labelled corpus (and an answering ablation the corpus runs too).
    Both pages pass every check: nothing wider than its box, every #anchor resolves, the headline and
    the first leaderboard row on the first screen; anchors are named; figures are files, not inlined."""
    import re

    import yaml

    from dag_runner import snakemake
    from pipeline.datasets.paths import REPO
    from test_corpora import make_corpus

    entry = make_corpus(tmp_path / "corpus")
    cfgfile = tmp_path / "my.yaml"
    cfgfile.write_text(yaml.safe_dump({
        "extends": str(REPO / "tests" / "tiny.yaml"),
        "report": {"ablations": {"dense-vs-bm25": {"variants": ["dense-x", "bm25-x"], "note": "dense vs BM25"}}},
        "corpora": {"mine": {**entry, "variants": ["dense-x", "bm25-x", "ens"]}},
    }))
    work = tmp_path / "work"
    done = snakemake(work, configfile=cfgfile)
    assert done.returncode == 0, done.stderr[-3000:]
    main, corpus = work / "reports" / "index.html", work / "reports" / "mine" / "index.html"
    for page in (main, corpus):
        check = inspect_page(page)
        assert problems(check) == [], (page, problems(check))
        assert check.headline_visible and check.leaderboard_visible and check.images >= 2
        text = page.read_text()
        assert "base64" not in text and not re.search(r'id="s\d+"', text)  # files, named anchors
    text = main.read_text()
    for anchor in ("the-answer", "leaderboard", "claims", "ablations", "corpus-mine"):
        assert f'id="{anchor}"' in text and f'href="#{anchor}"' in text
    assert text.index('id="headline"') < text.index('id="leaderboard"') < text.index('id="claims"')
    page = corpus.read_text()
    assert 'id="ablation-dense-vs-bm25"' in page and "Δ (treatment − control)" in page
    assert (work / "reports/mine/figures/ablation-dense-vs-bm25.png").exists()
