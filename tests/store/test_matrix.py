"""The dense scan: int8 prefilter + exact rescoring must return what an exact float32 scan does."""

from __future__ import annotations

import numpy as np

from docqa.store.matrix import INT8_MIN_ROWS, VectorMatrix


def _unit(rng, n, d=64):
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_int8_scan_matches_the_exact_ranking():
    rng = np.random.default_rng(7)
    m16 = _unit(rng, INT8_MIN_ROWS + 5000).astype(np.float16)
    exact = m16.astype(np.float32)
    matrix = VectorMatrix(m16)
    assert matrix._int8 is not None  # the large path is the one under test
    for i in range(25):
        q = exact[i * 100] + 0.5 * _unit(rng, 1)[0]
        q /= np.linalg.norm(q)
        rows, scores = matrix.search(q, 10)
        truth = np.argsort(-(exact @ q))[:10]
        assert list(rows) == list(truth)
        assert np.allclose(scores, (exact @ q)[truth], atol=1e-5)  # cosines are exact, not int8


def test_mask_and_small_matrices():
    rng = np.random.default_rng(3)
    for n in (50, INT8_MIN_ROWS + 10):
        m16 = _unit(rng, n).astype(np.float16)
        matrix = VectorMatrix(m16)
        q = m16[7].astype(np.float32)
        rows, scores = matrix.search(q, 5)
        assert rows[0] == 7 and abs(scores[0] - 1.0) < 1e-2
        mask = np.zeros(n, dtype=bool)
        mask[[3, 9, 11]] = True
        rows, _ = matrix.search(q, 5, mask)
        assert sorted(rows) == [3, 9, 11]  # only allowed rows, and no more than exist
    empty = VectorMatrix(np.zeros((0, 64), dtype=np.float16))
    assert empty.rows == 0
