"""The parse-quality PDFs: real PDFs with outlines, from Debian documentation packages.

A PDF's outline (``get_toc()``, written by its authoring tool) is an independent ground truth
for headings. One typesetting family (a *source*: LaTeX classes, Texinfo, groff/mom, DocBook
via dblatex, ReportLab, Apache FOP, plain TeX/eplain) can hide behind many packages, so the
report averages per source. The manifest ``data/parse-corpus.csv`` fixes every document:
package and version (``apt-get download pkg=version``), the file inside it, its sha256, and a
page window (long manuals are cut to at most 10 pages at a chapter start, drawn once with a
fixed seed, so all of them parse in minutes). Rows with ``role=check`` come from a source
reserved for the independent check (``texlive-publishers-doc``) and are never used to tune.

Each document is written to ``<out>/<doc>.pdf`` (the window) and ``<out>/<doc>.toc.json`` (the
outline entries that point into the window, pages renumbered). The folder is a cache, not
committed; packages are fetched once and only the listed files are kept.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.paths import QUALITY_PDFS_MANIFEST

MANIFEST = Path(QUALITY_PDFS_MANIFEST)
RESERVED_SOURCE = "publishers"  # texlive-publishers-doc: the independent check, never tuned on


@dataclass(frozen=True)
class Entry:
    """One document: a page window of one file of one package version."""

    doc: str
    source: str
    role: str  # "dev" (measured while developing) or "check" (the reserved independent check)
    package: str
    version: str
    file: str
    sha256: str
    first_page: int
    last_page: int
    sample: bool  # parsed by the default DAG (one small document per source)
    truth: str = ""  # the heading source shipped beside the PDF (a vignette's .Rnw/.Rmd) when it has no outline
    truth_sha256: str = ""


def load_manifest(path: str | Path = MANIFEST) -> list[Entry]:
    with open(path, encoding="utf-8", newline="") as fh:
        return [
            Entry(
                r["doc"],
                r["source"],
                r["role"],
                r["package"],
                r["version"],
                r["file"],
                r["sha256"],
                int(r["first_page"]),
                int(r["last_page"]),
                r["sample"] == "1",
                r.get("truth") or "",
                r.get("truth_sha256") or "",
            )
            for r in csv.DictReader(fh)
        ]


SCOPES = ("sample", "dev", "all")  # the manifest rows `select` picks (parse-quality and quality-pdfs --scope)


def select(entries: list[Entry], scope: str) -> list[Entry]:
    """``sample`` (default DAG), ``dev`` (the development PDFs), ``all`` (plus the reserved check)."""
    if scope == "sample":
        return [e for e in entries if e.sample]
    if scope == "dev":
        return [e for e in entries if e.role == "dev"]
    if scope == "all":
        return list(entries)
    raise ValueError(f"parse-quality scope {scope!r}: use {', '.join(SCOPES)}")


def window_toc(toc: list[list], first: int, last: int) -> list[list]:
    """Outline entries ``[level, title, page]`` pointing into pages first..last, renumbered from 1."""
    return [[lv, title, page - first + 1] for lv, title, page, *_ in toc if first <= page <= last and title.strip()]


def _kept(files_dir: Path, package: str, file: str) -> Path:
    return files_dir / package / file.removesuffix(".gz")


def _truth(doc, entry: Entry, source: Path | None) -> list[list]:
    """The full document's outline: its own bookmarks, or the headings of the source shipped beside it."""
    if source is None:
        return doc.get_toc(simple=True)
    from pipeline.parse.source_toc import locate, source_headings

    headings = source_headings(entry.truth, source.read_text(encoding="utf-8", errors="replace"))
    try:
        return locate(headings, [page.get_text() for page in doc])
    except ValueError as exc:
        raise RuntimeError(f"quality PDFs: {entry.doc}: {exc}") from exc


def write_window(src: Path, entry: Entry, out_dir: Path, source: Path | None = None) -> Path:
    """Cut the entry's page window out of ``src`` into ``<doc>.pdf`` plus its outline ``<doc>.toc.json``
    (the PDF's bookmarks, or the headings of ``source``, the entry's ``truth`` file, located on their pages)."""
    import pymupdf

    from pipeline.io import atomic_write_text

    with pymupdf.open(src) as doc:
        toc = window_toc(_truth(doc, entry, source), entry.first_page, entry.last_page)
        doc.set_toc([])  # the window's outline lives in the sidecar (levels kept as in the full document)
        doc.select(list(range(entry.first_page - 1, min(entry.last_page, doc.page_count))))
        target = out_dir / f"{entry.doc}.pdf"
        tmp = target.with_suffix(".pdf.tmp")
        doc.save(tmp, garbage=3, deflate=True, no_new_id=True)  # the source's ID: the same window, the same bytes
    tmp.replace(target)
    atomic_write_text(out_dir / f"{entry.doc}.toc.json", json.dumps(toc, ensure_ascii=False) + "\n")
    return target


def _files(entries: list[Entry]) -> list[tuple[str, str]]:
    """Every file the entries need from their package, with its sha256: the PDFs and any heading sources."""
    pairs = [(e.file, e.sha256) for e in entries] + [(e.truth, e.truth_sha256) for e in entries if e.truth]
    return list(dict.fromkeys(pairs))


def _apt(*cmd: str, cwd: Path) -> None:
    try:
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"quality PDFs: {' '.join(exc.cmd)} failed: {exc.stderr.strip().splitlines()[-1:]}") from exc


def _download(packages: list[tuple[str, str]], into: Path) -> dict[tuple[str, str], Path]:
    """``apt-get download`` every package version in one call (one apt start, the downloads pipelined;
    one call per package cost ~2 s each on a fresh machine): {(package, version): its .deb}."""
    if not packages:
        return {}
    for tool in ("apt-get", "dpkg-deb"):
        if not shutil.which(tool):
            raise RuntimeError(f"quality PDFs: '{tool}' not found; it needs a Debian-like system")
    _apt("apt-get", "download", *(f"{package}={version}" for package, version in packages), cwd=into)
    # apt names a file <package>_<version, ':' as %3a>_<arch>.deb
    return {(p, v): next(into.glob(f"{p}_{v.replace(':', '%3a')}_*.deb")) for p, v in packages}


def _unpack(entries: list[Entry], deb: Path, files_dir: Path) -> None:
    """Keep the entries' listed files (sha256-checked) of one package version's ``deb`` under ``files_dir``."""
    package, version = entries[0].package, entries[0].version
    with tempfile.TemporaryDirectory() as tmp:
        _apt("dpkg-deb", "-x", str(deb), "x", cwd=Path(tmp))
        for file, sha256 in _files(entries):
            src = Path(tmp) / "x" / file
            if not src.is_file():
                raise RuntimeError(f"quality PDFs: {package} {version} has no {file}")
            digest = hashlib.sha256(src.read_bytes()).hexdigest()
            if digest != sha256:
                raise RuntimeError(f"quality PDFs: {package}:{file} sha256 {digest[:12]} != manifest {sha256[:12]}")
            target = _kept(files_dir, package, file)
            target.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(src) if file.endswith(".gz") else open(src, "rb") as fin, open(target, "wb") as fout:
                shutil.copyfileobj(fin, fout)


def fetch_pdfs(out_dir: str | Path, entries: list[Entry] | None = None) -> list[Path]:
    """Download, check and cut the manifest's documents into ``out_dir``; skip what is there."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = load_manifest() if entries is None else entries
    files_dir = out_dir / ".files"
    todo = [
        e for e in entries if not (out_dir / f"{e.doc}.pdf").exists() or not (out_dir / f"{e.doc}.toc.json").exists()
    ]
    by_package: dict[tuple[str, str], list[Entry]] = {}
    for e in todo:
        by_package.setdefault((e.package, e.version), []).append(e)
    missing = [
        key
        for key, group in sorted(by_package.items())
        if any(not _kept(files_dir, key[0], f).is_file() for f, _ in _files(group))
    ]
    with tempfile.TemporaryDirectory() as debs:
        downloaded = _download(missing, Path(debs))
        for (package, version), group in sorted(by_package.items()):
            if (package, version) in downloaded:
                _unpack(group, downloaded[(package, version)], files_dir)
            for e in group:
                source = _kept(files_dir, package, e.truth) if e.truth else None
                write_window(_kept(files_dir, package, e.file), e, out_dir, source)
    return sorted(out_dir / f"{e.doc}.pdf" for e in entries)
