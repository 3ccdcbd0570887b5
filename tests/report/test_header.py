"""One run header on every report page (pipeline/report/header.py, #35): reports/index.md, reports/index.html and
reports/README.md name the same run id, config hash, commit and config files, and a finished run restamps the
pages its rules did not redraw."""
import re

import pandas as pd

from pipeline import run_ids
from pipeline.io import atomic_write_json
from pipeline.provenance import git_commit
from pipeline.publish.readme import run_readme
from pipeline.report.header import HTML_LINE, MD_LINE, RunHeader, blank, restamp
from pipeline.report.pages.leaderboard import index_md
from pipeline.report.params import Leaderboard, ReportParams, Resampling
from pipeline.report.render.html import render_html

STATE = {"id": "r20261203-101010-abcd", "config_hash": "0123456789abcdef", "config_files": ["my kr.yaml", "config.yaml"]}


def _pages(root):
    """The three pages of the run in ``root``, rendered as the report rule, the figures rule and make run do."""
    atomic_write_json(root / run_ids.STATE, STATE)
    reports = root / "reports"
    reports.mkdir()
    header = RunHeader.of(root)
    params = ReportParams(Leaderboard({}, Resampling(0, 10, 10)), "bm25", "train", "params-hash", {})
    board = pd.DataFrame({"variant": ["bm25"], "score": [0.5]})
    repo = root / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# no generated blocks\n")
    return {
        "index.md": index_md(params, 3, board, "a.png", "b.png", header),
        "index.html": render_html(header.html(), [], {}, reports),
        "README.md": run_readme(repo, reports),
    }


def _shown(page: str) -> list[str]:
    """The values the header line of a page shows, in order."""
    md, tag = MD_LINE.search(page), HTML_LINE.search(page)
    return re.findall(r"`([^`]*)`", md.group(0)) if md else re.findall(r"<code>(.*?)</code>", tag.group(0))


def test_every_page_shows_the_same_run_header(tmp_path):
    pages = _pages(tmp_path)
    expected = [STATE["id"], STATE["config_hash"], git_commit()[:12], *STATE["config_files"]]
    assert {name: _shown(text) for name, text in pages.items()} == {name: expected for name in pages}
    assert "params-hash" not in pages["index.md"]  # the report rule's slice hash is no second "config hash"
    assert sum(p.count("config hash") for p in pages.values()) == 3


def test_a_finished_run_restamps_the_pages_it_did_not_redraw(tmp_path):
    pages = _pages(tmp_path)
    for name in ("index.md", "index.html"):
        (tmp_path / "reports" / name).write_text(pages[name])
    (tmp_path / "reports/retrieval").mkdir()
    (tmp_path / "reports/retrieval/index.md").write_text("- config hash: `x`\n")  # no run header: left alone
    later = RunHeader("r20261204-000000-beef", "fedcba9876543210", "abc", ("other.yaml",))
    changed = restamp(tmp_path / "reports", later)
    assert sorted(p.name for p in changed) == ["index.html", "index.md"]
    for name in ("index.md", "index.html"):
        text = (tmp_path / "reports" / name).read_text()
        assert _shown(text) == ["r20261204-000000-beef", "fedcba9876543210", "abc", "other.yaml"]
        assert blank(text) == blank(pages[name]) != text  # nothing else changed
    assert restamp(tmp_path / "reports", later) == []
    assert (tmp_path / "reports/retrieval/index.md").read_text() == "- config hash: `x`\n"


def test_outside_a_run_the_header_says_so(tmp_path):
    header = RunHeader.of(tmp_path)
    assert header.run_id == "" and "Run `none (outside a run)` · config hash `not recorded`" in header.markdown()


def test_onsuccess_puts_the_finished_runs_header_on_the_pages(tmp_path, monkeypatch):
    from pipeline import workflow as wf

    pages = _pages(tmp_path)
    (tmp_path / "reports/index.md").write_text(pages["index.md"])
    atomic_write_json(tmp_path / run_ids.STATE, {**STATE, "id": "r-next", "config_hash": "feed"})  # a later run
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WATTBENCH_SUMMARY_LATER", "1")
    wf.after_run({"wattbot": {"score_split": "train"}, "answering": {}})
    assert _shown((tmp_path / "reports/index.md").read_text())[:2] == ["r-next", "feed"]
