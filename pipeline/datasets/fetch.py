"""Download the WattBot PDFs from the metadata URLs (needs internet).

Offline, every download fails fast; the rule still succeeds and writes a status file that
says so, because a missing network is an expected state here, not a crash. The tree rule
then keeps using the pre-extracted JSON.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from tqdm import tqdm

from pipeline.datasets.wattbot import load_metadata
from pipeline.io import atomic_write_bytes, atomic_write_json
from pipeline.names import inside


def fetch_pdfs(metadata: str | Path, out_dir: str | Path, status_path: str | Path, timeout_s: float = 30) -> dict:
    meta = load_metadata(metadata)
    out_dir = Path(out_dir)
    status: dict[str, str] = {}
    for doc_id, url in tqdm(list(zip(meta["id"], meta["url"])), desc="fetch PDFs"):
        target = inside(out_dir, f"{doc_id}.pdf")  # ids are names (load_metadata): this stays in out_dir
        if target.exists():
            status[doc_id] = "present"
            continue
        try:
            req = urllib.request.Request(url, headers={"User-Agent": "wattbench/0.1"})
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                data = resp.read()
            if not data.startswith(b"%PDF"):
                status[doc_id] = "skipped: response is not a PDF"
                continue
            atomic_write_bytes(target, data)
            status[doc_id] = "downloaded"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            status[doc_id] = f"skipped: {getattr(exc, 'reason', exc)}"
    got = sum(v in ("present", "downloaded") for v in status.values())
    summary = {"documents": len(status), "available": got, "status": status}
    atomic_write_json(status_path, summary)
    if got == 0:
        print(
            f"fetch: no PDF could be downloaded (offline?); trees keep using the pre-extracted JSON. "
            f"Details in {status_path}"
        )
    else:
        print(
            f"fetch: {got}/{len(status)} PDFs in {out_dir}; run with --config wattbot='{{...pdf_dir: {out_dir}}}' "
            f"or set wattbot.pdf_dir in config.yaml to parse them"
            + (
                f" ({len(status) - got} are missing: a missing PDF is an error unless wattbot.pdf_fallback: "
                "extracted-text is set too)"
                if got < len(status)
                else ""
            )
        )
    return {k: v for k, v in summary.items() if k != "status"}
