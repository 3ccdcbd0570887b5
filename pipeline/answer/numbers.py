"""Number and unit parsing for the extractive answerer.

The documents are noisy PDF text: "13,900", "4.3 net tCO 2 e", "6.7 ×", "80–90%", "$2.51 million",
"175B parameters", citation markers "[12]". These helpers turn such spans into plain numbers in
the WattBot answer format (no commas, no units) and tell how well the words around a number match
the question's ``answer_unit``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

SCALE_WORDS = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
SCALE_SUFFIX = {"k": 3, "K": 3, "M": 6, "B": 9, "T": 12}

# A number not glued to a word on its left ("GPT-3", "A100", "CO2" and "PM2.5" are names, not
# values); thousands separators; an optional attached scale suffix ("175B") or scale word.
_NUM = re.compile(
    r"(?<![\w.])(?<![A-Za-z][-/])(?:(?P<neg>[-−])(?=\d))?(?P<cur>\$|US\$)?\s?"
    r"(?P<num>(?>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+))"  # atomic: "1.2x" never yields "1"
    r"(?:(?P<suf>[kKMBT])(?![\w])|\s?(?P<word>thousand|million|billion|trillion)\b)?"
    r"(?=[xX×](?![\w])|(?![\w]))"  # "6.7x" keeps its "x" as unit
)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_RANGE_SEP = re.compile(r"[x×%]?\s?(?:[–—-]|to)\s?")
# Sub/superscript digits split off chemical formulas by PDF extraction: "CO 2 e", "H 2 O".
_FORMULA_LEFT = re.compile(r"(?:CO|NO|SO|CH|H|N|O)\s?$")


@dataclass
class Mention:
    """One number found in a sentence."""

    value: Decimal  # scaled value ("1.3 million" -> 1300000), unless keep_scale
    raw: str  # the matched text
    start: int
    end: int
    scale: str = ""  # the scale word or suffix, normalised ("million"), or ""
    hi: Decimal | None = None  # upper bound when the mention opens a range "80–90"
    currency: bool = False  # "$" directly before the number


def fmt(x: Decimal) -> str:
    """Format a number the scorer's way: plain digits, no exponent, no trailing zeros."""
    s = format(x.normalize(), "f")
    return s.rstrip("0").rstrip(".") if "." in s else s


def _scale_of(m: re.Match) -> tuple[str, int]:
    if m.group("word"):
        w = m.group("word").lower()
        return w, SCALE_WORDS[w]
    if m.group("suf"):
        e = SCALE_SUFFIX[m.group("suf")]
        return {3: "thousand", 6: "million", 9: "billion", 12: "trillion"}[e], e
    return "", 0


def find_numbers(text: str, keep_scale: tuple[str, ...] = ()) -> list[Mention]:
    """All numeric mentions in `text`, with ranges "a–b" folded into one mention.

    A scale word listed in `keep_scale` (e.g. "million" when the unit is "million liters") is not
    multiplied out. Citation numbers like "[12]" or "[3, 4]" are dropped.
    """
    out: list[Mention] = []
    for m in _NUM.finditer(text):
        if _in_citation(text, m.start(), m.end()):
            continue
        if len(m.group("num")) == 1 and _FORMULA_LEFT.search(text[max(0, m.start() - 3) : m.start()]):
            continue
        try:
            v = Decimal(m.group("num").replace(",", ""))
        except InvalidOperation:
            continue
        if m.group("neg"):
            v = -v
        scale, exp = _scale_of(m)
        if scale and scale not in keep_scale:
            v = v.scaleb(exp)
        out.append(Mention(v, m.group(0).strip(), m.start(), m.end(), scale, None, bool(m.group("cur"))))
    return _fold_ranges(text, out, keep_scale)


def _in_citation(text: str, start: int, end: int) -> bool:
    """True for numbers inside "[12]" / "[3, 15]" reference markers."""
    left = text.rfind("[", max(0, start - 12), start + 1)
    if left < 0 or "]" in text[left:start]:
        return False
    right = text.find("]", end, end + 20)
    return right >= 0 and re.fullmatch(r"[\d,\s–-]*", text[left + 1 : right]) is not None


def _fold_ranges(text: str, ms: list[Mention], keep_scale: tuple[str, ...]) -> list[Mention]:
    """Join "80–90", "10 - 50", "$41–$140", "300 to 1000" into a low mention carrying `hi`."""
    out: list[Mention] = []
    i = 0
    while i < len(ms):
        a = ms[i]
        if (
            i + 1 < len(ms)
            and _RANGE_SEP.fullmatch(text[a.end : ms[i + 1].start])
            and a.hi is None
            and a.value < ms[i + 1].value
        ):
            b = ms[i + 1]
            lo = a.value
            if b.scale and not a.scale and b.scale not in keep_scale:  # "1.5–2 million"
                lo = lo.scaleb(SCALE_WORDS[b.scale])
            out.append(
                Mention(
                    lo, text[a.start : b.end], a.start, b.end, b.scale or a.scale, b.value, a.currency or b.currency
                )
            )
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def is_year(m: Mention) -> bool:
    """A bare 4-digit integer that looks like a calendar year."""
    return m.hi is None and not m.scale and re.fullmatch(r"(19|20)\d\d", m.raw) is not None


# ---------------------------------------------------------------------------------------------
# Units. Each answer_unit maps to regexes tried on the few words right after a number (and, more
# weakly, right before it: "PUE of 1.1"). Letters may be separated by spaces because PDF
# extraction splits sub/superscripts ("tCO 2 e").


def _loose(word: str) -> str:
    """A regex for `word` that tolerates spaces between characters (PDF sub/superscripts)."""
    return r"\s?".join(re.escape(c) for c in word)


_SYNONYMS: dict[str, list[str]] = {
    "percent": [r"%", r"percent", r"per\s?cent", r"percentage"],
    "multiplier": [r"[x×](?![a-z0-9])", r"times\b", r"-?fold\b"],
    "times": [r"[x×](?![a-z0-9])", r"times\b", r"-?fold\b"],
    "fold": [r"[x×](?![a-z0-9])", r"times\b", r"-?fold\b"],
    "ratio": [r"[x×](?![a-z0-9])", r"times\b", r":\s?1\b"],
    "tco2e": [
        _loose("tco2e"),
        _loose("tco2"),
        r"t\s?co\s?2",
        r"(?:metric\s)?tons?\s(?:of\s)?co\s?2",
        r"tonnes?\s(?:of\s)?co\s?2",
    ],
    "metric tons": [r"(?:metric\s)?tons?\b", r"tonnes?\b", r"t\s?co\s?2"],
    "tons": [r"(?:metric\s)?tons?\b", r"tonnes?\b"],
    "lbs": [r"lbs?\b", r"pounds?\b"],
    "liters": [r"l\b", r"liters?\b", r"litres?\b"],
    "l": [r"l\b", r"liters?\b", r"litres?\b"],
    "kl": [r"kl\b", r"kilo\s?liters?\b"],
    "usd": [r"usd\b", r"dollars?\b", r"us\s?\$"],
    "gb": [r"gb\b", r"gigabytes?\b"],
    "days": [r"days?\b"],
    "hours": [r"hours?\b", r"hrs?\b", r"h\b"],
    "seconds": [r"seconds?\b", r"secs?\b", r"s\b"],
    "second": [r"seconds?\b", r"secs?\b", r"s\b"],
    "years": [r"years?\b", r"yrs?\b"],
    "watts": [r"w\b", r"watts?\b"],
    "w": [r"w\b", r"watts?\b", r"kw\b", r"kilowatts?\b"],
    "mwh": [r"mwh\b", r"megawatt[\s-]?hours?\b"],
    "kwh": [r"kwh\b", r"kilowatt[\s-]?hours?\b"],
    "wh": [r"wh\b", r"watt[\s-]?hours?\b"],
    "gwh": [r"gwh\b", r"gigawatt[\s-]?hours?\b"],
    "twh": [r"twh\b", r"terawatt[\s-]?hours?\b"],
    "gw": [r"gw\b", r"gigawatts?\b"],
    "parameters": [r"parameters?\b", r"params?\b"],
}


def unit_key(unit: str) -> str:
    return re.sub(r"\s+", " ", unit.strip().lower())


def unit_regexes(unit: str) -> list[re.Pattern]:
    """Regexes for text that follows a number expressed in `unit`."""
    key = unit_key(unit)
    pats = list(_SYNONYMS.get(key, []))
    if not pats or key not in _SYNONYMS:
        pats.append(_loose(key.replace(" ", "")))  # the unit itself, spaces optional
        words = [w for w in re.split(r"[\s_/]+", key) if len(w) > 1 and not w.isdigit()]
        for w in words[:1] + words[-1:]:  # first and last word, e.g. "GPU hours"
            stem = w[:-1] if w.endswith("s") and len(w) > 3 else w
            pats.append(re.escape(stem) + r"s?\b")
    return [re.compile(p, re.I) for p in dict.fromkeys(pats)]


def unit_score(text: str, m: Mention, unit: str) -> float:
    """1.0 when the unit follows the number (up to two words in between, e.g. "4.3 net tCO 2 e"),
    0.6 when it precedes it ("PUE of 1.1", "$41"), else 0."""
    key = unit_key(unit)
    if key in ("", "is_blank"):
        return 0.0
    if key in ("year", "years") and is_year(m):
        return 1.0
    if key.startswith("usd") and m.currency:
        return 1.0
    if key == "percent" and text[m.end : m.end + 1] == "%":
        return 1.0
    after = text[m.end : m.end + 40]
    if _follows(after, unit_regexes(unit)):
        return 1.0 if _follows(after, unit_regexes(unit), words=0) else 0.8
    # Compound units ("L/kWh", "USD per hour"): the numerator alone ("0.18 liters of water per...").
    num = re.split(r"\s?/\s?|\sper\s", key)[0]
    if num != key and _follows(after, unit_regexes(num)):
        return 0.8
    # "PUE of 1.1": the unit word shortly before, not itself preceded by another number.
    before = text[max(0, m.start - 30) : m.start].lower()
    words = [w for w in re.split(r"[\s_/]+", key) if len(w) > 1]
    for w in words:
        b = re.search(r"(\S*)\s?\b" + re.escape(w) + r"s?\b([^.;]{0,20})$", before)
        if b and not re.search(r"\d$", b.group(1)) and not re.search(r"\d", _YEAR.sub("", b.group(2))):
            return 0.6
    return 0.0


def _follows(after: str, regs: list[re.Pattern], words: int = 2) -> bool:
    """Does a unit regex match right after the number, allowing up to `words` words between?"""
    skip = rf"^\s?(?:[\w\-]+\s){{0,{words}}}"
    return any(re.match(skip + "(?:" + r.pattern + ")", after, re.I) for r in regs)


def keep_scale_for(unit: str) -> tuple[str, ...]:
    """Scale words the unit itself carries ("billion cubic meters") are kept, not multiplied out."""
    key = unit_key(unit)
    return tuple(w for w in SCALE_WORDS if w in key)
