"""The `real_llm` fixture: a small real chat model served over OpenAI-compatible HTTP on loopback.

It runs `tools/local_llm.py serve` (Qwen2.5-Coder-1.5B-Instruct Q4_K_M through xllamacpp) once per
test session and yields its base URL (`http://127.0.0.1:PORT/v1`).  When the model or xllamacpp is
not installed the test is skipped with the reason and the command that fixes it
(`python tools/local_llm.py install`).  Tests that use it carry `@pytest.mark.real_llm`.

DOCQA_REAL_LLM_THREADS sets the server's threads (default 1).  On a 2-core machine one thread is
the robust choice: 2 threads make ~27 tok/s on an idle machine but collapse to 1-3 tok/s as soon
as anything else is busy (llama.cpp's threads wait on each other), while 1 thread keeps 11-18 tok/s.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "local_llm.py"
START_TIMEOUT = 120.0


def local_llm() -> ModuleType:
    """tools/local_llm.py as a module (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("docqa_tools_local_llm", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):  # refused while starting; 503 while the model loads
        return False


def _tail(log, limit: int = 3000) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode(errors="replace")[-limit:]


@pytest.fixture(scope="session")
def real_llm() -> Iterator[str]:
    """Base URL (…/v1) of the local model, served for the whole session; skips when not installed."""
    tool = local_llm()
    reason = tool.is_installed()
    if reason:
        pytest.skip(f"real local model unavailable: {reason}")
    port = _free_port()
    threads = os.environ.get("DOCQA_REAL_LLM_THREADS", "1")
    command = [sys.executable, str(TOOL), "serve", "--port", str(port), "--ctx", "4096", "--threads", threads]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not _answers(f"http://127.0.0.1:{port}/health"):
                if process.poll() is not None:
                    pytest.fail(f"{' '.join(command)} exited with {process.returncode}:\n{_tail(log)}")
                if time.monotonic() > deadline:
                    pytest.fail(f"the local model did not answer /health within {START_TIMEOUT:.0f} s:\n{_tail(log)}")
                time.sleep(0.25)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
