"""The dense scan: int8 prefilter + exact rescoring must return what an exact float32 scan does."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from docqa.store.matrix import INT8_MIN_ROWS, VectorMatrix

ROOT = Path(__file__).resolve().parents[2]


def _unit(rng, n, d=64):
    m = rng.standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.mark.slow
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


def test_int8_scores_are_the_exact_integer_product():
    rng = np.random.default_rng(11)
    m16 = _unit(rng, INT8_MIN_ROWS + 3, d=96).astype(np.float16)
    scan = VectorMatrix(m16)._int8
    q = _unit(rng, 1, d=96)[0]
    qscale = float(np.abs(q).max() / 127)
    q8 = np.clip(np.rint(q / qscale), -127, 127).astype(np.int32)
    w8 = np.clip(np.rint(m16.astype(np.float32) / scan.scale), -127, 127).astype(np.int32)
    expected = (w8 @ q8).astype(np.float32) * (qscale * scan.scale)
    assert np.array_equal(scan.scores(q), expected)  # the index's matrix, not the graph's placeholder


@pytest.mark.slow
def test_the_large_scan_never_imports_onnx():
    """onnx costs 0.6-0.8 s to import: the scan's graph ships prebuilt (store/int8_scan.onnx)."""
    code = ("import sys, numpy as np\nfrom docqa.store.matrix import INT8_MIN_ROWS, VectorMatrix\n"
            "m = np.zeros((INT8_MIN_ROWS, 32), dtype=np.float16); m[:, 0] = 1\n"
            "rows, _ = VectorMatrix(m).search(np.eye(32, dtype=np.float32)[0], 3)\n"
            "assert len(rows) == 3, rows\nprint(sorted(k for k in sys.modules if k == 'onnx' or k.startswith('onnx.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_the_shipped_scan_graph_is_the_one_the_tool_builds():
    """src/docqa/store/int8_scan.onnx is generated: `python tools/scan_graph.py` rewrites it."""
    spec = importlib.util.spec_from_file_location("scan_graph", ROOT / "tools" / "scan_graph.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    shipped = resources.files("docqa.store").joinpath("int8_scan.onnx").read_bytes()
    assert shipped == tool.build(), "run: python tools/scan_graph.py"


def test_the_scale_is_the_largest_magnitude():
    from docqa.store.matrix import _abs_max

    m16 = np.array([[0.25, -0.75], [0.5, 0.125]], dtype=np.float16)
    assert _abs_max(m16) == 0.75
    assert _abs_max(-m16) == 0.75
    rng = np.random.default_rng(5)
    big = _unit(rng, 3000).astype(np.float16)
    assert _abs_max(big) == float(np.abs(big.astype(np.float32)).max())
