"""A scripted OpenAI-compatible chat server on loopback (the one fake: the LLM boundary).

Each POST /v1/chat/completions takes the next scripted reply: text, tool calls, an HTTP error,
a delay, a token usage, a finish reason, the first token's alternatives (`top`: token -> log probability, sent
when the request asks for `logprobs`) — or a function of the request body that returns one.  It streams as Server-Sent Events when the request asks
for `stream: true`, exactly as OpenAI-compatible servers do, and records every request body.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ScriptedServer:
    def __init__(self, script: list[dict] | None = None, port: int = 0):
        self.script: list[dict] = list(script or [])
        self.requests: list[dict] = []
        self.headers: list[dict] = []  # each POST's HTTP headers (Authorization: the key sent)
        self.ollama_models: list[str | dict] | None = None  # set: also answer GET /api/tags like Ollama (names or entries)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path == "/api/tags" and server.ollama_models is not None:
                    return self._json(200, {"models": [m if isinstance(m, dict) else {"name": m}
                                                       for m in server.ollama_models]})
                if self.path == "/health":  # as llama.cpp's server answers once its model is loaded
                    return self._json(200, {"status": "ok"})
                return self._json(404, {"error": "not found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                reply = server.script.pop(0) if server.script else {"text": "(script exhausted)"}
                if callable(reply):  # a reply that depends on what was asked
                    reply = reply(body)
                time.sleep(reply.get("delay", 0))
                if "status" in reply:
                    return self._json(reply["status"], reply.get("body", {"error": {"message": "scripted failure"}}))
                if body.get("stream"):
                    return self._stream(body, reply)
                return self._json(200, _completion(body, reply))

            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict, reply: dict) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _chunks(body, reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(reply.get("chunk_delay", 0))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        class Quiet(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):  # a client that hung up (timeout tests)
                pass

        self.httpd = Quiet(("127.0.0.1", port), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _calls(reply: dict) -> list[dict]:
    return [{"id": c.get("id", f"call_{i}"), "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"])}}
            for i, c in enumerate(reply.get("tool_calls", []))]


def _finish(reply: dict) -> str:
    return reply.get("finish_reason") or ("tool_calls" if reply.get("tool_calls") else "stop")


def _usage(reply: dict) -> dict:
    p, c = reply.get("usage", (10, 5))
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def _completion(body: dict, reply: dict) -> dict:
    message = {"role": "assistant", "content": reply.get("text")}
    if reply.get("tool_calls"):
        message["tool_calls"] = _calls(reply)
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}], "usage": _usage(reply)}


def _chunks(body: dict, reply: dict):
    base = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "m")}
    text = reply.get("text") or ""
    for i in range(0, len(text), 7):
        choice = {"index": 0, "delta": {"content": text[i:i + 7]}, "finish_reason": None}
        if i == 0 and body.get("logprobs") and reply.get("top"):  # the first token's alternatives, as llama.cpp sends them
            top = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in reply["top"].items()]
            choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
        yield {**base, "choices": [choice]}
    for index, call in enumerate(_calls(reply)):
        args = call["function"]["arguments"]
        half = len(args) // 2
        yield {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "id": call["id"], "type": "function",
               "function": {"name": call["function"]["name"], "arguments": args[:half]}}]}, "finish_reason": None}]}
        yield {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, "function": {"arguments": args[half:]}}]},
               "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(reply)}]}
    if (body.get("stream_options") or {}).get("include_usage"):
        yield {**base, "choices": [], "usage": _usage(reply)}


def main() -> None:
    """As a process on a given port (a stand-in for the local model's server): every reply is --reply."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--reply", default="scripted reply")
    args = parser.parse_args()
    server = ScriptedServer(port=args.port)
    server.script = _Forever({"text": args.reply})
    server.httpd.serve_forever()


class _Forever(list):
    """A script that never runs out: the same reply every time."""

    def __init__(self, reply: dict):
        super().__init__([reply])
        self.reply = reply

    def pop(self, index: int = -1) -> dict:
        return self.reply


if __name__ == "__main__":
    main()
