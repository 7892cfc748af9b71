"""The `real_llm` fixture: a small real chat model served over OpenAI-compatible HTTP on loopback.

It serves the model of `docqa model install` (Qwen2.5-Coder-1.5B-Instruct Q4_K_M through xllamacpp,
`python -m docqa.llm.server`) once per test session and yields its base URL
(`http://127.0.0.1:PORT/v1`).  When the model or xllamacpp is not installed the test is skipped with
the reason and the command that fixes it (`docqa model install`).  Tests that use it carry
`@pytest.mark.real_llm`.  The model is looked for where `docqa model install` put it: the
DOCQA_LLM__MODELS_DIR the test run started with, else docqa's user cache folder.

DOCQA_REAL_LLM_THREADS sets the server's threads (default 1).  On a 2-core machine one thread is
the robust choice: 2 threads make ~27 tok/s on an idle machine but collapse to 1-3 tok/s as soon
as anything else is busy (llama.cpp's threads wait on each other), while 1 thread keeps 11-18 tok/s.
"""

from __future__ import annotations

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

import pytest

from docqa.llm.local import default_models_dir, status

START_TIMEOUT = 120.0
# read at import, before the session fixture points DOCQA_LLM__MODELS_DIR at an empty folder
MODELS_DIR = Path(os.environ["DOCQA_LLM__MODELS_DIR"]) if os.environ.get("DOCQA_LLM__MODELS_DIR") else default_models_dir()


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
    found = status(MODELS_DIR)
    if found.problem:
        pytest.skip(f"real local model unavailable: {found.problem}")
    port = _free_port()
    threads = os.environ.get("DOCQA_REAL_LLM_THREADS", "1")
    command = [sys.executable, "-m", "docqa.llm.server", "--model", str(found.path), "--name", found.model.name,
               "--port", str(port), "--ctx", "4096", "--threads", threads]
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
