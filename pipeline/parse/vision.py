"""Optional figure captioning by a vision model, through the one LLM gateway (off by default).

A figure's caption says what the authors wanted to say about it; numbers read off a bar
chart are not in it. When ``parsing.vision.model`` is set, each figure region is rendered
to PNG and described by that model; the description becomes extra sentences of the figure
node. Calls go through :class:`pipeline.llm.gateway.LLMGateway`, so they are cached by full
request (the image bytes included) and replayable offline.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path

from pipeline.llm.gateway import LLMGateway, LLMRequest
from pipeline.llm_models import LLMSpec
from pipeline.parse.pdf import Describer
from pipeline.specs import VisionSpec

log = logging.getLogger("wattbench.parse")
PROMPT = (
    "Describe this figure from a scientific document for search: its type, axes, legend, "
    "and every number or label you can read. Plain text, at most 120 words."
)


def figure_describer(
    spec: VisionSpec, cache_dir: str | Path, mode: str = "live", gateway: LLMGateway | None = None
) -> Describer:
    """A function PNG bytes -> description; a failed call gives "" and a warning, never a crash."""
    model = spec.model
    if not model:
        raise ValueError("parsing.vision.model: required to caption figures")
    gateway = gateway or LLMGateway(
        Path(cache_dir) / "llm.sqlite", LLMSpec.from_dict({"mode": mode}), variant="parsing.vision"
    )

    def describe(png: bytes) -> str:
        url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        messages = [
            {
                "role": "user",
                "content": [{"type": "text", "text": PROMPT}, {"type": "image_url", "image_url": {"url": url}}],
            }
        ]
        result = gateway.complete(LLMRequest(model, messages, dict(spec.params)))
        if not result.ok:
            log.warning("figure description failed (%s): %s", model, result.error)
            return ""
        return " ".join(result.text.split())

    return describe
