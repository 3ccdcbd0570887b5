"""Which run a report page belongs to: one header line, the same on reports/index.html, reports/index.md
(and each corpus's) and reports/README.md.

It names the run id, the hash of the run's resolved config (the one config hash of a run:
pipeline/run_ids.py keeps it in ``logs/run.json``), the git commit of the code and the config files. A job
renders it from the run it runs in; the pages a run did not redraw (their rule was up to date) are
restamped at the run's end (:func:`restamp`, from ``onsuccess``), so every page of a finished run names
that run. It is the only line of a page that differs between two runs of one config (tests/dag_runner.py
blanks it with :func:`blank` before comparing pages byte for byte).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.io import atomic_write_text
from pipeline.provenance import git_commit
from pipeline.run_ids import STATE, read_state

# The header as each kind of page writes it: a markdown line (a bullet in index.md) and an HTML paragraph.
MD_LINE = re.compile(r"^(- )?Run `[^`\n]*` · config hash .*$", re.M)
HTML_LINE = re.compile(r'<p class="run">Run <code>.*?</p>')
PAGES = ("index.md", "index.html")  # the pages a rule draws with the header, under reports/ and each corpus's folder


@dataclass(frozen=True)
class RunHeader:
    """The run a page belongs to (empty fields: rendered outside a run, e.g. by a report verb by hand)."""

    run_id: str
    config_hash: str
    commit: str
    config_files: tuple[str, ...] = ()

    @classmethod
    def of(cls, run_dir: str | Path = ".") -> RunHeader:
        """The run of the working folder ``run_dir`` (its ``logs/run.json``) and the code's commit."""
        state = read_state(Path(run_dir) / STATE)
        commit = git_commit()[:12]
        if state is None:
            return cls("", "", commit)
        return cls(state.id, state.config_hash, commit, tuple(state.config_files))

    def fields(self) -> list[tuple[str, list[str]]]:
        """(label, values) in the order every page shows them."""
        return [
            ("Run", [self.run_id or "none (outside a run)"]),
            ("config hash", [self.config_hash or "not recorded"]),
            ("commit", [self.commit or "unknown"]),
            ("config", list(self.config_files) or ["config.yaml"]),
        ]

    def markdown(self) -> str:
        return " · ".join(f"{k} " + ", ".join(f"`{v}`" for v in vs) for k, vs in self.fields())

    def html(self) -> str:
        parts = (f"{k} " + ", ".join(f"<code>{html.escape(v)}</code>" for v in vs) for k, vs in self.fields())
        return f'<p class="run">{" · ".join(parts)}</p>'


def blank(text: str) -> str:
    """``text`` with its header line's content dropped (what two runs of one config share)."""
    return HTML_LINE.sub('<p class="run"></p>', MD_LINE.sub(lambda m: m.group(1) or "", text))


def restamp(reports_dir: str | Path, header: RunHeader) -> list[Path]:
    """Write ``header`` into every page under ``reports_dir`` that shows another one (a page whose rule
    was up to date names the run that drew it); the pages changed."""
    changed = []
    for page in sorted(p for name in PAGES for p in Path(reports_dir).rglob(name)):
        old = page.read_text(encoding="utf-8")
        new = HTML_LINE.sub(lambda _: header.html(), old) if page.suffix == ".html" else _md(old, header)
        if new != old:
            atomic_write_text(page, new)
            changed.append(page)
    return changed


def _md(text: str, header: RunHeader) -> str:
    return MD_LINE.sub(lambda m: (m.group(1) or "") + header.markdown(), text)
