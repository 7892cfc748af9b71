"""The bundled model's own tokens, counted without the model: its graph's first node (a SentencePiece tokenizer,
an onnxruntime-extensions op) cut out into a graph of its own and run alone.  The model's time follows its tokens,
not characters (benchmarks/RESULTS.md, "the embedding time by the model's own tokens"): JSON keys, ids and numbers
make more tokens a character than prose.

The tokenizer graph is built from the model file's protobuf wire format (the node, the constants it reads, the
input, one output), so the `onnx` package is not needed; without the model package (or onnxruntime-extensions)
`tokenizer()` is None and the survey counts characters instead.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

BATCH = 256  # texts a tokenizer call takes
_INT64 = 7  # TensorProto.INT64
_lock = threading.Lock()
_session: list[object] = []  # the session once built (an empty list: not tried yet; [None]: unavailable)


def tokenizer():
    """A cached onnxruntime session running only the bundled model's tokenizer (texts -> row splits of their
    tokens), or None when the model or its tokenizer op is not installed."""
    with _lock:
        if not _session:
            _session.append(_build())
        return _session[0]


def count(session, texts: Sequence[str]) -> int:
    """The model's tokens in `texts` (each as the model reads it: one window)."""
    import numpy as np

    total = 0
    for start in range(0, len(texts), BATCH):
        splits = session.run(None, {"inputs": np.array(list(texts[start:start + BATCH]), dtype=object)})[0]
        total += int(splits[-1] - splits[0])
    return total


def _build():
    try:
        import onnxruntime as ort

        from docqa.embed.local import _custom_ops_library, _model_file

        graph = tokenizer_graph(_model_file().read_bytes())
        opts = ort.SessionOptions()
        opts.register_custom_ops_library(_custom_ops_library())
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        return ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001 - no model package, no extensions, another model file: count characters
        return None


# -- the protobuf wire format (ModelProto, GraphProto, NodeProto, TensorProto, ValueInfoProto) ------------------------

def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: memoryview) -> Iterator[tuple[int, int, memoryview]]:
    """(field number, wire type, the field's whole encoding: key and value) of one message."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        wire = key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            size, pos = _varint(data, pos)
            pos += size
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield key >> 3, wire, data[start:pos]


def _payload(field: memoryview) -> memoryview:
    """The value of a length-delimited field's encoding."""
    _, pos = _varint(field, 0)
    _, pos = _varint(field, pos)
    return field[pos:]


def _strings(message: memoryview, number: int) -> list[str]:
    return [bytes(_payload(f)).decode() for n, w, f in _fields(message) if n == number and w == 2]


def _key(number: int, wire: int) -> bytes:
    return _encode_varint(number << 3 | wire)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _message(number: int, body: bytes) -> bytes:
    return _key(number, 2) + _encode_varint(len(body)) + body


def tokenizer_graph(model: bytes) -> bytes:
    """A model of the graph's first node alone (with the constants it reads), its input the model's first input and
    its output the node's second output (the row splits, int64)."""
    data = memoryview(model)
    head = b"".join(bytes(f) for n, _, f in _fields(data) if n in (1, 8))  # ir_version, opset imports
    graph = next(_payload(f) for n, _, f in _fields(data) if n == 7)
    node = next(_payload(f) for n, _, f in _fields(graph) if n == 1)
    inputs = set(_strings(node, 1))
    splits = _strings(node, 2)[1]
    kept = [bytes(f) for n, _, f in _fields(graph)
            if n == 5 and set(_strings(_payload(f), 8)) & inputs]  # the initializers it reads (TensorProto.name = 8)
    first_input = next(bytes(f) for n, _, f in _fields(graph) if n == 11)
    output_type = _message(1, _key(1, 0) + _encode_varint(_INT64))  # TypeProto.tensor_type.elem_type
    output = _message(12, _message(1, splits.encode()) + _message(2, output_type))
    body = _message(1, bytes(node)) + _message(2, b"tokenizer") + b"".join(kept) + first_input + output
    return head + _message(7, body)
