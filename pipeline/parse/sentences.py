"""Sentence splitting for scientific text, offline.

nupunkt (a fast Punkt implementation) does the splitting, but its bundled model was
trained on legal text and lists thousands of junk "abbreviations" (``coal``, ``century``,
``bank``, the single letter ``e``...), so a sentence ending in one of those words never
ends. We therefore keep only the model's dotted abbreviations (``e.g``, ``u.s``) and add
our own list of scientific ones, then run a small safety net over Punkt's output:

* merge a split after an abbreviation that never ends a sentence (``Fig.``, ``et al.``), or
  one that takes a number when a number follows (``Art. 3``, ``No. 5``);
* merge a piece that starts in lower case or with closing punctuation (Punkt split too eagerly),
  and a bare caption label ("Fig. 1.") with its caption;
* force a split before bullet glyphs (``●``, ``•``), which always start a new item, and
  after a lone lower-case letter with a period before a capital (``tCO 2 e. The``): initials
  are upper case, so Punkt's initial rule should not apply;
* cut sentences longer than ``max_chars`` (flattened tables, reference lists) at soft
  breaks such as original line ends, so no leaf becomes a page-long blob.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache

import nupunkt

# Lower-case, without the final period. Dotted forms (e.g, i.e) are matched as written.
ABBREVIATIONS = frozenset(
    """
    fig figs eq eqs tab tbl sec secs sect ch chap app appx al etc vs cf approx no nos vol vols
    pp resp ref refs est incl dept univ inc corp ltd co jr sr dr mr mrs ms prof st jan feb mar
    apr jun jul aug sep sept oct nov dec viz ed eds eq e.g i.e u.s u.k ph.d w.r.t a.k.a n.b
    p ca avg govt intl natl assoc conf proc trans int rev thm def lem prop alg
    """.split()
)
# Abbreviations after which a sentence essentially never ends, whatever follows.
NEVER_FINAL = frozenset(
    "fig figs eq eqs tab tbl sec secs sect ch chap app appx al vs cf approx e.g i.e viz w.r.t".split()
)
# Abbreviations that take a number ("Art. 3(1)", "No. 5", "p. 12"): never final before a digit.
BEFORE_NUMBER = NEVER_FINAL | frozenset("art no nos vol vols ref refs p pp ch figure table section equation".split())
BULLETS = "●•▪◦■♦➢►"
MAX_CHARS = 600

_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
_STARTS_CONTINUATION = re.compile(r"^[a-z,;:)\]]")
_CAPTION_LABEL = re.compile(r"^(?:Fig(?:ure)?|Table|Tab)\.?\s*\d+[.:]$", re.I)
_FORCED = re.compile(rf"\s(?=[{BULLETS}])|(?<=\s[a-z]\.)\s+(?=[A-Z])")


@lru_cache(maxsize=1)
def _tokenizer() -> nupunkt.PunktSentenceTokenizer:
    """The default nupunkt model with its abbreviation list cleaned (see module docstring)."""
    tok = nupunkt.load_default_model()
    params = tok._params  # nupunkt exposes no public setter for the whole set
    kept = {a for a in params.abbrev_types if "." in a and a.replace(".", "").isalpha()}
    params.abbrev_types.clear()
    params.abbrev_types.update(kept | ABBREVIATIONS)
    params.freeze_sets()
    params.invalidate_patterns()
    tok.clear_decision_cache()
    return tok


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _glued(prev: str, nxt: str) -> bool:
    """True when Punkt's boundary between ``prev`` and ``nxt`` is wrong."""
    if _STARTS_CONTINUATION.match(nxt) or _CAPTION_LABEL.match(prev):
        return True
    m = _LAST_WORD.search(prev)
    word = m.group(1).lower() if m else ""
    return word in NEVER_FINAL or (word in BEFORE_NUMBER and nxt[:1].isdigit())


def _cut_long(text: str, start: int, end: int, soft_breaks: Sequence[int], max_chars: int) -> list[tuple[int, int]]:
    """Greedily cut ``text[start:end]`` at soft breaks (else at spaces) into pieces <= max_chars."""
    out: list[tuple[int, int]] = []
    while end - start > max_chars:
        limit = start + max_chars
        i = bisect_right(soft_breaks, limit) - 1
        cut = soft_breaks[i] if i >= 0 and soft_breaks[i] > start + max_chars // 4 else -1
        if cut < 0:
            cut = text.rfind(" ", start + max_chars // 4, limit)
        if cut <= start:
            cut = limit
        out.append(_trim(text, start, cut))
        start, _ = _trim(text, cut, end)
    out.append((start, end))
    return [s for s in out if s[1] > s[0]]


def split_sentences(text: str, *, soft_breaks: Sequence[int] = (), max_chars: int = MAX_CHARS) -> list[tuple[int, int]]:
    """Return ``(start, end)`` spans of the sentences of ``text``: ordered, disjoint, trimmed.

    ``soft_breaks`` are offsets (e.g. original line ends) where an over-long sentence may be cut.
    """
    spans: list[tuple[int, int]] = []
    for a, b in _tokenizer().span_tokenize(text):
        # Bullets start a new sentence even when the previous item has no final period.
        cuts = [a] + [m.end() for m in _FORCED.finditer(text, a, b)] + [b]
        for s, e in zip(cuts, cuts[1:]):
            s, e = _trim(text, s, e)
            if e > s:
                spans.append((s, e))
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and text[s] not in BULLETS:
            ps, pe = merged[-1]
            if _glued(text[ps:pe], text[s:e]):
                merged[-1] = (ps, e)
                continue
        merged.append((s, e))
    breaks = sorted(soft_breaks)
    out: list[tuple[int, int]] = []
    for s, e in merged:
        out.extend(_cut_long(text, s, e, breaks, max_chars) if e - s > max_chars else [(s, e)])
    return out


def sentence_texts(text: str, **kwargs) -> list[str]:
    """The sentences of ``text`` as strings (see :func:`split_sentences`)."""
    return [text[s:e] for s, e in split_sentences(text, **kwargs)]
