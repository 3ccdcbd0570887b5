"""Every module a function imports lazily exists. The verbs import their stage code inside the command
(`python -m pipeline --help` stays fast), so a moved module breaks only the command that reaches it, at
run time: `bench --llm-models` imported bench_doc from report/export/ after the redesign had moved it
to pipeline.publish, and nothing ran that path until a user did."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

PIPELINE = Path(__file__).resolve().parents[1] / "pipeline"


def lazy_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of each ``import``/``from … import`` inside a function of ``path``."""
    out = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                out += [(node.lineno, node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                out += [(node.lineno, a.name, None) for a in node.names]
    return out


def resolves(module: str, name: str | None) -> bool:
    """Whether ``from module import name`` (or ``import module``) would succeed; a pipeline module that
    cannot load for want of an optional package outside pipeline (an extra not installed) counts as resolved."""
    try:
        if importlib.util.find_spec(module) is None:
            return False
    except ModuleNotFoundError:
        return False
    if name is None:
        return True
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as e:
        return not (e.name or "").startswith("pipeline")
    if hasattr(loaded, name):
        return True
    try:
        return importlib.util.find_spec(f"{module}.{name}") is not None
    except ModuleNotFoundError:
        return False


FILES = sorted(p for p in PIPELINE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PIPELINE.parent)))
def test_every_lazy_import_resolves(path):
    missing = [f"line {line}: from {mod} import {name}" if name else f"line {line}: import {mod}"
               for line, mod, name in lazy_imports(path) if mod.startswith("pipeline") and not resolves(mod, name)]
    assert missing == []


def test_the_check_catches_a_moved_module(tmp_path):
    bad = tmp_path / "verb.py"
    bad.write_text("def cmd():\n    from pipeline.report.export.bench_doc import save_bench\n")
    good = tmp_path / "ok.py"
    good.write_text("def cmd():\n    from pipeline.publish.bench_doc import save_bench\n")
    assert [resolves(m, n) for _, m, n in lazy_imports(bad)] == [False]
    assert [resolves(m, n) for _, m, n in lazy_imports(good)] == [True]
