"""`make readme-check` (``python -m pipeline readme --check``): the docs' result blocks come from one commit's runs.

Every result block (readme.py: not a measurement of the code) of README.md and docs/*.md must carry a
kept run's stamp (readme_runs.py :data:`RUN_STAMP`: run, config hash, commit, config files, encoder),
all of them the same commit (and the runs' commit when one is given) but the blocks of a run that may have
its own (``NAME.suite-full``: readme.py :data:`OWN_COMMIT_ROLES`); and no generated block may hold a
table row reading "not run" (a claim the rendered run did not measure), but one the config declares it leaves
out, and why (``report.claims_left_out``: the row reads "not run: left out by the config ..."). Each problem
is one line.
"""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.publish.readme import OWN_COMMIT_ROLES, blocks, doc_files, is_result, split_name
from pipeline.publish.readme_runs import RUN_STAMP
from pipeline.report.claims.measure import LEFT_OUT

COMMIT = re.compile(r"commit `([0-9a-f]{7,40})`")  # any stamp's commit, the older reports/ stamps' too
SHORT = 12  # stamps name commits by their first 12 hex digits
DECLARED = f"{LEFT_OUT} (report.claimsleftout)"  # a claims row the config declares left out (code marks aside)


def not_run_rows(body: str) -> list[str]:
    """The table rows of ``body`` with a cell reading "not run" (emphasis and code marks aside), but for a
    claim the config declares left out (its row says so: pipeline/report/claims/measure.py LEFT_OUT)."""
    rows = []
    for line in body.splitlines():
        if not line.lstrip().startswith("|"):
            continue
        cells = [re.sub(r"[*_`]", "", c).strip().lower() for c in line.strip().strip("|").split("|")]
        if any(re.match(r"not run\b", c) and DECLARED not in c for c in cells):
            rows.append(line.strip())
    return rows


def check_pages(pages: dict[str, str], commit: str | None = None) -> list[str]:
    """The problems of ``pages`` (page name -> its text): result blocks without a kept run's stamp, result
    blocks of more than one commit (or not ``commit``), rows reading "not run"."""
    problems: list[str] = []
    by_commit: dict[str, list[str]] = {}
    for page, text in pages.items():
        for name, body in blocks(text, page):
            problems += [f'{page}: block {name} has a row reading "not run": {row[:100]}' for row in not_run_rows(body)]
            if not is_result(name):
                continue
            first = body.lstrip("\n").split("\n", 1)[0]
            if not RUN_STAMP.search(first):
                problems.append(
                    f"{page}: result block {name} has no kept run's stamp (commit, config, encoder): "
                    'make readme RUNS="default=runs/<id> claims=runs/<id>"'
                )
            sha = COMMIT.search(first)
            if sha and split_name(name)[1] not in OWN_COMMIT_ROLES:  # those name their own commit in the stamp
                by_commit.setdefault(sha.group(1)[:SHORT], []).append(f"{page}:{name}")
    if len(by_commit) > 1:
        named = "; ".join(f"{c} ({', '.join(where)})" for c, where in sorted(by_commit.items()))
        problems.append(f"result blocks name {len(by_commit)} commits: {named}")
    elif commit and by_commit and set(by_commit) != {commit[:SHORT]}:
        problems.append(f"result blocks name commit {next(iter(by_commit))}, not the runs' {commit[:SHORT]}")
    return problems


def check_docs(repo: Path, commit: str | None = None) -> list[str]:
    """:func:`check_pages` on the checkout's README.md and docs/*.md."""
    repo = Path(repo)
    return check_pages({p.relative_to(repo).as_posix(): p.read_text(encoding="utf-8") for p in doc_files(repo)}, commit)
