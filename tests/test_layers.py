"""The import floors hold: import-linter's contracts ([tool.importlinter] in pyproject.toml, also run by
`make lint`) checked under pytest, so `make test` fails on a broken floor as well."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETTINGS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]


def lint_imports(cwd: Path, *args: str, path: Path = REPO) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(path)}
    return subprocess.run([str(exe), "--no-cache", "--no-logo", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_the_import_contracts_hold():
    done = lint_imports(REPO)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_no_contract_ignores_an_import():
    assert SETTINGS["contracts"]
    assert [c["id"] for c in SETTINGS["contracts"] if "ignore_imports" in c or c.get("allow_indirect_imports")] == []


def test_lazy_and_type_checking_imports_count(tmp_path):
    """With the repo's graph settings, an upward import inside a function and one under
    ``if TYPE_CHECKING:`` both break a floor (on a toy package, with the real tool)."""
    pkg = tmp_path / "toy"
    pkg.mkdir()
    for name, text in {
        "__init__.py": "",
        "top.py": "X = 1\n",
        "lazy.py": "def f():\n    from toy.top import X\n    return X\n",
        "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.top import X\n",
    }.items():
        (pkg / name).write_text(text)
    session = {k: v for k, v in SETTINGS.items() if k != "contracts"}
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = toy\n"
        f"exclude_type_checking_imports = {session['exclude_type_checking_imports']}\n"
        "[importlinter:contract:toy]\nname = toy floors\ntype = layers\ncontainers = toy\n"
        "layers =\n    top\n    lazy | typed\n"
    )
    done = lint_imports(tmp_path, "--config", ".importlinter", path=tmp_path)
    assert done.returncode == 1
    assert "toy.lazy -> toy.top" in done.stdout and "toy.typed -> toy.top" in done.stdout, done.stdout
