"""Serving the local model (docqa.llm.local) as an OpenAI-compatible HTTP API on loopback, with xllamacpp.

    serve()          in this process until SIGINT / SIGTERM ('docqa model serve'); it leaves a state
                     file in the models folder so that other docqa processes find it and share it
    running()        the base URL of such a shared server, when one answers
    ManagedServer    a child process a docqa command starts on demand when nothing else is configured:
                     reused for the command's life, stopped when it ends (or when its parent dies)
    LocalServerModel the chat model over a managed server: waits for it on first use, stops it on close

Run as `python -m docqa.llm.server --model PATH --port N --parent PID`: the managed child.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docqa.errors import LocalModelError
from docqa.llm.base import Delta, Message
from docqa.llm.local import QWEN_1_5B, LocalModel, status, verify
from docqa.llm.openai_compat import OpenAICompatModel

HOST = "127.0.0.1"
STATE_FILE = "server.json"
START_TIMEOUT = 300.0
Command = Callable[[int], list[str]]  # port -> the argv of a process that serves the model there


def default_threads() -> int:
    """One core left for docqa itself: llama.cpp's threads wait on each other when a core is busy."""
    return max(1, min(8, (os.cpu_count() or 2) - 1))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def healthy(root: str, timeout: float = 2.0) -> bool:
    """True when the server at `root` (no /v1) answers /health with 200 (503 while it loads)."""
    try:
        with urllib.request.urlopen(root.rstrip("/") + "/health", timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


# ---------------------------------------------------------------- the shared server

def running(models_dir: Path) -> str | None:
    """The base URL (…/v1) of a 'docqa model serve' that answers, from its state file; else None."""
    try:
        state = json.loads((models_dir / STATE_FILE).read_text())
        url, pid = str(state["url"]), int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # another user's process: alive
    return url if healthy(url.removesuffix("/v1")) else None


def serve(path: Path, name: str, port: int, ctx: int, threads: int, *, state_dir: Path | None = None,
          parent: int | None = None, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve the GGUF at `path` on 127.0.0.1:`port` until SIGINT / SIGTERM (or until `parent` dies)."""
    _port_free(port)
    import xllamacpp

    stop: list[bool] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    server = xllamacpp.Server(_params(xllamacpp, path, name, port, ctx, threads))  # loads the model, serves in the background
    root = f"http://{HOST}:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while not healthy(root):
        if stop:
            return
        if time.monotonic() > deadline:
            raise LocalModelError(f"the model server did not answer {root}/health within {START_TIMEOUT:.0f} s")
        time.sleep(0.25)
    state = state_dir / STATE_FILE if state_dir else None
    if state:
        try:
            state.write_text(json.dumps({"url": root + "/v1", "pid": os.getpid(), "model": name}))
        except OSError:
            state = None  # a read-only models folder: served, but other docqa processes will not find it
    try:
        if on_ready:
            on_ready(root + "/v1")
        while not stop and (parent is None or os.getppid() == parent):
            time.sleep(0.5)
    finally:
        if state:
            state.unlink(missing_ok=True)
        del server


def _params(xllamacpp: Any, path: Path, name: str, port: int, ctx: int, threads: int) -> Any:
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.model_alias = {name}
    params.hostnames = [HOST]  # loopback only
    params.port = port
    params.use_jinja = True  # the model's own chat template
    params.n_ctx = ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.ui = False
    params.offline = True
    return params


def _port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError as exc:
            raise LocalModelError(f"{HOST}:{port} is in use ({exc.strerror}): choose another with --port") from exc


# ---------------------------------------------------------------- a server started on demand

@dataclass(slots=True)
class LocalServing:
    """How to serve the local model from `models_dir`; `command` replaces the xllamacpp child (tests)."""

    models_dir: Path
    model: LocalModel = QWEN_1_5B
    ctx: int = 8192
    threads: int = 0  # 0: default_threads()
    command: Command | None = None

    def problem(self) -> str | None:
        """None when the model can be served here, else why not (with the fix)."""
        if self.command is None:
            return status(self.models_dir, self.model).problem
        return verify(self.models_dir / self.model.file, self.model)

    def argv(self, port: int) -> list[str]:
        if self.command is not None:
            return self.command(port)
        return [sys.executable, "-m", "docqa.llm.server", "--model", str(self.models_dir / self.model.file),
                "--name", self.model.name, "--port", str(port), "--ctx", str(self.ctx),
                "--threads", str(self.threads or default_threads()), "--parent", str(os.getpid())]


class ManagedServer:
    """A model server child process: started at once (it loads while docqa retrieves), waited for on
    first use, stopped by `stop()` or at exit."""

    def __init__(self, serving: LocalServing):
        self.serving = serving
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}/v1"
        self._log = tempfile.TemporaryFile()
        self._process = subprocess.Popen(serving.argv(self.port), stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=subprocess.STDOUT)
        self._ready = False
        atexit.register(self.stop)

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not self._ready:
            if self._process.poll() is not None:
                raise LocalModelError(f"the local model server exited with {self._process.returncode}: "
                                      f"{self._tail()} (try 'docqa model serve' to see it start)")
            if time.monotonic() > deadline:
                raise LocalModelError(f"the local model did not start within {timeout:.0f} s: {self._tail()}")
            self._ready = healthy(self.url.removesuffix("/v1"))
            if not self._ready:
                time.sleep(0.2)

    def _tail(self, limit: int = 600) -> str:
        self._log.flush()
        self._log.seek(0)
        text = self._log.read().decode(errors="replace").strip()
        return " ".join(text[-limit:].split()) or "no output"

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if not self._log.closed:
            self._log.close()
        atexit.unregister(self.stop)


class LocalServerModel(OpenAICompatModel):
    """The chat model over a ManagedServer: the first request waits for it; `close` stops it."""

    def __init__(self, server: ManagedServer, **options: Any):
        super().__init__(server.url, server.serving.model.name, **options)
        self.server = server

    def stream(self, messages: list[Message], tools: list[dict] | None = None, **options: Any) -> Iterator[Delta]:
        self.server.wait_ready()
        yield from super().stream(messages, tools, **options)

    def close(self) -> None:
        super().close()
        self.server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the local model on 127.0.0.1 (a docqa child process).")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--name", default=QWEN_1_5B.name)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=default_threads())
    parser.add_argument("--parent", type=int, help="stop when this process is gone")
    args = parser.parse_args(argv)
    try:
        serve(args.model, args.name, args.port, args.ctx, args.threads, parent=args.parent)
    except LocalModelError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
