"""Query planning: one question becomes up to n retrieval queries, the question itself first.

A single embedded question often misses the passage that holds the answer: the documents write
"PUE" where the question writes "power usage effectiveness", or buries the entity in a long
sentence. KohakuRAG asks the answering LLM for extra queries (:class:`LLMPlanner`, its prompt
and fallback, see ../shared/docs/kohakurag.md §5). :class:`OfflinePlanner` is the deterministic,
LLM-free counterpart: acronym expansion with acronyms mined from the documents themselves, a
keyword/entity query and a unit-aware query. Each is a planner kind (pipeline.registry.retrieval_modes.PLANNERS),
registered at the end of this module with ``none`` (the question only).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from functools import cache

from pipeline.index_structures.bm25 import STOPWORDS, stem
from pipeline.llm.cache import LLMRequest, LLMResult  # not the gateway: a retrieve job without an LLM never loads it
from pipeline.llm.pool import FatalLLMError, map_calls
from pipeline.llm.replies import json_values
from pipeline.registry.retrieval_modes import PLANNERS, PlannerKind
from pipeline.specs import PlannerSpec

# words an acronym may skip ("mixture of experts" -> MoE may use or skip "of")
SMALL_WORDS = frozenset("a an and as at by for from in of on or per the to with".split())
# "(PUE)", "(LLMs)", "(MoE)": letters only, at least two capitals, an optional plural "s"
ACRONYM = r"[A-Z][A-Za-z]{1,9}"
LONG_THEN_SHORT = re.compile(rf"\(\s*({ACRONYM})\s*\)")
SHORT_THEN_LONG = re.compile(rf"\b({ACRONYM})\s*\(\s*([A-Za-z][A-Za-z \-]{{2,80}}?)\s*\)")
CLAUSE_BREAK = re.compile(r"[,;:()\[\]\"“”]|\.\s")


def _acronym_letters(acr: str) -> tuple[str, bool] | None:
    """('llm', True) for "LLMs"; None when ``acr`` does not look like an acronym."""
    plural = acr.endswith("s") and not acr[:-1].islower() and sum(c.isupper() for c in acr[:-1]) >= 2
    core = acr[:-1] if plural else acr
    if sum(c.isupper() for c in core) < 2 or len(core) < 2:
        return None
    return core.lower(), plural


def _spells(letters: str, words: tuple[str, ...]) -> bool:
    """Whether ``words`` spell ``letters``: every word gives its initial, optionally followed by
    more of its letters in order ("greenhouse gas" -> g,h + g = GHG); a small word ("of",
    "and") other than the first may give nothing. Every letter is used, and at least two words
    (and half as many as letters) contribute, so one long word does not "spell" an acronym."""

    @cache
    def go(i: int, j: int, used: int) -> bool:
        if j == len(words):
            return i == len(letters) and used >= max(2, (len(letters) + 1) // 2)
        w = words[j]
        if j > 0 and w in SMALL_WORDS and go(i, j + 1, used):
            return True
        if i == len(letters) or w[0] != letters[i]:
            return False
        k, pos = i + 1, 1
        while True:
            if go(k, j + 1, used + 1):
                return True
            if k == len(letters) or (pos := w.find(letters[k], pos) + 1) == 0:
                return False
            k += 1

    return go(0, 0, 0)


def _parts(tokens: list[str]) -> tuple[str, ...] | None:
    """Hyphen-split, lower-cased words of ``tokens``; None if any is not purely alphabetic."""
    parts = tuple(p for t in tokens for p in t.lower().split("-") if p)
    return parts if parts and all(p.isalpha() for p in parts) else None


def _singular(long_form: str) -> str:
    """ "graphics processing units" -> "graphics processing unit"; "-ies" -> "-y"; forms that
    cannot be told apart safely ("gases", "processes", "status") are left as they are."""
    if long_form.endswith("ies"):
        return long_form[:-3] + "y"
    if re.search(r"(ss|us|is|[sxz]es|[cs]hes)$", long_form) or not long_form.endswith("s"):
        return long_form
    return long_form[:-1]


def mine_acronyms(texts: Iterable[str]) -> dict[str, str]:
    """Acronym -> long form from definitions in the documents, "power usage effectiveness (PUE)" or
    "PUE (power usage effectiveness)", keys and values lower-cased. The long form must spell the
    acronym (:func:`_spells`). Variants that stem alike ("large language models (LLMs)", "large
    language model (LLM)") count together, shown as written next to the singular acronym if it
    ever is, else made singular. The most frequent long form wins, ties go to the alphabetically
    first: the result depends only on the texts, not their order."""
    found: Counter[tuple[str, str, bool]] = Counter()  # (letters, long form as written, plural)
    for raw in texts:
        text = unicodedata.normalize("NFKC", raw)
        found.update(_long_then_short(text))
        found.update(_short_then_long(text))
    groups: dict[tuple[str, tuple[str, ...]], Counter[tuple[bool, str]]] = {}
    for (letters, long_form, plural), c in found.items():
        key = (letters, tuple(stem(w) for w in re.split(r"[\s\-]+", long_form)))
        groups.setdefault(key, Counter())[plural, long_form] += c
    best: dict[str, tuple[int, str]] = {}
    for (letters, _), forms in sorted(groups.items()):
        # shown as written next to the singular acronym if it ever is: "large language model"
        plural, shown = min(forms, key=lambda f: (f[0], -forms[f], f[1]))
        shown = _singular(shown) if plural else shown
        total = sum(forms.values())
        if letters not in best or total > best[letters][0]:
            best[letters] = (total, shown)
    return {acr: long_form for acr, (_, long_form) in sorted(best.items())}


def _long_then_short(text: str) -> list[tuple[str, str, bool]]:
    """(letters, long form, plural) of each "power usage effectiveness (PUE)" in ``text``."""
    out = []
    for m in LONG_THEN_SHORT.finditer(text):
        shape = _acronym_letters(m[1])
        if not shape:
            continue
        before = CLAUSE_BREAK.split(text[: m.start()])[-1].split()
        longest = None  # the longest that spells: "sustainability accounting standards board (SASB)"
        for size in range(1, min(len(shape[0]) + 5, 2 * len(shape[0]), len(before)) + 1):
            parts = _parts(before[-size:])
            if parts is None:
                break
            if _spells(shape[0], parts):
                longest = " ".join(before[-size:]).lower()
        if longest:
            out.append((shape[0], longest, shape[1]))
    return out


def _short_then_long(text: str) -> list[tuple[str, str, bool]]:
    """(letters, long form, plural) of each "PUE (power usage effectiveness)" in ``text``."""
    out = []
    for m in SHORT_THEN_LONG.finditer(text):
        shape = _acronym_letters(m[1])
        tokens = m[2].split()
        while tokens and tokens[0].lower() in SMALL_WORDS:  # "UNITAR (the United Nations ...)"
            tokens = tokens[1:]
        parts = _parts(tokens)
        if shape and parts and _spells(shape[0], parts):
            out.append((shape[0], " ".join(tokens).lower(), shape[1]))
    return out


def dedup(queries: Iterable[str], n: int) -> list[str]:
    """Unique up to case and spacing, non-empty, at most ``n``, order and text kept."""
    out: list[str] = []
    seen: set[str] = set()
    for q in queries:
        key = " ".join(str(q).split()).lower()
        if key and key not in seen:
            seen.add(key)
            out.append(str(q))
    return out[:n]


# --- offline planner ------------------------------------------------------------------------

SCAFFOLD = [
    re.compile(p, re.I)
    for p in (
        r"^\s*true\s+or\s+false\s*[:.\-]\s*",
        r"\baccording\s+to\s+[^,?]*,\s*",
    )
]
# a stand-alone word: not part of "GPU-based", "ML.ENERGY" or "L/kWh"
ACRONYM_IN_TEXT = re.compile(r"(?<![\w.\-/])[A-Za-z]+(?![\w/]|[.\-]\w)")
FILLER = STOPWORDS | frozenset(
    """
how many much what which name term following out given roughly approximately approximate reportedly
et al e.g i.e
""".split()
)
# entity-aware tokens: "GShard-600B", "6.1B-parameter", "L/kWh", "5,842", "CO₂", "100%"
ENTITY = re.compile(r"[A-Za-z0-9₀-₉](?:[\w.%/₀-₉+'’\-]|,(?=\d))*")
UNIT_WORDS = {  # the unit as the documents write it, plus what it measures
    "tco2e": "tCO2e CO2 emissions",
    "co2e": "CO2e emissions",
    "co2eq": "CO2eq CO2 emissions",
    "mwh": "MWh megawatt-hours energy",
    "kwh": "kWh kilowatt-hours energy",
    "wh": "Wh watt-hours energy",
    "gwh": "GWh gigawatt-hours energy",
    "twh": "TWh terawatt-hours electricity",
    "w": "W watts power",
    "watts": "watts W power",
    "kw": "kW kilowatts power",
    "mw": "MW megawatts power",
    "gw": "GW gigawatts power",
    "percent": "percent % percentage",
    "multiplier": "times factor",
    "times": "times factor",
    "fold": "fold times factor",
    "ratio": "ratio times",
    "usd": "USD $ dollars cost",
    "liters": "liters L water",
    "l": "liters L",
    "kl": "kL kiloliters water",
    "l/kwh": "L/kWh liters per kWh water",
    "lbs": "lbs pounds",
    "kg": "kg kilograms",
    "tons": "tons tonnes",
    "gb": "GB gigabytes memory",
    "parameters": "parameters model size",
    "flops": "FLOPs floating point operations compute",
    "zettaflops": "zettaFLOPs FLOPs compute",
}


class OfflinePlanner:
    """Deterministic queries, no LLM: the question, its acronym-expanded form, its keywords and
    entities without question scaffolding, and those keywords plus the answer unit's words."""

    def __init__(self, acronyms: dict[str, str], n: int):
        if n < 1:
            raise ValueError(f"planner.n: must be at least 1, got {n}")
        self.acronyms, self.n = dict(acronyms), n
        self._long = [
            (acr, re.compile(r"\b" + r"[\s\-]+".join(map(re.escape, re.split(r"[\s\-]+", long))) + r"(s?)\b", re.I))
            for acr, long in sorted(self.acronyms.items(), key=lambda kv: -len(kv[1]))
        ]

    def plan(self, question: str, answer_unit: str | None = None) -> list[str]:
        keywords = self.keywords(question)
        queries = [question, self.expand(question), keywords]
        unit = self.unit_words(answer_unit)
        if unit:
            have = {t.lower() for t in keywords.split()}
            queries.append(" ".join([keywords, *(w for w in unit if w.lower() not in have)]))
        return dedup(queries, self.n)

    def plan_all(self, questions: list[str], units: list[str | None], progress: bool = True) -> list[list[str]]:
        return [self.plan(q, u) for q, u in zip(questions, units)]

    def expand(self, question: str) -> str:
        """Each known acronym gets its long form ("WUE" -> "water use effectiveness (WUE)"), each
        known long form its acronym; longer matches win over overlapping shorter ones."""
        lower = question.lower()
        edits: list[tuple[int, int, str]] = []
        for m in ACRONYM_IN_TEXT.finditer(question):
            shape = _acronym_letters(m[0])
            defined = question[m.start() - 1 : m.start()] == "(" and question[m.end() : m.end() + 1] == ")"
            if shape and shape[0] in self.acronyms and self.acronyms[shape[0]] not in lower and not defined:
                long = self.acronyms[shape[0]]
                long += "s" if shape[1] and not long.endswith("s") else ""
                edits.append((m.start(), m.end(), f"{long} ({m[0]})"))
        for acr, pattern in self._long:
            if acr in UNIT_WORDS or re.search(rf"\b{acr}s?\b", lower):  # no "megawatt-hours (MWH)"
                continue
            for m in pattern.finditer(question):
                edits.append((m.start(), m.end(), f"{m[0]} ({acr.upper()}{m[1]})"))
        taken: list[tuple[int, int, str]] = []
        for e in sorted(edits, key=lambda e: (-(e[1] - e[0]), e[0])):
            if all(e[1] <= s or e[0] >= t for s, t, _ in taken):
                taken.append(e)
        for start, end, new in sorted(taken, reverse=True):
            question = question[:start] + new + question[end:]
        return question

    @staticmethod
    def keywords(question: str) -> str:
        """Content words and entity tokens in question order, scaffolding and stopwords removed."""
        text = unicodedata.normalize("NFKC", question)
        for pattern in SCAFFOLD:
            text = pattern.sub(" ", text)
        words = []
        for m in ENTITY.finditer(text):
            w = re.sub(r"['’]s$", "", m[0]).rstrip(".'’-")
            if w and w.lower() not in FILLER and (len(w) > 1 or w.isdigit()):
                words.append(w)
        return " ".join(dedup(words, len(words)))

    def unit_words(self, unit: str | None) -> list[str]:
        """The unit's words and synonyms ("MWh" -> MWh megawatt-hours energy); none for is_blank."""
        if not unit or unit.strip().lower() in ("is_blank", "none", ""):
            return []
        unit = unicodedata.normalize("NFKC", unit).strip()
        if unit.lower() in UNIT_WORDS:
            words = UNIT_WORDS[unit.lower()].split()
        else:
            words = []
            for t in re.split(r"[\s_]+", unit):
                words += UNIT_WORDS.get(t.lower(), t).split()
        if unit.lower() in self.acronyms:
            words += self.acronyms[unit.lower()].split()
        return dedup(words, len(words))


# --- LLM planner ----------------------------------------------------------------------------

PLANNER_PROMPT = """You help search a collection of papers and reports about the energy use, carbon emissions and water use of AI.
Write up to {k} additional short search queries that would retrieve the passage answering the question below. Highlight the key entities (models, hardware, organisations, datasets, years), the units the answer is given in, and paraphrases of the key terms. An empty list is allowed.

Question: {question}{unit}

Reply with JSON only: {{"queries": ["...", "..."]}}"""  # noqa: E501 (the prompt text is part of the LLM cache key)


def parse_queries(text: str) -> list[str] | None:
    """Queries from a reply: the JSON object between the first "{" and the last "}" (its
    "queries"), else a bare JSON list; None if neither parses to a list of strings."""
    for data in json_values(text):
        queries = data.get("queries") if isinstance(data, dict) else data
        if isinstance(queries, list):
            return [q.strip() for q in queries if isinstance(q, str) and q.strip()]
    return None


def planner_problem(text: str) -> str | None:
    """The gateway's ``validate`` hook for planner replies: a list of queries :func:`parse_queries`
    can read (an empty list is a valid reply; the gateway retries one that is not, at once)."""
    return None if parse_queries(text) is not None else "no JSON list of queries"


class LLMPlanner:
    """KohakuRAG's planner: the LLM writes up to n-1 extra queries. When nothing usable comes
    back, the question text before the first "?" is added instead and the reason is kept in
    ``failures`` (question, reason), so a silent degradation shows up in the run report. An error
    no retry can fix (auth, unknown model, bad request) raises :class:`FatalLLMError`."""

    def __init__(self, gateway, spec: PlannerSpec):
        """``spec``: an LLM planner's, its model resolved (``llm.model`` when it names none)."""
        if spec.n < 1:
            raise ValueError(f"planner.n: must be at least 1, got {spec.n}")
        self.gateway, self.model, self.n, self.params = gateway, spec.model or "", spec.n, dict(spec.params or {})
        self.failures: list[tuple[str, str]] = []

    def messages(self, question: str, answer_unit: str | None = None) -> list[dict]:
        unit = f"\nAnswer unit: {answer_unit}" if answer_unit and answer_unit != "is_blank" else ""
        return [{"role": "user", "content": PLANNER_PROMPT.format(k=self.n - 1, question=question, unit=unit)}]

    def ask(self, question: str, answer_unit: str | None = None) -> LLMResult:
        """The model's reply for one question (thread-safe: the gateway's cache and slots)."""
        request = LLMRequest(self.model, self.messages(question, answer_unit), self.params)
        return self.gateway.complete(request, validate=planner_problem)

    def plan(self, question: str, answer_unit: str | None = None) -> list[str]:
        if self.n == 1:
            return [question]
        return self._queries(question, self.ask(question, answer_unit))

    def plan_all(self, questions: list[str], units: list[str | None], progress: bool = True) -> list[list[str]]:
        """Plans of all questions, asked concurrently (the model's concurrency, :mod:`pipeline.llm.pool`);
        plans and ``failures`` in question order, so the result is the same at any concurrency."""
        if self.n == 1:
            return [[q] for q in questions]
        pairs = list(zip(questions, units))
        replies = map_calls(
            self.gateway.model(self.model),
            lambda pair: self.ask(*pair),
            pairs,
            fatal=lambda result: result.fatal,
            bar=f"plan (llm {self.model})" if progress else None,
        )
        done = [r for r in replies if r is not None and not r.fatal]
        if len(done) < len(pairs):
            raise self._fatal(replies)
        return [self._queries(q, r) for (q, _), r in zip(pairs, done)]

    def _fatal(self, replies: list[LLMResult | None]) -> FatalLLMError:
        error = next((r.error for r in replies if r is not None and r.fatal), "")
        return FatalLLMError(f"planner model {self.model}: {error} (not retried; every reply received is cached)")

    def _queries(self, question: str, result: LLMResult) -> list[str]:
        if result.fatal:
            raise self._fatal([result])
        extra = parse_queries(result.text) if result.ok else None
        queries = dedup([question, *(extra or [])], self.n)
        if len(queries) > 1:
            return queries
        reason = (
            f"unparseable reply: {result.text[:200]!r}"
            if extra is None and result.text
            else f"llm error: {result.error}"
            if not result.ok
            else "no new queries"
        )
        self.failures.append((question, reason))
        return dedup([question, question.split("?")[0]], self.n)


def make_planner(
    spec: PlannerSpec, acronyms: Callable[[], dict[str, str]], gateway=None
) -> OfflinePlanner | LLMPlanner | None:
    """The planner ``spec`` asks for (its kind's registry entry makes it); None means a single query."""
    return PLANNERS.get(spec.kind).make(spec, acronyms, gateway)


def _llm_planner(spec: PlannerSpec, acronyms: Callable[[], dict[str, str]], gateway) -> LLMPlanner:
    if not spec.model:
        raise ValueError("planner.model: required when planner.kind is 'llm'")
    if gateway is None:
        raise ValueError("planner.kind 'llm' needs an LLM gateway")
    return LLMPlanner(gateway, spec)


PLANNERS.register(PlannerKind("none", lambda spec, acronyms, gateway: None))
PLANNERS.register(PlannerKind("offline", lambda spec, acronyms, gateway: OfflinePlanner(acronyms(), spec.n)))
PLANNERS.register(PlannerKind("llm", _llm_planner, calls_llm=True))
