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
