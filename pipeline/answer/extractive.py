"""Offline default answerer: rule-based extraction from the retrieved context.

Why it exists: the main job must run with no LLM server. Given a question, its `answer_unit` and the
retrieval hits, it scores candidate sentences (hit texts plus their neighbours in the hit's context)
by how much of the question they cover, plus small priors for hit rank and document share, then
- numeric units: takes the number next to the unit in a well-covering sentence, preferring numbers
  whose surrounding words match the question (numbers already in the question, years, citation
  markers and "Table 3"-style labels are never answers);
- True/False questions: "1" unless the evidence states other numbers, disagrees in negation, or
  lacks an absolute word ("always") the statement uses;
- unit "is_blank" questions: an option listed in the question, a defined term, or a name-like span;
- abstains (`is_blank`, no refs) when no sentence covers `min_support` of the question or nothing
  extractable is found.
It cites the document of the sentence it used. Weights were set on the 41 train questions with a
BM25 dev retriever, as round values; they are not fitted to the test set.

The ``extractive`` answering backend is this module: its keys (:class:`ExtractiveSpec`), its answer
function (:func:`answer_extractive`) and its registration, the last line.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Self

from tqdm import tqdm

from pipeline.answer.numbers import Mention, find_numbers, fmt, is_year, keep_scale_for, unit_key, unit_score
from pipeline.answer.record import Answer, blank_answer
from pipeline.config_schema import ConfigTable, key, parse_spec
from pipeline.parse.sentences import sentence_texts
from pipeline.registry.answer_backends import AnswerBackend, VariantSpec, register

if TYPE_CHECKING:
    import pandas as pd

    from pipeline.answer.run import AnswerJob

BLANK = "is_blank"
RANK_W, DOC_W = 0.15, 0.15  # weights of the rank prior and the document-share prior


@dataclass(frozen=True)
class ExtractorSettings:
    """``answering.<name>.extractive``: the extractor's knobs (their declared defaults where a variant says
    nothing, written into it by validation)."""

    max_hits: int = key("hits read, in rank order", type="integer", default=15, schema={"minimum": 1})
    context_window: int = key(
        "neighbouring sentences of a hit (in its context) also read", type="integer", default=2, schema={"minimum": 0}
    )
    min_support: float = key(
        "abstain when the best sentence covers less of the question", type="number", default=0.2, schema={"minimum": 0}
    )

    @classmethod
    def parse(cls, values: ConfigTable | None, where: str) -> ExtractorSettings:
        return parse_spec(cls, values or {}, where)


@dataclass(frozen=True, kw_only=True)
class ExtractiveSpec(VariantSpec):
    """``backend: extractive``: rule-based, offline."""

    extractive: ExtractorSettings = key(
        "the extractor's knobs (pipeline/answer/extractive.py)",
        spec=ExtractorSettings,
        default={},
        field_factory=lambda: ExtractorSettings.parse(None, "extractive"),
    )

    @classmethod
    def from_dict(cls, name: str, v: ConfigTable) -> Self:
        spec = super().from_dict(name, {k: x for k, x in v.items() if k != "extractive"})
        knobs = ExtractorSettings.parse(v.get("extractive"), f"answering.{name}.extractive")
        return dataclasses.replace(spec, extractive=knobs)


DEFAULT = ExtractorSettings.parse(None, "extractive")  # the declared defaults (a test's call without a config)


# --------------------------------------------------------------------------------------- terms

_STOP = set(
    """
a an the of in on for to and or is are was were be been being by with as at from that this these those
which what who whom whose how many much does do did it its their there than into per about over under
between when where why can could would should will may might has have had not no if so such also only
true false according paper study recent recently reported report reports estimated estimate estimates
approximately approximate roughly around total value name term called known describe described use used
using given based following one two authors author et al s
""".split()
)

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-_/']*[A-Za-z0-9]|[A-Za-z0-9]")
_NUMTOK = re.compile(r"(?<![A-Za-z\d.,])(?<![A-Za-z]-)\d[\d,]*(?:\.\d+)?")  # not "CO2", "A100", "GPT-3"
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


def _stem(w: str) -> str:
    """Crude stem: a 5-letter prefix makes "consumption/consumed", "efficiency/efficient" meet."""
    w = w.lower().strip(".'")
    return w[:5] if len(w) >= 5 else w


def _compact(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _is_entity(tok: str) -> bool:
    """Model/hardware/acronym tokens ("GShard-600B", "A100", "LLaMA", "WUE") matter more."""
    has_digit = any(c.isdigit() for c in tok)
    has_alpha = any(c.isalpha() for c in tok)
    return (has_digit and has_alpha) or any(c.isupper() for c in tok[1:])


@dataclass
class QTerms:
    """Weighted question terms: plain words by stem, entity tokens as compact strings, numbers."""

    words: dict[str, float] = field(default_factory=dict)
    entities: dict[str, float] = field(default_factory=dict)
    numbers: set[str] = field(default_factory=set)
    parts: set[str] = field(default_factory=set)  # pieces of entities: "LLaMA-7B" -> "llama", "7b"

    @property
    def total(self) -> float:
        return sum(self.words.values()) + sum(self.entities.values()) + 1.5 * len(self.numbers)


def question_terms(question: str) -> QTerms:
    qt = QTerms()
    for n in _NUMTOK.findall(question):
        qt.numbers.add(n.replace(",", "").rstrip("."))
    for tok in _WORD.findall(question):
        if tok.replace(",", "").replace(".", "").isdigit():
            continue
        if _is_entity(tok):
            qt.entities[_compact(tok)] = 2.0
            qt.parts.update(_compact(p) for p in re.split(r"[-_/]", tok) if len(p) > 1)
            continue
        for part in re.split(r"[-/]", tok):  # "platform-level" -> "platform", "level"
            if part.lower() not in _STOP and len(part) > 1:
                qt.words[_stem(part)] = 1.5 if part.isupper() else 1.0
    return qt


def coverage(qt: QTerms, text: str) -> float:
    """Share of the question's term weight present in `text` (0..1)."""
    if qt.total == 0:
        return 0.0
    stems = {_stem(p) for t in _WORD.findall(text) for p in [t, *re.split(r"[-/]", t)]}
    comp = _compact(text)
    nums = {n.replace(",", "").rstrip(".") for n in _NUMTOK.findall(text)}
    got = sum(w for s, w in qt.words.items() if s in stems)
    got += sum(w for e, w in qt.entities.items() if e in comp)
    got += 1.5 * len(qt.numbers & nums)
    return got / qt.total


# ---------------------------------------------------------------------------------- candidates


_LIGATURES = str.maketrans({"ﬁ": "fi", "ﬂ": "fl", "ﬀ": "ff", "ﬃ": "ffi", "ﬄ": "ffl"})


def clean(text: str) -> str:
    """Undo PDF artefacts that break term matching: ligatures, line-end hyphenation, spacing."""
    text = (text or "").translate(_LIGATURES)
    text = re.sub(r"(?<=[a-z])- (?=[a-z])", "", text)
    return re.sub(r"\s+", " ", text).strip()


def split_sentences(text: str) -> list[str]:
    """The documents' sentence splitter (abbreviations, decimals and citations stay inside sentences)."""
    return [s for s in sentence_texts(clean(text)) if len(s) > 2]


_BIBLIO = re.compile(
    r"arXiv:\s?\d|arXiv preprint|In Proceedings|Proceedings of|https?://|doi\.org|\bpp\. \d"
    r"|\bvol\. \d",
    re.I,
)


@dataclass
class Candidate:
    text: str
    doc_id: str
    rank: int  # rank of the hit it came from (0 = best)
    from_hit: bool  # the matched node's own text, not a neighbour from its context
    support: float = 0.0
    score: float = 0.0


def build_candidates(hits: list[dict], window: int) -> list[Candidate]:
    """Sentences of each hit's text, plus up to `window` neighbours on each side inside its
    context (answers often sit one sentence away from the best-matching one). Deduplicated,
    keeping the best rank."""
    seen: dict[str, Candidate] = {}

    def add(text: str, doc: str, rank: int, from_hit: bool) -> None:
        key = _compact(text)
        if _BIBLIO.search(text):  # reference-list entries carry years, pages and arXiv ids, not answers
            return
        if key and (key not in seen or (rank, not from_hit) < (seen[key].rank, not seen[key].from_hit)):
            seen[key] = Candidate(text, doc, rank, from_hit)

    for rank, h in enumerate(hits):
        doc = h.get("doc_id", "")
        own = split_sentences(h.get("text", ""))
        ctx = split_sentences(h.get("context", "")) if h.get("context") else []
        for s in own:
            add(s, doc, rank, True)
        if ctx and own and len(ctx) > len(own):
            keys = [_compact(s) for s in ctx]
            idx = [i for i, k in enumerate(keys) if any(_compact(o)[:60] in k or k in _compact(o) for o in own)]
            for i in idx:
                for j in range(max(0, i - window), min(len(ctx), i + window + 1)):
                    add(ctx[j], doc, rank, False)
    return list(seen.values())


def doc_mass(hits: list[dict]) -> dict[str, float]:
    """How much of the ranked list each document holds (rank-discounted, max = 1): retrieval that
    keeps returning one document is evidence that the answer lives there."""
    mass: dict[str, float] = {}
    for rank, h in enumerate(hits):
        mass[h.get("doc_id", "")] = mass.get(h.get("doc_id", ""), 0.0) + 1.0 / math.sqrt(rank + 1)
    top = max(mass.values(), default=1.0)
    return {d: v / top for d, v in mass.items()}


def score_candidates(cands: list[Candidate], qt: QTerms, hits: list[dict]) -> None:
    """score = term coverage + small priors for the hit's rank, for being the matched node, and
    for the document's share of the hits."""
    n = max(len(hits), 1)
    mass = doc_mass(hits)
    for c in cands:
        c.support = coverage(qt, c.text)
        c.score = (
            c.support + RANK_W * (1 - c.rank / n) + (0.05 if c.from_hit else 0.0) + DOC_W * mass.get(c.doc_id, 0.0)
        )


# ---------------------------------------------------------------------------------- answering


def answer_question(question: str, answer_unit: str, hits: list[dict], knobs: ExtractorSettings = DEFAULT) -> Answer:
    """Answer one question from its retrieval hits (rank order), or abstain."""
    hits = list(hits)[: knobs.max_hits]
    qt = question_terms(_strip_tf(question))
    cands = build_candidates(hits, knobs.context_window)
    score_candidates(cands, qt, hits)
    cands.sort(key=lambda c: -c.score)
    if not cands or cands[0].support < knobs.min_support:
        best = f"{cands[0].support:.2f}" if cands else "none"
        return _abstain(
            f"No retrieved sentence covers enough of the question (best coverage {best} < {knobs.min_support})."
        )
    if _is_tf(question):
        return _answer_tf(question, qt, cands)
    if unit_key(answer_unit) in ("", BLANK):
        return _answer_text(question, qt, cands)
    return _answer_number(question, answer_unit, qt, cands)


def _abstain(why: str) -> Answer:
    return blank_answer(why)


def _is_tf(question: str) -> bool:
    return question.strip().lower().startswith("true or false")


def _strip_tf(question: str) -> str:
    return re.sub(r"^\s*true\s+or\s+false\s*[:?.-]?\s*", "", question, flags=re.I)


def _quote(c: Candidate) -> str:
    return c.text if len(c.text) <= 400 else c.text[:397] + "..."


# --- numbers

_LABEL_LEFT = re.compile(
    r"(?:table|tab\.|figure|fig\.|section|sec\.|eq\.|equation|appendix|chapter|page|§|step)"
    r"\s?$",
    re.I,
)
_YEAR_UNITS = ("year", "years", "yr")


def _number_score(c: Candidate, m: Mention, unit: str, qt: QTerms, prev_end: int = 0) -> float | None:
    """Score one number in one sentence, or None when it cannot be the answer."""
    if _LABEL_LEFT.search(c.text[max(0, m.start - 12) : m.start]):
        return None
    if is_year(m) and unit_key(unit) not in _YEAR_UNITS:
        return None
    raw = m.raw.lstrip("$US").split()[0].replace(",", "").rstrip("kKMBT")
    if raw in qt.numbers or fmt(m.value) in qt.numbers:
        return None
    u = unit_score(c.text, m, unit)
    return c.score + 0.5 * u + 0.3 * _local(c.text, m, qt, prev_end) + _year_fit(c.text, m, qt)


def _year_fit(text: str, m: Mention, qt: QTerms) -> float:
    """When the question names a year, prefer the number stated for that year ("0.18 L/kWh in
    2023 from 0.19 L/kWh in 2022"): look at the first year after the number, before the next one."""
    asked = {y for y in qt.numbers if _YEAR.fullmatch(y)}
    if not asked:
        return 0.0
    nxt = re.search(r"\d[\d,.]*", text[m.end : m.end + 60])
    if not nxt or not _YEAR.fullmatch(nxt.group(0).rstrip(".,")):
        return 0.0
    return 0.1 if nxt.group(0).rstrip(".,") in asked else -0.3


def _local(text: str, m: Mention, qt: QTerms, prev_end: int = 0) -> float:
    """Question-term coverage of the words just around the number: picks the right number when a
    sentence (or a flattened table row, "LLaMA-33B 64.7 GB 60 6656") holds several."""
    window = text[max(0, m.start - 80) : m.end + 30]
    parts = _compact(window)
    bonus = 0.5 if any(p in parts for p in qt.parts if not p.isdigit()) else 0.0
    near = _compact(text[max(0, m.start - 25) : m.end + 15])
    bonus += 0.5 if any(p in near for p in qt.parts) else 0.0
    wide = min(1.0, coverage(qt, window) + 0.5 * bonus)
    # The clause since the previous number usually names what this number measures
    # ("GPT-4 at $40M and Google's Gemini Ultra at $30M").
    clause = text[max(prev_end, m.start - 80) : m.start]
    return 0.5 * wide + 0.5 * min(1.0, 3 * coverage(qt, clause))


def _answer_number(question: str, unit: str, qt: QTerms, cands: list[Candidate]) -> Answer:
    keep = keep_scale_for(unit)
    scored: list[tuple[float, Candidate, Mention, float]] = []
    for c in cands:
        prev_end = 0
        for m in find_numbers(c.text, keep):
            s = _number_score(c, m, unit, qt, prev_end)
            prev_end = m.end
            if s is not None:
                scored.append((s, c, m, unit_score(c.text, m, unit)))
    if not scored:
        return _abstain("No usable number was found in the retrieved sentences.")
    # Agreement: the same value (with its unit) in several sentences adds a little confidence.
    votes: dict[str, set[str]] = {}
    for _s, c, m, u in scored:
        if u > 0:
            votes.setdefault(fmt(m.value), set()).add(_compact(c.text))
    best = max(
        scored,
        key=lambda t: (
            t[0] + 0.1 * min(len(votes.get(fmt(t[2].value), ())) - 1, 3) if votes.get(fmt(t[2].value)) else t[0]
        ),
    )
    s, c, m, u = best
    value = _range_or_scalar(question, m)
    shown = f"{fmt(m.value)}–{fmt(m.hi)}" if m.hi is not None else fmt(m.value)
    unit_note = "with the unit next to it" if u > 0 else "without the unit next to it"
    return Answer(
        answer=f"{shown} {unit}".strip(),
        answer_value=value,
        ref_id=[c.doc_id],
        explanation=f"Took '{m.raw}' {unit_note} from the {c.doc_id} sentence covering "
        f"{c.support:.0%} of the question terms.",
        supporting_materials=_quote(c),
        is_blank=False,
    )


def _range_or_scalar(question: str, m: Mention) -> str:
    """A range in the text is answered "[lo,hi]" when the question asks for a range; otherwise a
    scalar (the scorer accepts a scalar inside a gold range, but a range never equals a scalar):
    the upper end for "maximum/up to" questions, else the lower end."""
    if m.hi is None:
        return fmt(m.value)
    q = question.lower()
    if re.search(r"\brange\b|\bbetween\b|\bfrom\b.*\bto\b", q):
        return f"[{fmt(m.value)},{fmt(m.hi)}]"
    if re.search(r"\b(max(imum)?|up to|at most|highest|upper)\b", q):
        return fmt(m.hi)
    return fmt(m.value)


# --- True/False

_NEG = re.compile(
    r"\b(not|no|nor|never|neither|cannot|without|lack|lacks|lacking|lacked|fail|fails|failed|"
    r"rather than|instead of|leaves? out|\w+n't)\b",
    re.I,
)


_ABSOLUTE = re.compile(r"\b(always|fully|completely|entirely|guaranteed?|impossible|none)\b", re.I)


def _answer_tf(question: str, qt: QTerms, cands: list[Candidate]) -> Answer:
    """Default "1" (True is the more common label: 7 of 13 train T/F questions). Answer "0" when
    - the statement's numbers (non-years) are missing from the best evidence, which states other
      numbers ("200,000x" asked, "300,000x" written), or
    - statement and evidence disagree in negation ("did not mention", "is not accessible"), or
    - the statement uses an absolute word ("always", "fully") the evidence does not use."""
    stmt = _strip_tf(question)
    nums = {n for n in qt.numbers if not _YEAR.fullmatch(n)}
    c = cands[0]
    if nums:  # prefer, among the top three, a sentence that states the statement's numbers
        c = max(cands[:3], key=lambda x: (len(nums & _sentence_numbers(x.text)), x.score))
    reason = "agrees with"
    if (
        nums
        and not nums & _sentence_numbers(c.text)
        and _sentence_numbers(c.text) - {y for y in _sentence_numbers(c.text) if _YEAR.fullmatch(y)}
    ):
        reason = "states other numbers than"
    elif bool(_NEG.search(stmt)) != bool(_NEG.search(c.text)):
        reason = "disagrees in negation with"
    elif (a := _ABSOLUTE.search(stmt)) and not re.search(rf"\b{a.group(1)}\b", c.text, re.I):
        reason = f"says '{a.group(1)}' unlike"
    value = "1" if reason == "agrees with" else "0"
    return Answer(
        answer="True" if value == "1" else "False",
        answer_value=value,
        ref_id=[c.doc_id],
        explanation=f"The statement {reason} the best {c.doc_id} sentence ({c.support:.0%} term coverage).",
        supporting_materials=_quote(c),
        is_blank=False,
    )


def _sentence_numbers(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in _NUMTOK.findall(text)}


# --- short text answers (unit "is_blank", not True/False)

_CAP_STOP = set(
    """The A An In On Our We This These That Those It Its For As To However Moreover Thus Here
Table Figure Fig Section And Or Of By With From At When While Since Such Each All Both Most Many Some
Finally First Second Third Then Therefore Also Note Further Furthermore Although Because If Based
TABLE Tables Figures arXiv Proceedings Conference Abstract Introduction Conclusion""".split()
)
_NAME_TOK = r"(?:[A-Z][\w.\-+/]*|[a-z]+[A-Z][\w.\-+/]*|\w*\d\w*[A-Za-z]\w*)"
_NAME_RUN = re.compile(rf"{_NAME_TOK}(?:\s(?:of\s|for\s|the\s|and\s|on\s)?{_NAME_TOK})*")
_ASKS_TERM = re.compile(r"\b(term|called|defined|definition|known as|refer|concept|phenomenon|principle)\b", re.I)
_DEFINED = re.compile(
    r"(?:called|known as|termed|referred to as|dubbed|named|coined)\s[\"“']?"
    r"([A-Za-z][\w\-. ]{1,40}?)[\"”']?(?=[,.;:()]|\s(?:which|that|and|to|is|was)\b)"
    r"|^\W*([A-Z][\w\- ]{1,40}?)\s?(?::|\s(?:is defined as|refers to|is the term))"
)


def _answer_text(question: str, qt: QTerms, cands: list[Candidate]) -> Answer:
    """A short span: an option named in the question if it lists options, else a defined term
    ("known as X", "X: It is defined as"), else the first name-like run of capitalised tokens in
    the best sentences that is not already in the question."""
    options = _options(question)
    q_comp = _compact(question)
    for c in cands[:3]:
        span = ""
        if options:
            span = next((o for o in options if _compact(o) in _compact(c.text)), "")
        if not span and _ASKS_TERM.search(question):
            d = _DEFINED.search(c.text)
            if d:
                span = (d.group(1) or d.group(2) or "").strip()
        if not span:
            span = next((n for n in _names(c.text) if _compact(n) not in q_comp), "")
        if span:
            return Answer(
                span,
                span,
                [c.doc_id],
                f"Took the span '{span}' from the {c.doc_id} sentence covering {c.support:.0%} of the question terms.",
                _quote(c),
                False,
            )
    return _abstain("No name-like span was found in the best retrieved sentences.")


def _names(text: str) -> list[str]:
    """Runs of capitalised/alphanumeric tokens, split at function words ("Our", "The"). Dropped:
    a lone capitalised word starting the sentence (grammar), all-caps headings of 3+ words, author
    names ("Wu et al.", "Smith (2020)"), arXiv ids, and runs longer than six words."""
    out = []
    for r in _NAME_RUN.finditer(text):
        run: list[re.Match] = []
        for w in [*re.finditer(r"\S+", r.group(0)), None]:
            if w is not None and w.group(0).strip(".,;:") not in _CAP_STOP:
                run.append(w)
                continue
            if run:
                name = " ".join(x.group(0) for x in run).rstrip(".,;:")
                end = r.start() + run[-1].end()
                lone_first = len(run) == 1 and r.start() + run[0].start() == 0 and not _is_entity(name)
                heading = len(run) >= 3 and name.isupper()
                author = re.match(r"\s*(?:et al|\(\d{4}\)|,? \d{4})", text[end:]) is not None
                arxiv = re.fullmatch(r"[\d.]+v\d+", name) is not None
                if len(name) > 1 and len(run) <= 6 and not (lone_first or heading or author or arxiv):
                    out.append(name)
            run = []
    return out


def _options(question: str) -> list[str]:
    """ "...: Meena, T5, GPT-3, GShard-600B, or Switch Transformer?" -> the five options."""
    m = re.search(r"[:\-]\s*([^:?]+,[^:?]+\bor\b[^:?]+)\?*\s*$", question)
    if not m:
        return []
    parts = re.split(r",\s*(?:or\s+)?|\s+or\s+", m.group(1))
    return [p.strip(" .") for p in parts if p.strip(" .")]


# --------------------------------------------------------------------------------------- the backend


def answer_extractive(questions: pd.DataFrame, by_id: dict, spec: ExtractiveSpec, job: AnswerJob) -> list[dict]:
    """The ``extractive`` backend's answer function: one record per question, in question order."""
    return [
        {
            "id": q.id,
            "question": q.question,
            "answer_unit": q.answer_unit,
            **asdict(answer_question(q.question, q.answer_unit, by_id[q.id]["hits"], spec.extractive)),
        }
        for q in tqdm(list(questions.itertuples(index=False)), desc="answer (extractive)", disable=not job.progress)
    ]


EXTRACTIVE = register(AnswerBackend("extractive", answer_extractive, ExtractiveSpec, shows_context=False))
