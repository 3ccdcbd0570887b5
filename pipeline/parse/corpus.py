"""The parse-quality corpus: real PDFs no one here wrote, from Debian documentation packages.

TeX Live's documentation PDFs carry hyperref outlines (``get_toc()``), which gives an
independent ground truth for headings; they mix one- and two-column layouts, tables and
long running text. ``apt-get download`` fetches a package from Debian's registry without
installing it; ``dpkg-deb -x`` unpacks it; only the listed PDFs are kept (the package is
85 MB, the PDFs we keep a few MB). Nothing here is committed: the folder is a cache.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

# package -> PDFs inside it (paths under /usr/share/doc/texlive-doc/); chosen for variety:
# user guides with deep numbering and tables, two-column newsletters, a proceedings class.
CORPUS = {
    "texlive-latex-base-doc": [
        "latex/base/usrguide.pdf", "latex/base/clsguide.pdf", "latex/base/fntguide.pdf",
        "latex/base/cfgguide.pdf", "latex/base/modguide.pdf", "latex/base/cyrguide.pdf",
        "latex/base/encguide.pdf", "latex/base/ltnews31.pdf", "latex/base/ltnews34.pdf",
        "latex/base/proc.pdf",
    ],
}
DOC_ROOT = Path("usr/share/doc/texlive-doc")


def fetch_corpus(out_dir: str | Path, corpus: dict[str, list[str]] = CORPUS) -> list[Path]:
    """Download and unpack the packages, keep the listed PDFs in ``out_dir``; skip what is there."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    kept = []
    for package, pdfs in sorted(corpus.items()):
        targets = [out_dir / Path(p).name for p in pdfs]
        if all(t.exists() for t in targets):
            kept += targets
            continue
        for tool in ("apt-get", "dpkg-deb"):
            if not shutil.which(tool):
                raise RuntimeError(f"parse corpus: '{tool}' not found; it needs a Debian-like system")
        with tempfile.TemporaryDirectory() as tmp:
            run = lambda *cmd: subprocess.run(cmd, cwd=tmp, check=True, capture_output=True, text=True)  # noqa: E731
            try:
                run("apt-get", "download", package)
                deb = next(Path(tmp).glob(f"{package}_*.deb"))
                run("dpkg-deb", "-x", deb.name, "x")
            except subprocess.CalledProcessError as exc:
                raise RuntimeError(f"parse corpus: {' '.join(exc.cmd)} failed: {exc.stderr.strip().splitlines()[-1:]}") from exc
            for pdf, target in zip(pdfs, targets):
                src = Path(tmp) / "x" / DOC_ROOT / pdf
                if not src.is_file():
                    raise RuntimeError(f"parse corpus: {package} has no {pdf}")
                shutil.copyfile(src, target)
                kept.append(target)
    return sorted(kept)
