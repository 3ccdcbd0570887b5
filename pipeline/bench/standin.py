"""A stand-in for a hosted LLM provider: an OpenAI-compatible ``/v1/chat/completions`` on 127.0.0.1.

Why: concurrency, rate limits, retries, single flight, resumption and failure handling must be
tested and measured for real — many threads, real HTTP, replies out of order, 429s with
``Retry-After``, 5xx, stalled requests, malformed bodies, replies that are not the JSON asked
for — without a key or the internet.
Answers are derived from the request alone (a hash of its messages and seed), so a cached,
replayed or concurrent run can be compared byte for byte with a sequential one; faults are
drawn per request from a seeded generator, so a retry of a failed request can succeed.

Bounded: it stops by itself after ``max_requests`` requests or ``max_seconds`` seconds.
``GET /stats`` returns its counters (requests per request key, faults served) as JSON.
Run it in a thread (:class:`StandIn`, a context manager) or as a process:
``python -m pipeline standin --port-file PORT [--params JSON]``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class StandInConfig:
    mean_latency_s: float = 0.05  # lognormal latency of a normal reply, this mean ...
    latency_sigma: float = 0.5  # ... and this shape (sigma of the underlying normal)
    requests_per_minute: float | None = None  # over this (sliding 60 s window): 429 + Retry-After
    share_429: float = 0.0  # extra 429s at random, with Retry-After: retry_after_s
    retry_after_s: float = 1.0
    retry_after_date: bool = False  # send Retry-After as an HTTP date instead of seconds
    share_5xx: float = 0.0  # 500/502/503 at random
    share_stall: float = 0.0  # requests that hang for stall_s (the client times out)
    stall_s: float = 30.0
    share_malformed: float = 0.0  # a 200 whose body is cut-off JSON
    share_invalid: float = 0.0  # a well-formed 200 whose reply is words, not the JSON asked for (fails validation)
    share_blank: float = 0.0  # answers that abstain (deterministic per request: drives blank-retries) ...
    # ... and, to a query planner's prompt, replies with no queries
    status_always: int | None = None  # every request answers this status (401: a bad key, 404: no such model)
    seed: int = 0
    # headers every request must carry (name -> exact value; else 401): a test proves credentials from the
    # environment reach the provider, and only it (tests/safety/test_planted_secret_run.py)
    require_headers: dict = field(default_factory=dict)
    max_requests: int = 100_000
    max_seconds: float = 900.0


def request_key(body: dict) -> str:
    """What identifies a request to the stand-in (and to tests): its messages and seed."""
    text = json.dumps({"messages": body.get("messages"), "seed": body.get("seed")}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _unit(key: str, salt: str) -> float:
    return int(hashlib.sha256(f"{salt}:{key}".encode()).hexdigest()[:8], 16) / 2**32


INVALID_REPLY = "Sure! Here is what I found in the documents."
PLANNER_ASK = '{"queries"'  # what the query planner's prompt asks for (pipeline/retrieve/planner.py)


def answer_for(body: dict, share_blank: float = 0.0) -> str:
    """The deterministic JSON answer to a request: a number and the first document offered
    (the schema's ``ref_id`` enum, else the first ``[ref_id=...]`` in the prompt); to a query
    planner's prompt, two queries named after the request (none when it abstains)."""
    key = request_key(body)
    if PLANNER_ASK in " ".join(str(m.get("content", "")) for m in body.get("messages") or []):
        abstain = _unit(key, "blank") < share_blank
        return json.dumps({"queries": [] if abstain else [f"stand-in query {key[:8]}", f"stand-in query {key[8:16]}"]})
    schema = (
        ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        or (body.get("response_format") or {}).get("schema")
        or {}
    )
    docs = [
        d
        for d in (((schema.get("properties") or {}).get("ref_id") or {}).get("items") or {}).get("enum", [])
        if d != "is_blank"
    ]
    if not docs:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        docs = re.findall(r"\[ref_id=([^\]]+)\]", text)[:1]
    if not docs or _unit(key, "blank") < share_blank:
        return json.dumps(
            {
                "explanation": "The context does not say.",
                "answer": "is_blank",
                "answer_value": "is_blank",
                "ref_id": ["is_blank"],
                "is_blank": True,
            }
        )
    value = str(int(_unit(key, "value") * 1000))
    return json.dumps(
        {
            "explanation": f"Stand-in answer for {key[:8]}.",
            "answer": value,
            "answer_value": value,
            "ref_id": [docs[0]],
            "is_blank": False,
        }
    )


@dataclass
class Stats:
    requests: int = 0
    ok: int = 0
    rate_limited: int = 0
    server_errors: int = 0
    stalled: int = 0
    malformed: int = 0
    invalid: int = 0
    refused: int = 0
    unauthorised: int = 0  # requests without the required headers (401)
    in_flight: int = 0  # requests received and not yet answered
    per_key: Counter = field(default_factory=Counter)
    ok_per_key: Counter = field(default_factory=Counter)


class StandIn:
    """The server in a background thread; ``api_base`` to give litellm; ``stats`` to inspect."""

    def __init__(self, cfg: StandInConfig | None = None, port: int = 0):
        self.cfg = cfg or StandInConfig()
        self.stats = Stats()
        self.lock = threading.Lock()
        self.rng = random.Random(self.cfg.seed)
        self.window: deque[float] = deque()
        self.started = time.monotonic()
        self.stopped = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread: threading.Thread | None = None
        self.timer: threading.Timer | None = None

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> StandIn:
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="standin")
        self.thread.start()
        self.timer = threading.Timer(self.cfg.max_seconds, self.stop)
        self.timer.daemon = True
        self.timer.start()
        return self

    def stop(self) -> None:
        if not self.stopped.is_set():
            self.stopped.set()
            if self.timer is not None:
                self.timer.cancel()
            threading.Thread(target=self._shutdown, daemon=True).start()

    def _shutdown(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def wait(self) -> None:
        """Block until the server stops by itself (its request or time bound)."""
        self.stopped.wait()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def snapshot(self) -> dict:
        with self.lock:
            d = asdict(self.stats)
        d["per_key"], d["ok_per_key"] = dict(self.stats.per_key), dict(self.stats.ok_per_key)
        return d

    def _decide(self, key: str) -> tuple[str | int, float]:
        """What to do with one request: ('ok' | 429 | 5xx | 'stall' | 'malformed' | 'invalid' | 'refused', arg)."""
        c = self.cfg
        with self.lock:
            self.stats.requests += 1
            self.stats.per_key[key] += 1
            if self.stats.requests > c.max_requests:
                self.stats.refused += 1
                self.stop()
                return "refused", 0
            if c.status_always:
                return c.status_always, 0
            wait = self._over_rate()
            if wait is not None:
                self.stats.rate_limited += 1
                return 429, wait
            return self._draw()

    def _over_rate(self) -> float | None:
        """The Retry-After of a request over ``requests_per_minute`` (sliding 60 s window); None
        when it is within the limit (and then counted in the window)."""
        limit = self.cfg.requests_per_minute
        now = time.monotonic()
        while self.window and now - self.window[0] >= 60:
            self.window.popleft()
        if limit and len(self.window) >= limit:
            return max(1.0, math.ceil(60 - (now - self.window[0])))
        self.window.append(now)
        return None

    def _draw(self) -> tuple[str | int, float]:
        """One seeded draw: a fault with its configured share, else 'ok' after a lognormal latency."""
        c = self.cfg
        r = self.rng.random()
        latency = self.rng.lognormvariate(math.log(c.mean_latency_s) - c.latency_sigma**2 / 2, c.latency_sigma)
        for share, kind in (
            (c.share_429, 429),
            (c.share_5xx, 503),
            (c.share_stall, "stall"),
            (c.share_malformed, "malformed"),
            (c.share_invalid, "invalid"),
        ):
            if r < share:
                return self._fault(kind, latency)
            r -= share
        return "ok", latency

    def _fault(self, kind: str | int, latency: float) -> tuple[str | int, float]:
        """The drawn fault ``kind``, counted: 429 waits retry_after_s, 503 is one of 500/502/503."""
        if kind == 429:
            self.stats.rate_limited += 1
            return 429, self.cfg.retry_after_s
        if kind == 503:
            self.stats.server_errors += 1
            return self.rng.choice((500, 502, 503)), 0
        if kind == "stall":
            self.stats.stalled += 1
            return "stall", self.cfg.stall_s
        if kind == "invalid":
            self.stats.invalid += 1
            return "invalid", latency
        self.stats.malformed += 1
        return "malformed", latency

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        """A request handler class bound to this stand-in."""
        return type("Handler", (_Handler,), {"standin": self})


class _Handler(BaseHTTPRequestHandler):
    """The stand-in's HTTP side: `standin` is bound per server by :meth:`StandIn._handler`."""

    standin: StandIn

    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, status: int, data: bytes, headers: dict | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (a stalled request it timed out)
            pass

    def _authorised(self) -> bool:
        """Whether the request carries the required headers; else a 401 is sent and counted."""
        missing = [k for k, v in self.standin.cfg.require_headers.items() if self.headers.get(k) != v]
        if missing:
            with self.standin.lock:
                self.standin.stats.unauthorised += 1
            self._send(401, json.dumps({"error": {"message": "Incorrect API key provided", "code": 401}}).encode())
        return not missing

    def do_GET(self):
        if not self.path.rstrip("/").endswith("/stats") and not self._authorised():
            return
        if self.path.rstrip("/").endswith("/stats"):
            self._send(200, json.dumps(self.standin.snapshot()).encode())
        elif self.path.rstrip("/").endswith("/models"):
            self._send(200, json.dumps({"object": "list", "data": [{"id": "standin", "object": "model"}]}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if not self._authorised():
            return
        key = request_key(body)
        kind, arg = self.standin._decide(key)
        with self.standin.lock:
            self.standin.stats.in_flight += 1
        try:
            self._reply(body, key, kind, arg)
        finally:
            with self.standin.lock:
                self.standin.stats.in_flight -= 1

    def _reply(self, body: dict, key: str, kind, arg: float) -> None:
        if kind in ("ok", "malformed", "invalid"):
            time.sleep(arg)
        if kind in ("ok", "invalid"):
            text = answer_for(body, self.standin.cfg.share_blank) if kind == "ok" else INVALID_REPLY
            data = json.dumps(
                {
                    "id": f"standin-{key}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "standin"),
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                    ],
                    "usage": {
                        "prompt_tokens": len(json.dumps(body.get("messages"))) // 4,
                        "completion_tokens": len(text) // 4,
                        "total_tokens": (len(json.dumps(body.get("messages"))) + len(text)) // 4,
                    },
                }
            )
            if kind == "ok":
                with self.standin.lock:
                    self.standin.stats.ok += 1
                    self.standin.stats.ok_per_key[key] += 1
            self._send(200, data.encode())
        elif kind == "malformed":
            self._send(200, b'{"id": "standin", "object": "chat.completion", "choices": [{"index": 0, "mess')
        elif kind == "stall":
            time.sleep(arg)
            self._send(504, b'{"error": {"message": "stalled"}}')
        elif kind == 429:
            after = (
                time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + arg))
                if self.standin.cfg.retry_after_date
                else str(int(math.ceil(arg)))
            )
            self._send(
                429,
                json.dumps(
                    {
                        "error": {
                            "message": "rate limit",
                            "type": "rate_limit_error",
                            "code": "rate_limit_exceeded",
                        }
                    }
                ).encode(),
                {"Retry-After": after},
            )
        elif kind == "refused":
            self._send(503, b'{"error": {"message": "stand-in request bound reached"}}')
        else:
            messages = {
                401: "Incorrect API key provided",
                403: "permission denied",
                404: "The model does not exist",
                400: "bad request",
            }
            self._send(
                int(kind),
                json.dumps(
                    {
                        "error": {
                            "message": messages.get(int(kind), "server error"),
                            "type": "error",
                            "code": int(kind),
                        }
                    }
                ).encode(),
            )


def serve(cfg: StandInConfig, port_file: str | Path) -> dict:
    """Run a stand-in until it stops by itself; its port goes to ``port_file`` (written atomically)."""
    from pipeline.io import atomic_write_text

    standin = StandIn(cfg).start()
    atomic_write_text(port_file, str(standin.port))
    standin.wait()
    return standin.snapshot()
