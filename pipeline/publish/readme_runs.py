"""`make readme RUNS="default=runs/<id> claims=runs/<id>"`: the result blocks of README.md and docs/*.md
from kept runs (pipeline/kept_runs/store.py) made at one commit; a full-size suite run
(``suite-full=runs/<id>``, readme.py :data:`OWN_COMMIT_ROLES`) may be of another commit, and its blocks
(``NAME.suite-full``) are rendered only when it is named.

Each page's result blocks come from the run its role names (readme.py :data:`PAGE_ROLES`; a block
``NAME.ROLE`` names its own), each run's ``runs/<id>/reports/``. It refuses, with one line, before writing
anything: runs of different commits, a run kept from a tree whose tracked files differed from its commit
(``dirty``), a run that records no encoder, a block whose source (or the manifest stamping it) its run lacks,
and a source whose manifest names another commit than its run (a rule left up to date by an earlier
commit). No result block keeps an old rendering. Each stamp names the source, the run, its config hash,
the commit, its config files and the encoders its indexes were built with, on which CPU (``precision:
auto`` picks the int8 or the fp32 file by CPU, and the vectors differ). Measurement blocks (readme.py
:data:`MEASUREMENTS`) are rendered from ``bench`` (a reports folder) when one is named, with their own
stamps; the others are left as they are and listed (as are the result blocks when only ``bench`` is named).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.embed.kernels import key_precision
from pipeline.io import atomic_write_text
from pipeline.kept_runs.store import REPORTS, RUNS, read_record, resolve_kept
from pipeline.provenance import manifest_path
from pipeline.publish.readme import (
    BEGIN,
    BLOCK,
    END,
    OWN_COMMIT_ROLES,
    PAGE_ROLES,
    ROLES,
    Renderer,
    blocks,
    doc_files,
    is_result,
    render_block,
    renderer,
    split_name,
    stamp,
)
from pipeline.report.header import RunHeader

KEY_PARTS = re.compile(r"-[0-9a-f]{16}|@max\d+")  # a cache key's content hash and token cap: not the path
# A result block's stamp, as :func:`run_stamp` writes it (pipeline/publish/readme_check.py parses it).
RUN_STAMP = re.compile(
    r"<sub>Rendered by `make readme` from `reports/(?P<source>[^`]+)`: Run `(?P<run>[^`]+)` · config hash "
    r"`(?P<config_hash>[^`]*)` · commit `(?P<commit>[0-9a-f]+)` · config (?P<config>.+?) · encoder "
    r"(?P<encoder>.+)\.</sub>"
)


@dataclass(frozen=True)
class DocRun:
    """A kept run a role names: its folder and its run.json."""

    role: str
    folder: Path
    record: dict

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def commit(self) -> str:
        return str(self.record.get("commit") or "")

    @property
    def reports(self) -> Path:
        return self.folder / REPORTS

    def header(self, repo: Path) -> RunHeader:
        # A run kept under <checkout>/runs/<id> names its config files inside that checkout, which is not
        # the rendering one when the run was made in another clone: both are tried, the rendering one first.
        files = tuple(_shown(f, repo, self.folder.parent.parent) for f in self.record.get("config_files") or [])
        return RunHeader(self.id, str(self.record.get("config_hash") or ""), self.commit[:12], files)

    def encoder(self) -> str:
        """'`all-MiniLM-L6-v2/onnx-qint8-b1` (int8), `…/torch-fp32-sdpa` (fp32) on <CPU>': each encoder path
        its indexes were built with (the cache key without its content hash) and what it computes in, and the CPU."""
        keys = sorted({(KEY_PARTS.sub("", m), key_precision(m)) for m in self.record["encoders"].values()})
        return f"{', '.join(f'`{x}` ({p})' for x, p in keys) or 'none (no dense index)'} on {self.record['cpu']}"


def _shown(config_file: str, *checkouts: Path) -> str:
    """A config file as the docs name it: relative to the first checkout it lies in, else as recorded."""
    path = Path(config_file)
    if not path.is_absolute():
        return config_file
    for checkout in checkouts:
        try:
            return path.resolve().relative_to(Path(checkout).resolve()).as_posix()
        except ValueError:
            continue
    return config_file


def load_runs(named: dict[str, str], root: str | Path = RUNS) -> dict[str, DocRun]:
    """The kept runs ``ROLE=RUN`` names (a folder, an id under ``root``, or latest), once they are checked to
    be one clean commit's and to record their encoders."""
    unknown = sorted(set(named) - set(ROLES))
    if unknown:
        raise ValueError(f"readme: unknown run role(s) {', '.join(unknown)} (roles: {', '.join(ROLES)})")
    runs = {}
    for role, name in named.items():
        folder = resolve_kept(name, root)
        runs[role] = DocRun(role, folder, read_record(folder))
    shared_commit(runs)
    for role in OWN_COMMIT_ROLES & set(runs):
        one_commit([runs[role]])
    return runs


def shared_commit(runs: dict[str, DocRun]) -> str | None:
    """The one commit of the runs that must share it (every role but :data:`OWN_COMMIT_ROLES`), None when only
    own-commit runs are named."""
    shared = [r for role, r in runs.items() if role not in OWN_COMMIT_ROLES]
    return one_commit(shared) if shared else None


def block_role(name: str, page: str) -> str | None:
    """The role of the run a result block comes from: the one its name gives, else its page's (None: neither)."""
    return split_name(name)[1] or PAGE_ROLES.get(page)


def renders(name: str, page: str, runs: dict[str, DocRun]) -> bool:
    """Whether this rendering renders result block ``name``: a block of an own-commit role only when its run is
    named; every other one whenever a run that must share the commit is named (a missing one is then an error)."""
    role = block_role(name, page)
    if role in OWN_COMMIT_ROLES:
        return role in runs
    return any(r not in OWN_COMMIT_ROLES for r in runs)


def one_commit(runs: list[DocRun]) -> str:
    """The commit every run was made at (else a one-line refusal)."""
    for r in runs:
        where = f"{r.role} run {r.id} ({r.folder})"
        if not r.commit or r.commit == "unknown":
            raise ValueError(f"readme: the {where} records no commit")
        if r.record.get("dirty"):
            raise ValueError(
                f"readme: the {where} was made at commit {r.commit[:12]} with uncommitted changes: rerun it at a clean commit"
            )
        if "encoders" not in r.record or "cpu" not in r.record:
            raise ValueError(
                f"readme: the {where} records no encoders or CPU (kept before they were recorded): rerun it"
            )
    commits = {r.commit for r in runs}
    if len(commits) > 1:
        made = ", ".join(f"{r.role} {r.id} at {r.commit[:12]}" for r in runs)
        raise ValueError(f"readme: the runs were made at different commits ({made}): render runs of one commit")
    return commits.pop()


def run_stamp(run: DocRun, source: str, repo: Path) -> str:
    return (
        f"<sub>Rendered by `make readme` from `{REPORTS}/{source}`: {run.header(repo).markdown()} · "
        f"encoder {run.encoder()}.</sub>"
    )


def render_result(name: str, page: str, runs: dict[str, DocRun], repo: Path, registry: dict | None = None) -> str:
    """A result block's content from its run (stamp, blank line, markdown), or a one-line error naming the
    block, the run and the file."""
    base, role = split_name(name)[0], block_role(name, page)
    if role is None:
        raise ValueError(
            f"{page}: result block {name} names no run: add the page to PAGE_ROLES "
            f"(pipeline/publish/readme.py) or name one ({base}.{ROLES[0]})"
        )
    run = runs.get(role)
    if run is None:
        raise ValueError(f"{page}: block {name} needs the {role} run: --run {role}=runs/<id> (make readme RUNS=...)")
    r: Renderer = renderer(base, registry)
    stamped = r.stamp_from or r.source
    where = f"{page}: block {name}: the {role} run {run.id}"
    if not (run.reports / r.source).is_file():
        raise ValueError(f"{where} has no {REPORTS}/{r.source} ({run.folder})")
    m = manifest_path(run.reports / stamped)
    commit = str(json.loads(m.read_text()).get("git_commit") or "") if m.is_file() else ""
    if not commit:
        raise ValueError(f"{where} has no manifest naming a commit for {REPORTS}/{stamped}")
    if commit != run.commit:
        raise ValueError(
            f"{where}: {REPORTS}/{stamped} was made at commit {commit[:12]}, the run at {run.commit[:12]} "
            "(its rule was up to date from an earlier commit): rerun it"
        )
    return f"{run_stamp(run, r.source, repo)}\n\n{r.render(run.reports).rstrip(chr(10))}\n"


@dataclass
class Rendered:
    """What :func:`render_docs` changed, and the blocks it left as they were ("NAME (page)")."""

    changed: list[Path] = field(default_factory=list)
    left: list[str] = field(default_factory=list)


def fill_page(
    text: str,
    page: str,
    runs: dict[str, DocRun],
    repo: Path,
    bench: Path | None = None,
    registry: dict | None = None,
) -> tuple[str, list[str]]:
    """``page``'s text with its result blocks rendered from ``runs`` (none: left as they are) and its
    measurement blocks from ``bench`` (where it has their file and manifest); and the blocks left as they were."""
    blocks(text, page)
    left: list[str] = []

    def one(m: re.Match) -> str:
        name, body = m.group("name"), m.group("body")
        if is_result(name) and renders(name, page, runs):
            body = render_result(name, page, runs, repo, registry)
        elif not is_result(name) and bench is not None and _measured(bench, renderer(name, registry)):
            body = render_block(name, bench, registry)
        else:
            left.append(f"{name} ({page})")
        return f"{BEGIN.format(name)}\n{body}{END.format(name)}"

    return BLOCK.sub(one, text), left


def _measured(bench: Path, r: Renderer) -> bool:
    return (bench / r.source).is_file() and stamp(bench, r.source, r.stamp_from) is not None


def render_docs(repo: Path, runs: dict[str, DocRun], bench: Path | None = None) -> Rendered:
    """Render every page of README.md and docs/*.md; nothing is written unless every page renders."""
    repo = Path(repo)
    out, pages = Rendered(), {}
    for path in doc_files(repo):
        old = path.read_text(encoding="utf-8")
        new, left = fill_page(old, path.relative_to(repo).as_posix(), runs, repo, bench)
        out.left += left
        if new != old:
            pages[path] = new
    for path, new in pages.items():
        atomic_write_text(path, new)
        out.changed.append(path)
    return out
