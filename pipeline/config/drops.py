"""Dropping a named entry: ``answering: {llm-cf: null}`` in an overlay, or ``--set answering.llm-cf=null``,
removes that entry from the grid (issue #35), so a larger grid is trimmed without copying it.

What names a dropped entry must say so, never fail later on an unknown name nor vanish silently:

- another entry that needs it (a retrieval variant's ``index``, an answering variant's ``retrieval`` or
  ``members``, the ``default_variant``, a corpus's ``variants``, an index's ``embedding``) is a one-line
  :class:`ConfigError` naming both;
- a list that only chooses what to compare or run (an ablation of ``report.ablations``, the suite's
  ``suite.retrieval``, ``sprout.beam_sweep``) goes on without it: the ablation is left out, the name
  taken out of the list, each with a one-line notice (:func:`drop_notices`); a claim of
  pipeline/report/claims/claims.yaml that needs it reads "not run: variant X dropped by the config".

The resolved config records what was dropped under :data:`DROPPED` (only when something was: a config
without a null entry resolves, and hashes, as before); the figures rule's params carry it to the claims.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.config_schema import ConfigError, ConfigTree, declared_defaults
from pipeline.report_specs import AblationSpec

# The named tables whose entries a null drops (dotted paths into the config).
DROPPABLE = (
    "indexes",
    "retrieval",
    "answering",
    "embedding_models",
    "corpora",
    "suite.datasets",
    "report.ablations",
)
# Key of the resolved config listing the dropped entries, table -> names, and under "left_out" what was
# taken out because it named one (:func:`_trim_lists`). Not a schema key: a config file cannot set it.
STAGE = declared_defaults(AblationSpec)["stage"]  # an ablation's stage when it names none
DROPPED = "dropped"
LEFT_OUT = "left_out"


def drop_entries(cfg: ConfigTree) -> dict:
    """Remove every null entry of the :data:`DROPPABLE` tables of ``cfg`` (in place), check and trim what
    names one; the record :func:`pipeline.config.validate.validate` keeps under :data:`DROPPED` (empty when
    nothing was dropped: the config is left as it was)."""
    dropped: dict[str, list[str]] = {}
    for path in DROPPABLE:
        table = _table(cfg, path)
        gone = sorted(name for name, entry in table.items() if entry is None)
        for name in gone:
            del table[name]
        if gone:
            dropped[path] = gone
    if not dropped:
        return {}
    _check_dependents(cfg, dropped)
    left_out = _trim_lists(cfg, dropped)
    return dropped | ({LEFT_OUT: left_out} if left_out else {})


def _table(cfg: ConfigTree, path: str) -> dict:
    here: object = cfg
    for part in path.split("."):
        here = here.get(part) if isinstance(here, dict) else None
    return here if isinstance(here, dict) else {}


def _gone(dropped: dict[str, list[str]], table: str, name: object) -> bool:
    return isinstance(name, str) and name in dropped.get(table, [])


def _needs(key: str, table: str, name: str) -> ConfigError:
    return ConfigError.at(
        key, f"needs {table}.{name}, which the config drops ({table}.{name}: null); drop this entry too, or keep it"
    )


def _entries(cfg: ConfigTree, table: str) -> list[tuple[str, dict]]:
    """``(name, entry)`` of a table's mapping entries (a malformed one is the schema's to report)."""
    return [(n, e) for n, e in (cfg.get(table) or {}).items() if isinstance(e, dict)]


def _check_dependents(cfg: ConfigTree, dropped: dict[str, list[str]]) -> None:
    """An entry that needs a dropped one: a one-line error naming both (the first in the config's order)."""
    for key, table, name in _references(cfg):
        if _gone(dropped, table, name):
            raise _needs(key, table, str(name))


def _references(cfg: ConfigTree) -> Iterator[tuple[str, str, object]]:
    """``(dotted key, table, name)`` of every entry that needs another entry of a named table."""
    for name, idx in _entries(cfg, "indexes"):
        yield f"indexes.{name}.embedding", "embedding_models", idx.get("embedding")
    for name, variant in _entries(cfg, "retrieval"):
        yield f"retrieval.{name}.index", "indexes", variant.get("index")
        if isinstance(variant.get("hybrid"), dict):
            yield f"retrieval.{name}.hybrid.index", "indexes", variant["hybrid"].get("index")
    for name, variant in _entries(cfg, "answering"):
        yield f"answering.{name}.retrieval", "retrieval", variant.get("retrieval")
        yield from ((f"answering.{name}.members", "answering", m) for m in _names(variant.get("members")))
    yield "default_variant", "answering", cfg.get("default_variant")
    for name, corpus in _entries(cfg, "corpora"):
        yield from ((f"corpora.{name}.variants", "answering", v) for v in _names(corpus.get("variants")))
    if isinstance(cfg.get("report"), dict):
        yield "report.embedding_index", "indexes", cfg["report"].get("embedding_index")


def _names(value: object) -> list:
    return value if isinstance(value, list) else []


def _trim_lists(cfg: ConfigTree, dropped: dict[str, list[str]]) -> dict[str, list[str]]:
    """The ablations that compare a dropped variant, left out; dropped names taken out of the suite's and
    the beam sweep's lists. Returns what was left out and why: ``report.ablations.<name>`` -> the dropped
    variants it compared, ``suite.retrieval`` / ``sprout.beam_sweep`` -> the names taken out."""
    left_out: dict[str, list[str]] = {}
    ablations = _table(cfg, "report.ablations")
    for name, ab in list(ablations.items()):
        if not isinstance(ab, dict):
            continue
        stage = ab.get("stage", STAGE)  # before validation: the declared default not yet written in
        gone = [v for v in ab.get("variants") or [] if _gone(dropped, stage, v)]
        if gone:
            del ablations[name]
            left_out[f"report.ablations.{name}"] = gone
    for path in ("suite.retrieval", "sprout.beam_sweep"):
        table, key = path.split(".")
        holder = cfg.get(table)
        if isinstance(holder, dict) and isinstance(holder.get(key), list):
            gone = [v for v in holder[key] if _gone(dropped, "retrieval", v)]
            holder[key] = [v for v in holder[key] if v not in gone]
            if gone:
                left_out[path] = gone
    return left_out


def drop_notices(cfg: ConfigTree) -> list[str]:
    """One line per thing a dropped entry took out of the run (``cfg``: the resolved config)."""
    lines = []
    for path, gone in ((cfg.get(DROPPED) or {}).get(LEFT_OUT) or {}).items():
        what = "variant" + ("s" if len(gone) > 1 else "")
        if path.startswith("report.ablations."):
            lines.append(f"notice: ablation {path} left out: {what} {', '.join(gone)} dropped by the config")
        else:
            lines.append(f"notice: {path} runs without {', '.join(gone)}: dropped by the config")
    return lines
