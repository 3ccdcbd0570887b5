"""No stage, service or report function takes its configuration as a bare dict (#36's done-when).

The drivers (the CLI, its verbs and the workflow the Snakefile asks) and the config layer (the config
package, the schema, and the typed specs and registry tables whose job is to parse a config table) read the
config dict; below them a job's settings travel as typed specs (dataclasses parsed once), so a reader sees
what a function may read and mypy checks it. A parameter carries configuration when its name says so (cfg,
config, params, settings, spec, variant, ... or a ``_cfg``/``_config``/``_params``/``_settings``/``_spec``
suffix); it must then be annotated, and not with ``dict``, ``Mapping``, ``Any`` or the raw-table aliases
(``ConfigTable``, ``ConfigTree``). The one exception is a spec's own parser (``from_dict``, ``from_params``,
``from_slices``, ``parse``) and resolver (``resolve``: the defaults that depend on other entries, written into the
raw table before it is hashed): it is where a raw table becomes typed, wherever the spec lives (an answering
backend's beside its code, in pipeline/answer/).
"""

import ast
from pathlib import Path

import pytest

PIPELINE = Path(__file__).resolve().parents[1] / "pipeline"
DRIVERS = {"cli", "__main__", "verbs", "workflow", "register_builtins", "rules", "schemas"}
CONFIG_LAYER = {"config", "config_schema", "specs", "registry", "llm_models"}
CONFIG_NAMES = {"cfg", "config", "llm_cfg", "params", "settings", "variant", "spec", "entry", "options", "opts",
                "llm", "table"}
CONFIG_SUFFIXES = ("_cfg", "_config", "_params", "_settings", "_spec")
UNTYPED = ("dict", "Mapping", "Any", "typing.Any", "collections.abc.Mapping", "ConfigTable", "ConfigTree")
PARSERS = {"from_dict", "from_params", "from_slices", "parse", "resolve"}


def _modules() -> list[Path]:
    return [p for p in sorted(PIPELINE.rglob("*.py")) if p.relative_to(PIPELINE).parts[0].removesuffix(".py")
            not in DRIVERS | CONFIG_LAYER]


def untyped_config_parameters(source: str, where: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.name in PARSERS:
            continue
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is None or arg.arg in ("self", "cls"):
                continue
            if arg.arg not in CONFIG_NAMES and not arg.arg.endswith(CONFIG_SUFFIXES):
                continue
            text = ast.unparse(arg.annotation) if arg.annotation is not None else None
            if text is None or any(part in UNTYPED for part in (t.strip() for t in text.split("|"))) or text.startswith(
                tuple(f"{t}[" for t in UNTYPED)
            ):
                found.append(f"{where}:{node.lineno} {node.name}({arg.arg}: {text})")
    return found


def test_no_stage_or_report_parameter_carries_configuration_as_a_dict():
    found = [line for p in _modules()
             for line in untyped_config_parameters(p.read_text(encoding="utf-8"), str(p.relative_to(PIPELINE.parent)))]
    assert not found, "typed specs, not dicts:\n" + "\n".join(found)


@pytest.mark.parametrize("source, bad", [
    ("def f(cfg: dict): ...", True),
    ("def f(cfg): ...", True),
    ("def f(*, llm_cfg: Mapping[str, Any]): ...", True),
    ("def f(index_spec: Any): ...", True),
    ("def f(cfg: 'RunSpec'): ...", False),
    ("def f(spec: IndexSpec, rows: dict): ...", False),
    ("def f(params: ConfigTable | None): ...", True),
    ("def from_dict(params: ConfigTable): ...", False),
])
def test_the_check_finds_what_it_should(source, bad):
    assert bool(untyped_config_parameters(source, "probe.py")) is bad
