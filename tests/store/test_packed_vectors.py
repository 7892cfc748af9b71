"""The packed copy of the vector matrix beside a SQLite knowledge base (store/sqlite/packed.py): a fresh
process reads it instead of every vector row; it stays in step with adds, removals and replacements
(brought up to date by difference), and is rebuilt when it is stale beyond use, truncated or damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from docqa.store import ChunkVectors, open_store
from docqa.store.sqlite import packed
from store.backends import chunks, record

DIMS = 8


def _vectors(seed: int, n: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _add(stores, doc_id: str, seed: int, n: int = 5) -> None:
    """A document of `n` chunks, each with its own vector (text hashes unique to doc and seed)."""
    text, found = chunks([f"chunk {i} of {doc_id} seed {seed}" for i in range(n)])
    hashes = [f"{doc_id}-{seed}-{i}" for i in range(n)]
    vectors = ChunkVectors("m", hashes, dict(zip(hashes, _vectors(seed, n))))
    stores.documents.replace_document(record(doc_id, f"/{doc_id}.txt"), text, found, vectors=vectors)


def _fresh_search(url: str, query: np.ndarray) -> tuple[str | None, list[tuple[str, float]]]:
    """How a newly opened store loads the matrix, and what a search over all of it returns."""
    with open_store(url) as stores:
        hits = stores.vectors.search_vector(query, "m", 100)
        how = stores.vectors.last_load
    packed.wait_writes()
    return how, hits


def _truth(url: str, query: np.ndarray) -> list[tuple[str, float]]:
    """The same search with no packed copy: every vector from SQLite."""
    for path in Path(url).parent.glob("kb.db.vectors-*"):
        path.unlink()
    how, hits = _fresh_search(url, query)
    assert how == "sqlite"
    return hits


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    return [c for c, _ in a] == [c for c, _ in b] and np.allclose([s for _, s in a], [s for _, s in b], atol=1e-6)


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = str(tmp_path / "kb.db")
    with open_store(url) as stores:
        for i in range(4):
            _add(stores, f"d{i}", seed=i)
    return url


QUERY = _vectors(99, 1)[0]


def test_a_fresh_open_reads_the_packed_copy(url: str) -> None:
    how, first = _fresh_search(url, QUERY)
    assert how == "sqlite" and len(first) == 20
    assert [p.name for p in Path(url).parent.glob("kb.db.vectors-*")] == [packed.packed_path(url, "m").name]
    how, again = _fresh_search(url, QUERY)
    assert how == "packed" and _same(again, first)


@pytest.mark.parametrize("change", ["add", "remove", "replace", "remove the last, add another"])
def test_the_copy_stays_in_step_with_writes(url: str, change: str) -> None:
    _fresh_search(url, QUERY)  # the copy, made at this generation
    with open_store(url) as stores:
        if change == "add":
            _add(stores, "d9", seed=9)
        elif change == "remove":
            stores.documents.delete_documents(["d1"])
        elif change == "replace":
            _add(stores, "d2", seed=22)  # the same document, new chunks and vectors
        else:  # the new chunks take the removed ones' rowids: their vectors must still be the new ones
            stores.documents.delete_documents(["d3"])
            _add(stores, "d7", seed=7)
    how, hits = _fresh_search(url, QUERY)
    assert how == "synced"
    assert _same(hits, _truth(url, QUERY))
    how, again = _fresh_search(url, QUERY)
    assert how == "packed" and _same(again, hits)


def test_a_truncated_copy_is_rebuilt(url: str) -> None:
    _, truth = _fresh_search(url, QUERY)
    path = packed.packed_path(url, "m")
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(size - 100)
    how, hits = _fresh_search(url, QUERY)
    assert how == "sqlite" and _same(hits, truth)
    assert path.stat().st_size == size  # written again, whole
    assert _fresh_search(url, QUERY)[0] == "packed"


@pytest.mark.parametrize("damage", ["magic", "header", "rowids"])
def test_a_damaged_copy_is_rebuilt(url: str, damage: str) -> None:
    _, truth = _fresh_search(url, QUERY)
    path = packed.packed_path(url, "m")
    data = bytearray(path.read_bytes())
    at = {"magic": 0, "header": 20, "rowids": data.index(b"}") + 3}[damage]
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    how, hits = _fresh_search(url, QUERY)
    assert how == "sqlite" and _same(hits, truth)
    assert _fresh_search(url, QUERY)[0] == "packed"


def test_a_copy_of_another_model_is_not_used_and_a_new_embedder_drops_it(url: str) -> None:
    _fresh_search(url, QUERY)
    path = packed.packed_path(url, "m")
    path.rename(packed.packed_path(url, "other"))
    path.write_bytes(packed.packed_path(url, "other").read_bytes())  # a copy of "m" under its own name...
    assert packed.read(packed.packed_path(url, "other"), "other") is None  # ...is not one of "other"
    with open_store(url) as stores:
        stores.vectors.set_embedder('{"name": "new"}', "new")
    assert list(Path(url).parent.glob("kb.db.vectors-*")) == []


def test_the_int8_scan_is_kept_with_a_large_copy(tmp_path: Path) -> None:
    from docqa.store.matrix import INT8_MIN_ROWS, VectorMatrix

    rows = INT8_MIN_ROWS + 10
    m16 = _vectors(5, rows).astype(np.float16)
    built = VectorMatrix(m16)
    int8 = built.int8()
    assert int8 is not None
    path = tmp_path / "kb.db.vectors-x"
    hashes = np.array([f"h{i}".encode() for i in range(rows)])
    packed.write(path, "m", "g1", packed.Packed(np.arange(rows, dtype=np.int64), hashes, m16, int8=int8))
    copy = packed.read(path, "m")
    assert copy is not None and copy.token == "g1" and copy.packed.int8 is not None
    assert np.array_equal(copy.packed.int8[0], int8[0]) and copy.packed.int8[1] == int8[1]
    assert np.array_equal(np.asarray(copy.packed.matrix), m16)
    again = VectorMatrix(copy.packed.matrix, copy.packed.int8)
    for query in _vectors(6, 5):
        a, b = built.search(query, 10), again.search(query, 10)
        assert np.array_equal(a[0], b[0]) and np.allclose(a[1], b[1])


def test_rows_added_to_the_int8_matrix_are_what_quantising_it_all_gives() -> None:
    from docqa.store.matrix import quantise

    m16 = _vectors(8, 300).astype(np.float16)
    m16[0, 0] = 1.0  # the largest |x|: the scale, kept by the added rows below
    added = (_vectors(9, 40) * 0.5).astype(np.float16)
    whole = quantise(np.concatenate([m16, added]))
    extended = packed._extend(quantise(m16), added)
    assert extended is not None and extended[1] == whole[1] and np.array_equal(extended[0], whole[0])
    assert packed._extend(quantise(added), m16) is None  # a larger |x| changes the scale: all again


@pytest.mark.slow
@pytest.mark.parametrize("change", ["add", "remove and add"])
def test_a_large_copy_stays_in_step_without_reading_its_rows_again(tmp_path: Path, change: str) -> None:
    """Past INT8_MIN_ROWS the synced load keeps the old rows mapped and cuts and extends the int8 matrix."""
    from docqa.store.matrix import INT8_MIN_ROWS

    url = str(tmp_path / "kb.db")
    per_doc = INT8_MIN_ROWS // 4 + 100
    with open_store(url) as stores:
        for i in range(4):
            _add(stores, f"d{i}", seed=i, n=per_doc)
    _fresh_search(url, QUERY)  # the copy, with its int8 matrix
    assert packed.read(packed.packed_path(url, "m"), "m").packed.int8 is not None
    with open_store(url) as stores:
        if change == "remove and add":
            stores.documents.delete_documents(["d1"])
        _add(stores, "d8", seed=8, n=per_doc)
    how, hits = _fresh_search(url, QUERY)
    assert how == "synced" and len(hits) == 100
    copy = packed.read(packed.packed_path(url, "m"), "m")
    assert copy is not None and copy.packed.int8 is not None  # written again from the kept and added rows
    how, again = _fresh_search(url, QUERY)
    assert how == "packed" and _same(again, hits)
    assert _same(hits, _truth(url, QUERY))
