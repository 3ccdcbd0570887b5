"""Context expansion: turn ranked matches into the snippets shown to the LLM.

Each match brings in a *group* of snippets, in this order:

1. the match itself (``via="match"``);
2. its ancestors, nearest first, up to ``parent_depth`` levels up (``via="parent"``; fewer
   when the tree is shallower) -- KohakuRAG's ``get_context(parent_depth, ...)``, whose
   competition output was "sentence + its paragraph";
3. up to ``sibling_depth`` siblings on each side of the group's *top* node (the highest
   expanded node: the match when ``parent_depth=0``), in document order (``via="sibling"``).
   Siblings of the match itself are never added when its parent is included, because the
   parent already contains them; with ``parent_depth>=1`` the window therefore widens the
   context by neighbouring paragraphs/sections instead (a no-op in KohakuRAG terms, which
   has no siblings: its default is ``sibling_depth=0``).

With ``dedup="tree"`` every group thus reduces to its top node (plus siblings), which is the
context KohakuRAG shows; ``dedup="none"`` reproduces the competition era, where a page could
appear several times. Pipeline: truncate matches (``top_k_final``) -> expand -> dedup ->
token budget. Nodes without a parent (flat-index chunks, documents) get no parents or siblings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipeline.specs import DEDUP_MODES, ContextSpec  # DEDUP_MODES: the config schema's list


@dataclass
class Snippet:
    node_id: str  # the node whose text goes into the context
    doc_id: str
    level: str
    text: str
    rank: int  # 1-based rank of the match that brought it in
    via: str  # "match" | "parent" | "sibling"
    source: str  # node_id of the match that brought it in


def _words(text: str) -> int:
    return len(text.split())


def _snippet(store, node_id: str, rank: int, via: str, source: str) -> Snippet:
    node = store.node(node_id)
    if node is None:
        raise KeyError(f"expand: node {node_id!r} is not in the index")
    return Snippet(node.node_id, node.doc_id, node.level, node.text, rank, via, source)


def siblings(store, node_id: str, parent: str | None, depth: int) -> list[str]:
    """Up to ``depth`` siblings on each side of ``node_id`` (same parent; rowid = document order)."""
    if depth <= 0 or parent is None:
        return []
    ids = [r[0] for r in store.db.execute("SELECT node_id FROM nodes WHERE parent = ? ORDER BY rowid", (parent,))]
    i = ids.index(node_id)
    return ids[max(0, i - depth) : i] + ids[i + 1 : i + 1 + depth]


def expand_match(store, node_id: str, rank: int, parent_depth: int = 1, sibling_depth: int = 0) -> list[Snippet]:
    """The snippet group of one match (see the module docstring for order and rules)."""
    match = _snippet(store, node_id, rank, "match", node_id)
    group, top = [match], store.node(node_id)
    for _ in range(parent_depth):
        if top.parent is None:
            break
        top = store.node(top.parent)
        group.append(Snippet(top.node_id, top.doc_id, top.level, top.text, rank, "parent", node_id))
    group += [
        _snippet(store, s, rank, "sibling", node_id) for s in siblings(store, top.node_id, top.parent, sibling_depth)
    ]
    return group


def dedup_snippets(snippets: list[Snippet], mode: str = "tree") -> list[Snippet]:
    """``none``: keep all; ``node_id``: first occurrence of each id; ``tree`` (KohakuRAG):
    drop snippets with an ancestor anywhere in the list (id prefix + ":"), wherever it is --
    a later ancestor also removes an earlier descendant -- then drop repeated ids."""
    if mode not in DEDUP_MODES:
        raise ValueError(f"expand: unknown dedup mode {mode!r} (expected one of {DEDUP_MODES})")
    if mode == "none":
        return list(snippets)
    if mode == "tree":
        ids = {s.node_id for s in snippets}

        def covered(node_id: str) -> bool:
            parts = node_id.split(":")
            return any(":".join(parts[:i]) in ids for i in range(1, len(parts)))

        snippets = [s for s in snippets if not covered(s.node_id)]
    seen: set[str] = set()
    out = []
    for s in snippets:
        if s.node_id not in seen:
            seen.add(s.node_id)
            out.append(s)
    return out


def fit_budget(
    snippets: list[Snippet], budget: int | None, count_tokens: Callable[[str], int] = _words
) -> tuple[list[Snippet], int]:
    """The longest prefix whose token total stays <= ``budget``, and how many were dropped.

    A prefix (not a knapsack) keeps rank order intact; the first snippet always stays, even
    over budget, so the context is never empty.
    """
    if budget is None:
        return list(snippets), 0
    kept: list = []
    used = 0
    for s in snippets:
        used += count_tokens(s.text)
        if kept and used > budget:
            break
        kept.append(s)
    return kept, len(snippets) - len(kept)


def expand_context(
    store, matches: list[str], context: ContextSpec, count_tokens: Callable[[str], int] = _words
) -> list[Snippet]:
    """Snippets for ``matches`` (node ids, best first) from an :class:`IndexReader` ``store``, as
    ``context`` says (its ``parent_depth`` resolved: the variant's, else its index kind's).

    Returns the kept snippets only; to report how many the budget dropped, pass a context without a
    ``token_budget`` and the result to :func:`fit_budget`.
    """
    if context.parent_depth is None:
        raise ValueError("expand: parent_depth is not resolved (the variant's, else its index kind's)")
    if context.dedup not in DEDUP_MODES:
        raise ValueError(f"expand: unknown dedup mode {context.dedup!r} (expected one of {DEDUP_MODES})")
    if context.top_k_final is not None:
        matches = matches[: context.top_k_final]
    snippets = [
        s
        for rank, node_id in enumerate(matches, start=1)
        for s in expand_match(store, node_id, rank, context.parent_depth, context.sibling_depth)
    ]
    return fit_budget(dedup_snippets(snippets, context.dedup), context.token_budget, count_tokens)[0]
