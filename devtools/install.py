"""The set-up's installer: uv where it can be had, else pip; the same indexes, the same versions.

pip spends most of a fresh set-up in Python, resolving, unpacking and byte-compiling ~22,500 files one
at a time; uv (pinned below) does the same install in about half the CPU and a third of the wall time.
uv lives beside the venv (``<venv>/.uv``), not in it, so ``pip freeze`` lists exactly what pip would
install. uv does not read pip's configuration, so the index URLs, find-links, constraint files and
certificate bundle that ``pip config list`` shows (its files and the PIP_* variables) are passed on, and
uv picks the best match over all indexes, as pip does. uv byte-compiles too (pip's default): the DAG's
processes may run with PYTHONDONTWRITEBYTECODE, and each would then recompile every module it imports.
Where uv cannot be had (no wheel for the platform, no PyPI, ``--installer pip``) pip installs.

Stdlib only: it runs with the new venv's python before anything is installed in it.
"""

from __future__ import annotations

import argparse
import ast
import os
import shlex
import subprocess
import sys
from pathlib import Path

UV = "uv==0.13.9"
# pip's configuration keys that choose what gets installed, and uv's options for them.
OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links"}
CONSTRAINT = "constraint"


def pip_settings(listing: str) -> dict[str, list[str]]:
    """``pip config list`` output -> {key: values}; a later line of a key wins (files are listed from the
    global one to the site one, then the PIP_* variables, in the order pip lets them override)."""
    settings: dict[str, list[str]] = {}
    for line in listing.splitlines():
        name, sep, value = line.partition("=")
        if not sep:
            continue
        key = name.rpartition(".")[2]
        settings[key] = str(ast.literal_eval(value)).split()
    return settings


def uv_options(settings: dict[str, list[str]]) -> list[str]:
    """uv pip install's options for pip's settings: indexes, find-links, constraints, best match over all."""
    out = ["--index-strategy", "unsafe-best-match"]
    for key, option in OPTIONS.items():
        for value in settings.get(key, []):
            out += [option, value]
    for value in settings.get(CONSTRAINT, []):
        out += ["-c", value]
    if settings.get("no-index", ["0"])[-1].lower() in ("1", "true", "yes", "on"):
        out.append("--no-index")
    return out


def ensure_uv(python: Path, venv: Path) -> Path | None:
    """The pinned uv, installed by pip under ``<venv>/.uv`` (a wheel only, never a source build); None
    where that fails."""
    target = venv / ".uv"
    exe = target / "bin" / "uv"
    if exe.is_file() and os.access(exe, os.X_OK):
        return exe
    pip = [str(python), "-m", "pip", "install", "--quiet", "--no-compile", "--only-binary", ":all:"]
    done = subprocess.run([*pip, "--target", str(target), UV], check=False)
    if done.returncode == 0 and exe.is_file():
        return exe
    print(f"install: {UV} could not be installed; pip installs instead", file=sys.stderr)
    return None


def uv_command(uv: Path, python: Path, args: list[str], listing: str) -> tuple[list[str], dict[str, str]]:
    """uv's command line and environment for ``pip install ARGS`` with pip's configuration ``listing``."""
    settings = pip_settings(listing)
    env = dict(os.environ)
    if settings.get("cert") and "SSL_CERT_FILE" not in env:
        env["SSL_CERT_FILE"] = settings["cert"][-1]
    cmd = [str(uv), "pip", "install", "--quiet", "--python", str(python), "--compile-bytecode"]
    return cmd + uv_options(settings) + args, env


def install(venv: Path, args: list[str], installer: str = "uv") -> None:
    """``pip install ARGS`` into ``venv``, by uv where it can be had, else (or where uv fails) by pip."""
    python = venv / "bin" / "python"
    uv = ensure_uv(python, venv) if installer == "uv" else None
    if uv is not None:
        listing = subprocess.run(
            [str(python), "-m", "pip", "config", "list"], check=True, capture_output=True, text=True
        ).stdout
        cmd, env = uv_command(uv, python, args, listing)
        if subprocess.run(cmd, env=env, check=False).returncode == 0:
            return
        print(f"install: uv failed ({shlex.join(cmd)}); pip installs instead", file=sys.stderr)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *args], check=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m devtools.install", description=__doc__.splitlines()[0])
    p.add_argument("--venv", type=Path, required=True, help="the virtual environment to install into")
    p.add_argument("--installer", choices=("uv", "pip"), default="uv", help="pip: never try uv")
    p.add_argument("args", nargs=argparse.REMAINDER, help="pip install's arguments (after --)")
    a = p.parse_args(argv)
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    try:
        install(a.venv, args, a.installer)
    except subprocess.CalledProcessError as exc:
        print(f"install: {shlex.join(exc.cmd)} failed with exit code {exc.returncode}", file=sys.stderr)
        return exc.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
