"""list, config and plugins: what a grid holds, the resolved config with where each value came from, and
every name a config may give a kind of thing with where each comes from (built in, or a plugin's distribution).

Both read a config the way Snakemake does (``--configfile FILE...``, ``--config k=v``), through
pipeline/config/load.py's resolver: each file over the chain of files its ``extends:`` names, then ``--set``
overrides, validated. The provenance walk (:func:`value_sources`) takes those layers as data.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from pipeline.config_schema import declared_defaults
from pipeline.registry.answer_backends import calls_llm
from pipeline.registry.answer_backends import get as get_backend
from pipeline.specs import PlannerSpec, RetrievalSpec
from pipeline.verbs.base import config_args, config_files, config_overrides, verb

DEFAULT = "default"  # the source of a value no layer set: a declared default, or resolved from others
SECTIONS = ("datasets", "retrieval", "answering", "ablations", "presets")


# --- the resolved config and its layers ---


def read_layers(files: list[str], overrides: dict) -> list[tuple[str, dict]]:
    """``(source, raw mapping)`` per layer, lowest first: each file's ``extends`` chain (base first,
    ``extends`` itself dropped, old key names renamed as the run renames them), then ``--set``."""
    from pipeline.config import EXTENDS, config_chain
    from pipeline.config.aliases import rename_keys

    layers = []
    for path in files:
        chain = config_chain(path)
        for part in chain:
            with open(part, encoding="utf-8") as fh:
                raw = yaml.safe_load(fh) or {}
            raw.pop(EXTENDS, None)
            rename_keys(raw)
            layers.append((str(path) if part == chain[-1] else _shown(part), raw))
    if overrides:
        over = dict(overrides)
        rename_keys(over)
        layers.append(("--set", over))
    return layers


def resolve(files: list[str], overrides: dict) -> tuple[dict, list[tuple[str, dict]]]:
    """The validated config of ``files`` (pipeline.config.load_config) and its layers."""
    from pipeline.config import load_config

    if not files:
        raise ValueError("config: name at least one config file")
    cfg = load_config(files, overrides)
    return json.loads(json.dumps(cfg)), read_layers(files, overrides)


def _shown(path: Path) -> str:
    """A file an ``extends`` chain names: relative to the working folder where it is below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _leaves(obj: dict, path: tuple = ()) -> list[tuple]:
    """Key paths of ``obj``'s values that are not non-empty mappings (lists are single values)."""
    out: list[tuple] = []
    for k, v in obj.items():
        if isinstance(v, dict) and v:
            out += _leaves(v, (*path, k))
        else:
            out.append((*path, k))
    return out


def _sets(raw: dict, path: tuple) -> bool:
    """Whether a layer writes the value at ``path`` (itself or a mapping holding it)."""
    node = raw
    for k in path:
        if not isinstance(node, dict) or k not in node:
            return False
        node = node[k]
    return True


def value_sources(resolved: dict, layers: list[tuple[str, dict]]) -> dict[tuple, str]:
    """Each resolved value's source: the last layer that writes it, else :data:`DEFAULT`."""
    return {
        path: next((name for name, raw in reversed(layers) if _sets(raw, path)), DEFAULT) for path in _leaves(resolved)
    }


def _flow(value) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10**9, sort_keys=False).removesuffix("\n...\n").strip()


def annotated_yaml(cfg: dict, sources: dict[tuple, str], path: tuple = (), depth: int = 0) -> list[str]:
    """``cfg`` as block YAML, each value followed by ``# <its source>`` (still valid YAML)."""
    lines = []
    for k, v in cfg.items():
        key = f"{'  ' * depth}{_flow(k)}:"
        if isinstance(v, dict) and v:
            lines += [key, *annotated_yaml(v, sources, (*path, k), depth + 1)]
        else:
            lines.append(f"{key} {_flow(v)}".ljust(60) + f"  # {sources[(*path, k)]}")
    return lines


def cmd_config(a) -> None:
    cfg, layers = resolve(config_files(a), config_overrides(a.set))
    print(f"# resolved config of {' + '.join(name for name, _ in layers)}; after each value: where it came from")
    print(f"# ('{DEFAULT}': a declared default or resolved from other keys)")
    print("\n".join(annotated_yaml(cfg, value_sources(cfg, layers))))


# --- list: one line per dataset, variant, ablation and preset ---


def _retrieval_line(cfg: dict, v: dict) -> str:
    idx = cfg["indexes"][v["index"]]
    parts = [f"{v['index']} ({idx['kind']}) top {v['top_k']}"]
    if v.get("levels"):
        parts.append("levels " + "+".join(v["levels"]))
    if v.get("hybrid"):
        h = v["hybrid"]
        parts.append(f"+ {h['index']} {h['mode']}" + (f" {h['weight']}" if "weight" in h else ""))
    unset = declared_defaults(RetrievalSpec)  # a key at its declared default says nothing about the variant
    if (v.get("planner") or {}).get("kind", "none") != declared_defaults(PlannerSpec)["kind"]:
        parts.append(f"planner {v['planner']['kind']} n={v['planner'].get('n')}")
    parts += [f"{k} {v[k]}" for k in ("rerank", "beam_width") if k in v and v[k] != unset.get(k)]
    return ", ".join(parts)


def _answering_line(cfg: dict, v: dict) -> str:
    if get_backend(v["backend"]).votes_members:
        return f"ensemble of {', '.join(v['members'])} ({(v.get('vote') or {}).get('mode', 'answer_priority')} vote)"
    model = f" {v.get('model') or cfg['llm'].get('model')}" if calls_llm(v["backend"]) else ""
    splits = f", splits {'+'.join(v['splits'])}" if v.get("splits") else ""
    unset = declared_defaults(
        get_backend(v["backend"]).spec
    )  # the prompt is named always, the rest when not the default
    extra = f", prompt {v['prompt']}" if "prompt" in v else ""
    extra += "".join(f", {k} {v[k]}" for k in ("samples", "max_retries") if k in v and v[k] != unset.get(k))
    from pipeline.answer.vote import VoteSettings

    mode = (v.get("vote") or {}).get("mode")
    extra += f", {mode} vote" if mode and mode != declared_defaults(VoteSettings)["mode"] else ""
    return f"{v['backend']}{model} on {v['retrieval']}{splits}{extra}"


def _first_sentence(path: Path, limit: int = 120) -> str:
    """The first sentence of the file's leading comment block (its description)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = " ".join(lines)
    end = re.search(r"\.(\s|$)", text)
    text = text[: end.start() + 1] if end else text
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _flat(d: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in d.items():
        if isinstance(v, dict) and v:
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def distinguished(lines: dict[str, str], entries: dict[str, dict]) -> dict[str, str]:
    """``lines`` where two variants' lines read the same but their config entries differ: each such line
    gains the keys (dotted, with their values) in which its entry differs from the others of its kind."""
    groups: dict[str, list[str]] = {}
    for name, text in lines.items():
        groups.setdefault(text, []).append(name)
    out = dict(lines)
    for names in (g for g in groups.values() if len(g) > 1):
        flat = {n: _flat(entries[n]) for n in names}
        keys = sorted({k for f in flat.values() for k in f if len({json.dumps(g.get(k)) for g in flat.values()}) > 1})
        for n in names:
            shown = [f"{k} {json.dumps(flat[n][k]) if k in flat[n] else '(unset)'}" for k in keys]
            out[n] = f"{lines[n]}; " + ", ".join(shown) if shown else lines[n]
    return out


def grid_entries(cfg: dict, presets_dir: Path) -> dict[str, dict[str, str]]:
    """``{section: {name: one-line description}}`` of a resolved config (and the shipped presets)."""
    bench = cfg.get("suite") or {}
    w = cfg["wattbot"]
    datasets = {"wattbot": f"{w['dir']}: splits {', '.join(w['splits'])}, scored on {w['score_split']}"}
    for name, subset in (bench.get("datasets") or {}).items():
        datasets[name] = f"retrieval suite, {json.dumps(subset) if subset else 'default subset'} ({bench['root']})"
    return {
        "datasets": datasets,
        "retrieval": distinguished({n: _retrieval_line(cfg, v) for n, v in cfg["retrieval"].items()}, cfg["retrieval"]),
        "answering": distinguished({n: _answering_line(cfg, v) for n, v in cfg["answering"].items()}, cfg["answering"]),
        "ablations": {
            n: f"{ab['stage']}: {' vs '.join(ab['variants'])}" + (f" ({ab['note']})" if ab.get("note") else "")
            for n, ab in cfg["report"]["ablations"].items()
        },
        "presets": {p.name: _first_sentence(p) for p in sorted(presets_dir.glob("config*.yaml"))},
    }


def cmd_list(a) -> None:
    cfg, _ = resolve(config_files(a), config_overrides(a.set))
    entries = grid_entries(cfg, Path(a.presets))
    for section in [a.section] if a.section else SECTIONS:
        rows = entries[section]
        print(f"{section} ({len(rows)}):")
        width = max((len(n) for n in rows), default=0) + 2
        print("\n".join(f"  {n.ljust(width)}{text}" for n, text in rows.items()))


def cmd_plugins(a) -> None:
    """Each registry that takes plugins (its entry-point group), its entries and where each comes from."""
    import pipeline.embed  # noqa: F401  (the encoder backends; register_builtins, the CLI's, registers the others)
    import pipeline.registry.suite_datasets  # noqa: F401
    from pipeline.registry.base import pluggable

    for reg in pluggable():
        names = reg.names()
        print(f"{reg.what} ({reg.group}, {len(names)}):")
        width = max((len(n) for n in names), default=0) + 2
        print("\n".join(f"  {n.ljust(width)}{reg.origin(n)}" for n in names))


def add_verbs(sub) -> None:
    s = verb(
        sub, "list", cmd_list, "the grid, one line each: datasets, retrieval and answering variants, ablations, presets"
    )
    s.add_argument(
        "section",
        nargs="?",
        choices=SECTIONS,
        metavar="SECTION",
        help=f"list only this one: {', '.join(SECTIONS)} (default: all)",
    )
    config_args(s)
    s.add_argument("--presets", default=".", help="the folder of the shipped config*.yaml files")

    s = verb(
        sub,
        "config",
        cmd_config,
        "print the resolved config (after overlays and defaults) as YAML, each value with the file it came from",
    )
    config_args(s)

    verb(
        sub,
        "plugins",
        cmd_plugins,
        "what a config may name (index kinds, answering backends, suite datasets, ...): each entry, built in or the"
        " plugin distribution that declares it",
    )
