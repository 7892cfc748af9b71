"""Exact-quality dense search over an in-memory matrix, fast at 100k+ vectors.

A float32 scan of 100k × 512 reads 205 MB per query and is bound by memory bandwidth (~12 ms
here).  Above `INT8_MIN_ROWS` the matrix is also kept as int8 (4× less to read) and scanned with
onnxruntime's integer matrix multiply; the best `RESCORE × top_k` candidates are then re-scored
exactly against the float16 copy, so the returned cosines are exact and the ranking matches the
float32 scan except where int8 rounding pushes a true top hit below the candidate cut.
Below the threshold a plain float32 numpy scan is fast enough and needs no graph.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

INT8_MIN_ROWS = 20_000
RESCORE = 8  # candidates per requested hit taken from the int8 scan (at least 256)


class VectorMatrix:
    """Unit vectors by row; `search` returns (row indexes, cosines) best first."""

    def __init__(self, matrix16: np.ndarray, int8: tuple[np.ndarray, float] | None = None):
        """`int8`: the int8 matrix (transposed, dims x rows) and its scale as `int8()` returned them for
        this same matrix (a packed copy keeps them), so they are not computed again."""
        self.rows, self.dims = matrix16.shape
        self._m16 = matrix16
        self._m32: np.ndarray | None = None
        self._int8 = None
        if self.rows >= INT8_MIN_ROWS:
            self._int8 = _Int8Scan(matrix16, int8)
        else:
            self._m32 = matrix16.astype(np.float32)

    def int8(self) -> tuple[np.ndarray, float] | None:
        """The int8 matrix (dims x rows) and its scale; None below INT8_MIN_ROWS (no int8 scan)."""
        return None if self._int8 is None else (self._int8.q8t, self._int8.scale)

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """Approximate (int8) or exact (float32) scores of every row, for masking and ranking."""
        if self._int8 is not None:
            return self._int8.scores(vector)
        return self._m32 @ vector

    def search(self, vector: np.ndarray, top_k: int, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        vector = vector.astype(np.float32, copy=False)
        scores = self.scores(vector).astype(np.float32, copy=False)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        wanted = min(self.rows, top_k if self._int8 is None else max(top_k * RESCORE, 256))
        best = np.argpartition(scores, self.rows - wanted)[self.rows - wanted :]
        best = best[np.isfinite(scores[best])]
        if self._int8 is not None:  # exact cosines for the candidates
            exact = self._m16[best].astype(np.float32) @ vector
        else:
            exact = scores[best]
        order = np.argsort(-exact, kind="stable")[:top_k]
        return best[order], exact[order]


class _Int8Scan:
    """int8 rows scanned by onnxruntime's MatMulInteger (uint8 query with zero point 128).

    The graph is the shipped one-node `int8_scan.onnx` (built by tools/scan_graph.py); the matrix
    replaces its placeholder weight through `add_initializer`, so it is pre-packed like a constant
    and no model holding the index is ever serialised (nor `onnx` imported: 2.5 s less for the
    first search over 300k vectors)."""

    def __init__(self, matrix16: np.ndarray, given: tuple[np.ndarray, float] | None = None):
        import onnxruntime as ort

        if given is not None:
            q8t, self.scale = given
        else:
            q8t, self.scale = quantise(matrix16)
        self.q8t = q8t
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        opts.intra_op_num_threads = 1  # memory-bound: one thread reads as fast, and leaves a core to BM25
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # one node; shapes are the matrix's
        self._weights = (q8t, ort.OrtValue.ortvalue_from_numpy(q8t))  # onnxruntime reads it: kept alive with the session
        opts.add_initializer("W", self._weights[1])
        graph = resources.files("docqa.store").joinpath("int8_scan.onnx").read_bytes()
        self.session = ort.InferenceSession(graph, opts, providers=["CPUExecutionProvider"])

    def scores(self, vector: np.ndarray) -> np.ndarray:
        qscale = float(np.abs(vector).max() / 127) or 1.0
        q = (np.clip(np.rint(vector / qscale), -127, 127) + 128).astype(np.uint8)[None]
        return self.session.run(None, {"q": q})[0][0].astype(np.float32) * (qscale * self.scale)


def quantise(matrix16: np.ndarray, scale: float | None = None) -> tuple[np.ndarray, float]:
    """The int8 matrix, transposed (the layout MatMulInteger wants, filled block by block), and its
    scale (the largest |x| / 127 unless given: rows added to a quantised matrix keep its scale)."""
    rows, dims = matrix16.shape
    scale = scale or _abs_max(matrix16) / 127 or 1.0
    q8t = np.empty((dims, rows), dtype=np.int8)
    block = np.empty((2048, dims), dtype=np.float32)
    for start in range(0, rows, len(block)):
        part = block[: min(len(block), rows - start)]
        np.divide(matrix16[start : start + len(part)], np.float32(scale), out=part, casting="unsafe")
        np.clip(np.rint(part, out=part), -127, 127, out=part)
        q8t[:, start : start + len(part)] = part.astype(np.int8).T
    return q8t, scale


def abs_max(matrix16: np.ndarray) -> float:
    return _abs_max(matrix16)


def _abs_max(matrix16: np.ndarray) -> float:
    """The largest |x| of a float16 matrix, from the bits (numpy's float16 arithmetic is ~20× slower)."""
    if matrix16.size == 0:
        return 0.0
    return float(np.uint16((matrix16.view(np.uint16) & 0x7FFF).max()).view(np.float16))
