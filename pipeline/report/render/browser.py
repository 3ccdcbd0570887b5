"""`make report-check`: open ``reports/index.html`` in a real headless Chromium and check what a
reader sees at 1400x900, keeping a screenshot of the first screen beside the report.

Checks (:func:`problems` turns the measurements into messages): no horizontal scroll of the page
and no table wider than its box; no table row taller than a share of the window (:data:`MAX_ROW_SHARE`: a
reader sees the row whole with its table's header), a limit relative to the viewport, not a count of pixels
that a machine's fonts decide (a wide font wraps a long cell into more lines: Debian's DejaVu made a claims
row 325px tall where the fonts of another machine kept it under 200px); every figure loaded;
every in-page link (``#id``) resolves; the first screen shows the title, the headline (the best variant,
its ties, the claims' verdicts) and the first leaderboard row. A corpus's page (reports/<corpus>/index.html)
passes the same checks. Chromium is Debian's (``apt-get install chromium``; `make test` and CI install
it; `make run` installs no system package and runs the check only where a browser exists), driven by
Playwright for Python with ``executable_path`` (Playwright's own browser download cannot work offline).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

VIEWPORT = (1400, 900)
MAX_ROW_SHARE = 0.5  # of the window's height: the tallest a table row may be
LINE_HEIGHT = 1.2  # a line of text in font sizes (CSS's "normal", about): the messages count a row's lines
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
CHROMIUM_NAMES = ("chromium", "chromium-browser")

# Measured in the page: plain DOM geometry, no framework.
MEASURE_JS = r"""() => {
  const de = document.documentElement, H = window.innerHeight;
  const rect = el => el ? el.getBoundingClientRect() : null;
  // textContent, not innerText: a row in a folded <details> is laid out but has no innerText
  const rows = [...document.querySelectorAll('tr')].map(r => ({h: r.getBoundingClientRect().height,
      font_px: parseFloat(getComputedStyle(r.cells[0] || r).fontSize),
      text: r.textContent.trim().replace(/\s+/g, ' ').slice(0, 80)})).filter(r => r.h > H * MAX_ROW_SHARE);
  const wide = [...document.querySelectorAll('.tw')].filter(d => d.scrollWidth > d.clientWidth + 1)
      .map(d => { let e = d; while (e && e.tagName !== 'H2') e = e.previousElementSibling || e.parentElement;
                  return `${e ? e.innerText : '?'}: ${d.scrollWidth}px in ${d.clientWidth}px`; });
  const imgs = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt || i.src.slice(0, 60));
  const links = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1))
      .filter(id => !document.getElementById(id));
  const top = document.getElementById('headline');
  const board = document.getElementById('leaderboard');
  let firstRow = null;
  for (let el = board; el && !firstRow; el = el.nextElementSibling) firstRow = el.querySelector && el.querySelector('tbody tr');
  const below = el => !el || rect(el).bottom > H;
  return {scroll_width: de.scrollWidth, client_width: de.clientWidth, tall_rows: rows, wide_tables: wide,
          broken_images: imgs, images: document.images.length, dangling_links: links,
          title_visible: !below(document.querySelector('h1')),
          headline_visible: !below(top), leaderboard_visible: !below(firstRow)};
}""".replace("MAX_ROW_SHARE", str(MAX_ROW_SHARE))  # JavaScript: braces everywhere, so no str.format


@dataclass(frozen=True)
class PageCheck:
    """What the browser measured on the page."""

    scroll_width: int
    client_width: int
    tall_rows: list
    wide_tables: list
    broken_images: list
    images: int
    dangling_links: list
    title_visible: bool
    headline_visible: bool
    leaderboard_visible: bool


def find_chromium() -> str | None:
    """The system Chromium's path, or None when it is not installed."""
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def inspect_page(html: Path, screenshot: Path | None = None, executable: str | None = None) -> PageCheck:
    """Render ``html`` at :data:`VIEWPORT` in headless Chromium, measure it, and save the first
    screen as PNG when ``screenshot`` is given."""
    from playwright.sync_api import sync_playwright

    exe = executable or find_chromium()
    if not exe:
        raise FileNotFoundError("chromium: not installed (apt-get install -y chromium; make test does it)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]})
            page.goto(Path(html).resolve().as_uri(), wait_until="load")
            data = page.evaluate(MEASURE_JS)
            if screenshot:
                Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(screenshot), full_page=False)
        finally:
            browser.close()
    return PageCheck(**data)


def problems(c: PageCheck) -> list[str]:
    """One message per failed check (empty: the page reads well)."""
    out = []
    if c.scroll_width > c.client_width:
        out.append(f"page scrolls sideways: {c.scroll_width}px wide in a {c.client_width}px window")
    out += [f"table wider than its box: {t!r}" for t in c.wide_tables]
    out += [
        f"table row {r['h']:.0f}px tall (about {r['h'] / (LINE_HEIGHT * r['font_px']):.0f} lines of its "
        f"{r['font_px']:g}px font), more than {MAX_ROW_SHARE:.0%} of the {VIEWPORT[1]}px window: {r['text']!r}"
        for r in c.tall_rows
    ]
    out += [f"figure not loaded: {i}" for i in c.broken_images]
    out += [f"in-page link to a missing id: #{i}" for i in c.dangling_links]
    for name, ok in (
        ("title", c.title_visible),
        ("headline", c.headline_visible),
        ("first leaderboard row", c.leaderboard_visible),
    ):
        if not ok:
            out.append(f"first screen ({VIEWPORT[0]}x{VIEWPORT[1]}) does not show the {name}")
    return out
