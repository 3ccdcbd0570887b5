"""No module imports from a floor above its own, and no two packages import each other in a
circle (the floors: pipeline/layers.py). Imports inside functions count too: a lazy import
is still a dependency."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pipeline.layers import FLOORS, floor_of

ROOT = Path(__file__).resolve().parents[1] / "pipeline"

# Upward imports that are known and owned elsewhere: (importing module, imported module) -> why.
# An entry that no longer occurs fails the test, so this list only shrinks.
KNOWN = {
    ("pipeline.datasets.benchmarks", "pipeline.parse.text"): "benchmark ingest reuses the text parser",
    ("pipeline.parse.quality_report", "pipeline.report.figures"): "the parse-quality figure uses report's PNG/SVG saver",
    ("pipeline.sprout.speed", "pipeline.report.bench_doc"): "the sprout speed bench writes through bench_doc",
}


def unit(module: str) -> str:
    """``pipeline.answer.run`` -> ``answer``; ``pipeline.cli`` -> ``cli``."""
    return module.split(".")[1]


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> set[str]:
    """The ``pipeline.*`` modules a file imports (relative imports resolved, any depth)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:  # `if TYPE_CHECKING:` imports are annotations, not dependencies
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            if base == "pipeline":  # from pipeline import x
                found.update(f"pipeline.{a.name}" for a in node.names)
    return {m for m in found if m.startswith("pipeline.")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def graph(root: Path) -> dict[str, set[str]]:
    return {module_name(p, root): imports(p, root) for p in sorted(root.rglob("*.py"))}


def upward(edges: dict[str, set[str]], floors=FLOORS) -> list[tuple[str, str]]:
    bad = []
    for src, targets in edges.items():
        for dst in targets:
            a, b = _floor(unit(src), floors), _floor(unit(dst), floors)
            if a is not None and b is not None and b > a:
                bad.append((src, dst))
    return sorted(bad)


def unplaced(edges: dict[str, set[str]], floors=FLOORS) -> list[str]:
    names = {unit(m) for m in edges if m.count(".")} | {unit(t) for ts in edges.values() for t in ts}
    return sorted(n for n in names if _floor(n, floors) is None)


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Package-level cycles (strongly connected groups of more than one package, or a self loop
    between distinct packages is impossible): Tarjan's algorithm on the unit graph."""
    g: dict[str, set[str]] = {}
    for src, targets in edges.items():
        if src.count("."):
            g.setdefault(unit(src), set()).update(unit(t) for t in targets if unit(t) != unit(src))
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def _floor(name: str, floors) -> int | None:
    if floors is FLOORS:
        return floor_of(name)
    return next((i for i, names in enumerate(floors) if name in names), None)


def test_every_package_has_a_floor():
    assert unplaced(graph(ROOT)) == [], "place these in pipeline/layers.py FLOORS"


def test_no_module_imports_from_a_floor_above():
    found = set(upward(graph(ROOT)))
    new = sorted(found - set(KNOWN))
    assert new == [], f"upward imports (see pipeline/layers.py): {new}"
    stale = sorted(set(KNOWN) - found)
    assert stale == [], f"fixed: remove from KNOWN {stale}"


def test_no_package_level_circle():
    edges = graph(ROOT)
    pruned = {src: {t for t in ts if (src, t) not in KNOWN} for src, ts in edges.items()}
    assert circles(pruned) == []


def test_the_checks_catch_a_toy_violation(tmp_path):
    """The checker itself: an index module importing retrieve is upward, a parse<->answer pair
    is a circle, a package missing from the map is reported."""
    root = tmp_path / "pipeline"
    for rel, text in {"__init__.py": "", "index/__init__.py": "", "retrieve/__init__.py": "",
                      "index/bm25.py": "from pipeline.retrieve.fusion import rrf\n",
                      "retrieve/fusion.py": "from ..index import bm25\n",
                      "parse/__init__.py": "", "answer/__init__.py": "",
                      "parse/vision.py": "def f():\n    from pipeline.answer import llm\n",
                      "answer/llm.py": "import pipeline.parse.vision\n",
                      "newpkg/__init__.py": "from pipeline import tree\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    edges = graph(root)
    floors = (("tree",), ("parse",), ("index",), ("retrieve",), ("answer",))
    assert upward(edges, floors) == [("pipeline.index.bm25", "pipeline.retrieve.fusion"),
                                     ("pipeline.parse.vision", "pipeline.answer")]
    assert sorted(circles(edges)) == [["answer", "parse"], ["index", "retrieve"]]
    assert unplaced(edges, floors) == ["newpkg"]


@pytest.mark.parametrize("name", ["llm", "embed", "io", "provenance", "ranking"])
def test_shared_services_are_on_the_bottom_floor(name):
    assert floor_of(name) == 0
