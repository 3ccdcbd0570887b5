"""A stand-in for ``python -m pipeline.llm.llama_server`` (no llama-cpp-python, no model): reads the same
``--port`` and ``--model_alias`` arguments and the ``API_KEY`` environment variable llama_cpp.server's settings
read, waits ``FAKE_START_S`` seconds (a model load) and serves ``/v1/models``, requiring the key as llama_cpp's
server does (401 otherwise)."""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
time.sleep(float(os.environ.get("FAKE_START_S", "0")))
key = os.environ.get("API_KEY")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        ok = key is None or self.headers.get("Authorization") == f"Bearer {key}"
        body = json.dumps({"data": [{"id": args["--model_alias"]}]} if ok else {"error": "unauthorised"}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


HTTPServer(("127.0.0.1", int(args["--port"])), Handler).serve_forever()
