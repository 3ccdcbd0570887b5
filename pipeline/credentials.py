"""What a credential looks like, by its name and by its value, and how to keep one out of text.

Why: a config is written into shareable files (the hashed slices in manifests and on job command lines,
MLflow params, the LLM cache's ``request`` column, so replay packs), and the check that kept keys out
looked at key names alone: ``extra_headers: {Authorization: Bearer …}``, ``x-api-key``, ``hf_token`` and
``user:password@`` inside ``api_base`` passed (issue 46). :func:`findings` looks at names and values; the
config check (pipeline/config/secrets.py) refuses what it finds, naming the key and never the value.
Values that legitimately come from the environment (``api_key_env``, ``headers_env``, ``userinfo_env``)
are masked out of messages with :func:`redact`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from urllib.parse import urlsplit

# A key (or an HTTP header) named like a credential: *api_key, *secret, *password, *token, *_key, *-key,
# Authorization, Cookie. Names ending in _env hold a variable's name, not its value.
SECRET_NAME = re.compile(
    r"(api[_-]?key|secret|passw(or)?d|pwd|token|[_-]key|authorization|cookie|credentials?)$", re.IGNORECASE
)
ENV_NAME = re.compile(r"_env$", re.IGNORECASE)
# Well-known token shapes, found wherever they are written (strict enough that no setting looks like one).
TOKEN_SHAPES = re.compile(
    r"\b(sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,})"
)
AUTH_SCHEME = re.compile(r"^\s*(bearer|basic|token|digest|apikey)\s+\S", re.IGNORECASE)
HEADER_TABLES = ("extra_headers", "headers", "default_headers")  # request parameters that are HTTP headers
MIN_RANDOM_LEN = 20  # a header value this long ...
MIN_RANDOM_BITS = 3.5  # ... with this much entropy per character, over letters and digits mixed, is a key
MASK = "***"


def secret_name(name: str) -> bool:
    """A key or header named like a credential (not one naming an environment variable: ``*_env``)."""
    return bool(SECRET_NAME.search(name)) and not ENV_NAME.search(name)


def url_userinfo(value: str) -> bool:
    """A URL carrying ``user[:password]@`` before its host."""
    if "://" not in value or "@" not in value:
        return False
    try:
        return "@" in urlsplit(value.strip()).netloc
    except ValueError:
        return False


def looks_random(value: str) -> bool:
    """A long high-entropy string of letters and digits mixed (a key, not words or a path)."""
    text = value.strip()
    if len(text) < MIN_RANDOM_LEN or " " in text or "/" in text:
        return False
    counts = Counter(text)
    bits = -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
    classes = sum(bool(re.search(p, text)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return bits >= MIN_RANDOM_BITS and classes >= 2


def value_problem(value: str, in_header: bool) -> str | None:
    """Why ``value`` is a credential (None: it is not one as far as can be told). In an HTTP header an
    auth scheme (``Bearer …``) or a random-looking string is one too."""
    if url_userinfo(value):
        return "a URL with user:password@ in it"
    if TOKEN_SHAPES.search(value):
        return "a value shaped like an access token"
    if in_header and AUTH_SCHEME.match(value):
        return "an Authorization value"
    if in_header and looks_random(value):
        return "a random-looking header value"
    return None


def findings(obj: object, path: str = "", in_header: bool = False, names: bool = True) -> list[tuple[str, str]]:
    """(dotted key, why) of every credential written in ``obj`` (a config or a request), in order: keys
    named like one, values that look like one. The values themselves are never returned. Under a key
    ending in ``_env`` (``headers_env: {Authorization: VAR}``) the values are variables' names: their
    keys may be named like credentials."""
    out: list[tuple[str, str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = f"{path}{k}"
            if names and secret_name(str(k)) and v not in (None, "", {}, []):
                out.append((key, "a key named like a credential"))
                continue
            header = in_header or str(k).lower() in HEADER_TABLES
            out += findings(v, f"{key}.", header, names and not ENV_NAME.search(str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += findings(v, f"{path}{i}.", in_header, names)
    elif isinstance(obj, str):
        why = value_problem(obj, in_header)
        if why:
            out.append((path.rstrip("."), why))
    return out


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret in ``secrets`` (and each part of a ``user:password``) replaced by ``***``."""
    parts = {p for s in secrets if s for p in (s, *s.split(":", 1)) if len(p) >= 4}
    for part in sorted(parts, key=len, reverse=True):
        text = text.replace(part, MASK)
    return text


def without_userinfo(url: str) -> str:
    """``url`` with its ``user:password@`` masked (``http://***@host:port/v1``), for messages."""
    if not url_userinfo(url):
        return url
    parts = urlsplit(url)
    return parts._replace(netloc=f"{MASK}@{parts.netloc.rsplit('@', 1)[1]}").geturl()


def carried(route: dict) -> list[str]:
    """The secrets a call's connection settings carry (litellm's keyword arguments): its ``api_key``, the
    values of its ``extra_headers`` and the ``user:password`` of its ``api_base``; what errors must not repeat."""
    out = [str(route["api_key"])] if route.get("api_key") else []
    out += [str(v) for v in (route.get("extra_headers") or {}).values()]
    base = str(route.get("api_base") or "")
    if url_userinfo(base):
        out.append(urlsplit(base).netloc.rsplit("@", 1)[0])
    return out
