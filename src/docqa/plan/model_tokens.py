"""The bundled model's own tokens, counted without the model: its graph's first node (a SentencePiece tokenizer,
an onnxruntime-extensions op) cut out into a graph of its own and run alone.  The model's time follows its tokens,
not characters (benchmarks/RESULTS.md, "the embedding time by the model's own tokens"): JSON keys, ids and numbers
make more tokens a character than prose.

The tokenizer graph is cut with the `onnx` package (a core dependency) from the checked model file, once: it is kept
(2.5 MB, its sha256 beside it) in the folder of the model's rewritten graph, so later surveys neither import `onnx`
(0.55 CPU-s) nor parse the 72 MB model (0.14 CPU-s, ~60 MB).  Without the model package, onnxruntime-extensions or
`onnx`, `tokenizer()` is None and the survey counts characters instead.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

BATCH = 256  # texts a tokenizer call takes
VERSION = 1  # another cut: another cache file
_lock = threading.Lock()
_session: list[object] = []  # the session once built (an empty list: not tried yet; [None]: unavailable)


def tokenizer(cache: Path | None = None):
    """A cached onnxruntime session running only the bundled model's tokenizer (texts -> row splits of their
    tokens), or None when the model or its tokenizer op is not installed; `cache`: where the cut graph is kept
    (default: the embedder's graph cache)."""
    with _lock:
        if not _session:
            _session.append(_build(cache))
        return _session[0]


def count(session, texts: Sequence[str]) -> int:
    """The model's tokens in `texts` (each as the model reads it: one window)."""
    import numpy as np

    total = 0
    for start in range(0, len(texts), BATCH):
        splits = session.run(None, {"inputs": np.array(list(texts[start:start + BATCH]), dtype=object)})[0]
        total += int(splits[-1] - splits[0])
    return total


def _build(cache: Path | None):
    try:
        import onnxruntime as ort

        from docqa.embed.local import _custom_ops_library, default_graph_cache

        graph = cached_graph(cache or default_graph_cache())
        opts = ort.SessionOptions()
        opts.register_custom_ops_library(_custom_ops_library())
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        return ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - no model package, no extensions, no onnx, another model file: count characters
        return None


def cached_graph(folder: Path) -> bytes:
    """The tokenizer graph kept in `folder` (its file checked against the sha256 beside it), cut from the model and
    written there when missing or damaged; cut and not kept when the folder is not writable."""
    from docqa.embed.local import USE_SHA256, _model_file, _write_atomically

    _model_file()  # the model installed (else MissingExtraError): the kept graph is its tokenizer
    path = folder / f"use-{USE_SHA256[:16]}-tokenizer-v{VERSION}.onnx"
    digest = path.with_suffix(".sha256")
    if path.is_file() and digest.is_file():
        graph = path.read_bytes()
        if hashlib.sha256(graph).hexdigest() == digest.read_text().strip():
            return graph
    graph = tokenizer_graph()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, lambda tmp: tmp.write_bytes(graph))
        _write_atomically(digest, lambda tmp: tmp.write_text(hashlib.sha256(graph).hexdigest() + "\n"))
    except OSError as exc:  # a read-only cache, a full disk: cut again next time
        log.info("the tokenizer graph cannot be kept in %s: %s", folder, exc)
    return graph


def tokenizer_graph() -> bytes:
    """A model of the bundled model's first node alone (with the constants it reads), its input the model's input and
    its output the node's second output (the row splits, int64), serialized."""
    import onnx
    from onnx import TensorProto, helper

    from docqa.embed.local import _check, _model_file, _sha256

    source = _model_file()
    _check(source, _sha256(source))
    model = onnx.load(str(source))
    node = model.graph.node[0]
    if node.op_type != "SentencepieceTokenizer":
        raise ValueError(f"{source}: the first node is {node.op_type}, not the tokenizer")
    constants = [i for i in model.graph.initializer if i.name in node.input]
    splits = helper.make_tensor_value_info(node.output[1], TensorProto.INT64, None)
    graph = helper.make_graph([node], "tokenizer", [model.graph.input[0]], [splits], constants)
    cut = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    return cut.SerializeToString()
