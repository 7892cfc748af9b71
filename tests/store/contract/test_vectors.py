"""The VectorStore contract: vectors written with their document, by model and text hash, searched by cosine."""

from __future__ import annotations

import numpy as np
import pytest

from docqa.errors import StoreError
from docqa.store import ChunkFilter, ChunkVectors
from store.backends import chunks, record


def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


AXES = {"x": _unit(1, 0, 0, 0), "y": _unit(0, 1, 0, 0), "z": _unit(0, 0, 1, 0)}


def _with_vectors(stores, doc_id="d1", path="/a.txt", collection="default", hashes=("x", "y"), new=None):
    text, found = chunks([f"chunk {h} of {doc_id}" for h in hashes])
    vectors = ChunkVectors("m", list(hashes), {h: AXES[h] for h in hashes} if new is None else new)
    stores.documents.replace_document(record(doc_id, path, collection), text, found, vectors=vectors)
    return stores.documents.chunk_ids(doc_id)


def test_search_by_cosine_best_first(stores):
    ids = _with_vectors(stores)
    found = stores.vectors.search_vector(_unit(0.2, 1, 0, 0), "m", 2)
    assert [cid for cid, _ in found] == [ids[1], ids[0]]
    assert found[0][1] == pytest.approx(float(_unit(0.2, 1, 0, 0) @ AXES["y"]), abs=1e-3)
    assert stores.vectors.search_vector(AXES["x"], "other", 2) == []


def test_search_filters(stores):
    _with_vectors(stores, "d1", "/one/a.md", "one", ("x",))
    ids = _with_vectors(stores, "d2", "/two/b.txt", "two", ("x",), new={})  # the same text hash: one shared vector
    assert [cid for cid, _ in stores.vectors.search_vector(AXES["x"], "m", 5, ChunkFilter(collection="two"))] == ids
    assert [cid for cid, _ in stores.vectors.search_vector(AXES["x"], "m", 5, ChunkFilter(path_glob="two/*"))] == ids
    assert len(stores.vectors.search_vector(AXES["x"], "m", 5)) == 2


def test_wrong_dimensions_are_a_store_error(stores):
    _with_vectors(stores)
    with pytest.raises(StoreError, match="docqa reindex"):
        stores.vectors.search_vector(np.ones(3, dtype=np.float32), "m", 2)


def test_known_vectors_and_counts(stores):
    _with_vectors(stores)
    assert stores.vectors.known_vectors("m", ["x", "y", "z", "x"]) == {"x", "y"}
    assert stores.vectors.known_vectors("other", ["x"]) == set()
    assert stores.vectors.vector_count("m") == (2, 2) and stores.vectors.vector_count() == (0, 2)


def test_vectors_go_with_their_last_chunk(stores):
    _with_vectors(stores, "d1", hashes=("x",))
    _with_vectors(stores, "d2", "/b.txt", hashes=("x",), new={})
    stores.documents.delete_documents(["d1"])
    assert stores.vectors.known_vectors("m", ["x"]) == {"x"}  # d2 still uses it
    stores.documents.delete_documents(["d2"])
    assert stores.vectors.known_vectors("m", ["x"]) == set()


def test_put_vectors_and_unembedded(stores):
    text, found = chunks(["one text", "another text"])
    stores.documents.replace_document(record("d1", "/a.txt", title="Doc"), text, found,
                                      vectors=ChunkVectors("m", ["x", "y"], {}))
    lacking = stores.vectors.unembedded("m", 10)
    assert sorted(e.text_hash for e in lacking) == ["x", "y"] and {e.title for e in lacking} == {"Doc"}
    assert len(stores.vectors.unembedded("m", 1)) == 1
    stores.vectors.put_vectors("m", {"x": AXES["x"]})
    assert [e.text_hash for e in stores.vectors.unembedded("m", 10)] == ["y"]
    assert stores.vectors.vector_count("m") == (1, 2)
    assert len(stores.vectors.search_vector(AXES["x"], "m", 5)) == 1


def test_missing_vectors_names_the_chunks_written_before_their_vectors(stores):
    text, found = chunks(["one text", "another text", "a third"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found, vectors=ChunkVectors("m", ["x", "y", "z"], {}))
    ids = stores.documents.chunk_ids("d1")
    assert stores.vectors.missing_vectors("m", ids) == set(ids)
    stores.vectors.put_vectors("m", {"x": AXES["x"], "z": AXES["z"]})
    assert stores.vectors.missing_vectors("m", ids) == {ids[1]}
    assert stores.vectors.missing_vectors("other", ids[:1]) == {ids[0]}  # vectors of another model do not count
    assert stores.vectors.missing_vectors("m", []) == set() and stores.vectors.missing_vectors("m", ["nope"]) == set()


def test_vectors_pending_is_remembered_until_cleared(stores):
    assert stores.vectors.vectors_pending() is False
    stores.vectors.set_vectors_pending(True)
    stores.vectors.set_vectors_pending(True)
    assert stores.vectors.vectors_pending() is True
    stores.vectors.set_vectors_pending(False)
    assert stores.vectors.vectors_pending() is False


def test_put_vectors_keeps_no_vector_of_a_text_no_chunk_uses(stores):
    """A document removed while its texts were being embedded leaves no orphaned vector behind."""
    _with_vectors(stores, hashes=("x",))
    stores.vectors.put_vectors("m", {"y": AXES["y"], "z": AXES["z"]})
    assert stores.vectors.known_vectors("m", ["x", "y", "z"]) == {"x"}


def test_fill_hashes_gives_old_chunks_their_hash(stores):
    text, found = chunks(["one text", "another text"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)  # indexed without vectors
    assert stores.vectors.unembedded("m", 10) == []
    assert stores.vectors.fill_hashes(lambda e: "h:" + e.text) == 2
    assert stores.vectors.fill_hashes(lambda e: "h:" + e.text) == 0
    assert sorted(e.text_hash for e in stores.vectors.unembedded("m", 10)) == ["h:another text", "h:one text"]


def test_the_embedder_fingerprint(stores):
    assert stores.vectors.embedder() is None
    _with_vectors(stores)
    stores.vectors.put_vectors("old", {"x": AXES["x"]})
    stores.vectors.set_embedder('{"key": "m"}', "m")
    assert stores.vectors.embedder() == '{"key": "m"}'
    assert stores.vectors.known_vectors("old", ["x"]) == set() and stores.vectors.known_vectors("m", ["x"]) == {"x"}
    stores.vectors.set_embedder(None, None)
    assert stores.vectors.embedder() is None and stores.vectors.vector_count("m") == (0, 2)
