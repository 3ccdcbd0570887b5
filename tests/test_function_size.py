"""No function in pipeline/ runs over 80 lines (issue #16, habits): a longer one is split into named
helpers that say what they do. The allow-list is for a split that is truly not worth it, each with
its reason; it is empty today."""
from __future__ import annotations

import ast
from pathlib import Path

MAX_LINES = 80
PIPELINE = Path(__file__).resolve().parent.parent / "pipeline"
# "<module>.py:<function>" -> why it may stay longer than MAX_LINES
ALLOWED: dict[str, str] = {}


def long_functions(root: Path, max_lines: int = MAX_LINES) -> dict[str, int]:
    """'path/relative/to/root.py:name' -> line count (decorators excluded) of every longer function."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > max_lines:
                    found[f"{path.relative_to(root).as_posix()}:{node.name}"] = lines
    return found


def test_no_function_in_pipeline_exceeds_80_lines():
    too_long = {name: n for name, n in long_functions(PIPELINE).items() if name not in ALLOWED}
    assert not too_long, f"split these into named helpers (or allow-list one with a reason): {too_long}"


def test_allow_list_names_only_functions_still_too_long():
    stale = set(ALLOWED) - set(long_functions(PIPELINE))
    assert not stale, f"no longer over {MAX_LINES} lines, drop from ALLOWED: {stale}"


def test_the_check_catches_a_long_function(tmp_path):
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    (tmp_path / "toy.py").write_text(f"def short():\n    return 1\n\n\ndef long():\n{body}")
    assert long_functions(tmp_path) == {"toy.py:long": MAX_LINES + 1}
