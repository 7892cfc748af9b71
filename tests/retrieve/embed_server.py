"""A scripted embedding server on loopback: Ollama's /api/embed and OpenAI's /v1/embeddings.

Vectors are a deterministic hashing of the words (so equal texts get equal vectors and texts
sharing words are close).  It records every request, can answer slowly, and can fail the
next N requests with a status code — enough to exercise docqa's HTTP embedders for real.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

DIMS = 64


def fake_vector(text: str, dims: int = DIMS) -> list[float]:
    v = np.zeros(dims)
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
        v[h % dims] += 1.0 if h & 1 << 31 else -1.0
    n = np.linalg.norm(v)
    return (v / n if n else v + 1 / np.sqrt(dims)).tolist()


class EmbedServer:
    def __init__(self, delay: float = 0.0):
        self.delay = delay
        self.requests: list[dict] = []
        self.fail_next: list[int] = []  # status codes to answer with, one per request
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if server.delay:
                    time.sleep(server.delay)
                if server.fail_next:
                    return self._send(server.fail_next.pop(0), {"error": "scripted failure"})
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = [fake_vector(t) for t in texts]
                if self.path == "/api/embed":
                    return self._send(200, {"model": body["model"], "embeddings": vectors})
                if self.path == "/v1/embeddings":
                    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
                    return self._send(200, {"object": "list", "data": data[::-1], "model": body["model"]})
                return self._send(404, {"error": "not found"})

            def _send(self, status, payload):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> EmbedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
