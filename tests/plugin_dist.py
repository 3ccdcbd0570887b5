"""Toy plugins installed the way a user installs theirs (docs/architecture.md, "Plugins"): a distribution whose
pyproject.toml declares its modules as entry points of wattbench's groups, built and installed by pip. Never
into the shared .venv: into a folder of its own (``pip install --target``), which a test puts on sys.path
(importlib.metadata reads the .dist-info there as it reads the venv's) or on a Snakemake run's PYTHONPATH; or
into a scratch venv that sees the shared one's packages (:func:`venv_with`), whose Python then finds the
plugin with nothing in its environment, as a cluster node's job does."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

VERSION = "0.1.0"


def pyproject(name: str, modules: list[str], entry_points: dict[str, dict[str, str]]) -> str:
    """A plugin's pyproject.toml: its top-level modules and, per group, ``entry name = "module"``."""
    lines = ["[build-system]", 'requires = ["setuptools>=68"]', 'build-backend = "setuptools.build_meta"', "",
             "[project]", f'name = "{name}"', f'version = "{VERSION}"', "", "[tool.setuptools]",
             f"py-modules = {json.dumps(modules)}"]
    for group, entries in entry_points.items():
        lines += ["", f'[project.entry-points."{group}"]', *(f'{n} = "{m}"' for n, m in entries.items())]
    return "\n".join(lines) + "\n"


def source_tree(root: Path, name: str, modules: list[Path], entry_points: dict[str, dict[str, str]]) -> Path:
    """The distribution's source: copies of ``modules`` beside its pyproject.toml."""
    src = root / name
    src.mkdir(parents=True)
    for m in modules:
        shutil.copy(m, src / m.name)
    (src / "pyproject.toml").write_text(pyproject(name, [m.stem for m in modules], entry_points))
    return src


def pip_install(src: Path, *where: str, python: Path | None = None) -> None:
    """pip builds the distribution (setuptools, from the shared venv: no index, no isolation) and installs it
    (into ``python``'s environment when given)."""
    into = ["--python", str(python)] if python else []
    done = subprocess.run([sys.executable, "-m", "pip", *into, "install", "--quiet", "--no-deps", "--no-index",
                           "--no-build-isolation", "--disable-pip-version-check", *where, str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def install(root: Path, name: str, modules: list[Path], entry_points: dict[str, dict[str, str]]) -> Path:
    """The plugin built under ``root`` and pip-installed into ``root/site``; that folder."""
    site = root / "site"
    pip_install(source_tree(root / "src", name, modules, entry_points), "--target", str(site))
    return site


def venv_with(root: Path, name: str, modules: list[Path], entry_points: dict[str, dict[str, str]]) -> Path:
    """A scratch venv that sees the shared venv's packages (a .pth file adds its site-packages, editable
    wattbench included) with the plugin pip-installed into it; its Python."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    shared = sysconfig.get_paths()["purelib"]
    (Path(own) / "shared-venv.pth").write_text(f"import site; site.addsitedir({shared!r})\n")
    pip_install(source_tree(root / "src", name, modules, entry_points), python=python)
    return python
