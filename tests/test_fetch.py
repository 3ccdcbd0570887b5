"""The fetch rule's function: downloads when a server answers, says so (and exits cleanly) when not."""
import functools
import http.server
import json
import threading

import fitz
import pytest

from pipeline.datasets.fetch import fetch_pdfs


@pytest.fixture()
def pdf_server(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    doc = fitz.open()
    doc.new_page().insert_text((72, 72), "Training used 24 MWh.")
    doc.save(site / "paper.pdf")
    (site / "page.html").write_text("<html>not a pdf</html>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def write_metadata(path, rows):
    lines = ["id,type,title,year,citation,url"] + [f"{i},paper,T,2024,C,{u}" for i, u in rows]
    path.write_text("\n".join(lines) + "\n", encoding="cp1252")


def test_fetch_downloads_and_reports(tmp_path, pdf_server, capsys):
    meta = tmp_path / "metadata.csv"
    write_metadata(meta, [("good", f"{pdf_server}/paper.pdf"), ("html", f"{pdf_server}/page.html"),
                          ("gone", f"{pdf_server}/missing.pdf")])
    summary = fetch_pdfs(meta, tmp_path / "pdfs", tmp_path / "status.json", timeout_s=5)
    assert summary == {"documents": 3, "available": 1}
    status = json.loads((tmp_path / "status.json").read_text())["status"]
    assert status["good"] == "downloaded" and status["html"].startswith("skipped: response is not a PDF")
    assert status["gone"].startswith("skipped")
    assert (tmp_path / "pdfs" / "good.pdf").read_bytes().startswith(b"%PDF")
    again = fetch_pdfs(meta, tmp_path / "pdfs", tmp_path / "status.json", timeout_s=5)
    assert json.loads((tmp_path / "status.json").read_text())["status"]["good"] == "present" and again["available"] == 1


def test_offline_is_a_message_not_a_crash(tmp_path, capsys):
    meta = tmp_path / "metadata.csv"
    write_metadata(meta, [("a", "http://127.0.0.1:9/a.pdf")])  # the discard port: nothing listens
    summary = fetch_pdfs(meta, tmp_path / "pdfs", tmp_path / "status.json", timeout_s=2)
    assert summary["available"] == 0
    assert "no PDF could be downloaded" in capsys.readouterr().out
