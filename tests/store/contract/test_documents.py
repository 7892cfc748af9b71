"""The DocumentStore contract (with its Catalog reads): documents, chunks, collections, browsing."""

from __future__ import annotations

import pytest

from docqa.errors import NotFoundError
from docqa.retrieve import parse_query
from docqa.store import ChunkFilter, DocumentStore, DocumentWrite
from docqa.types import Chunk
from store.backends import chunks, record


def test_replace_writes_text_and_chunks_in_order(stores):
    docs = stores.documents
    text, found = chunks(["first part", "second part", "third part"])
    docs.replace_document(record("d1", "/a.txt"), text, found, {"pages": 3})
    assert docs.document_text("d1") == text
    ids = docs.chunk_ids("d1")
    hits = docs.get_hits(ids[::-1] + ["unknown"])
    assert [h.text for h in hits] == ["third part", "second part", "first part"]  # in the given order
    assert hits[0].line_start == 5 and hits[0].char_start == text.index("third") and hits[0].score == 0.0
    assert docs.text_heads(ids[:2], chars=5) == {ids[0]: "first", ids[1]: "secon"}
    assert docs.document_record("d1").chunks == 3 and docs.get_hits([]) == [] and docs.text_heads([]) == {}
    assert docs.document_metadata("d1") == {"pages": 3} and docs.document_metadata("unknown") == {}


def test_replace_drops_the_old_chunks(stores):
    docs = stores.documents
    text, found = chunks(["old one", "old two"])
    docs.replace_document(record("d1", "/a.txt"), text, found)
    old = docs.chunk_ids("d1")
    text2, found2 = chunks(["new"])
    docs.replace_document(record("d1", "/a.txt", content_hash="h2"), text2, found2)
    assert docs.get_hits(old) == [] and len(docs.chunk_ids("d1")) == 1 and docs.document_text("d1") == text2


def test_replace_documents_writes_a_group_like_one_by_one(stores):
    """A group replaces each document's older version and is read back as replace_document writes it."""
    docs = stores.documents
    text, found = chunks(["old alpha", "old beta"])
    docs.replace_document(record("d1", "/a.txt"), text, found)
    old = docs.chunk_ids("d1")
    group = [DocumentWrite(record(f"d{i}", f"/{i}.txt", collection="c" if i % 2 else "default", content_hash=f"g{i}"),
                           *chunks([f"group {i} first", f"group {i} second"]), {"n": i}) for i in (1, 2, 3)]
    docs.replace_documents(group)
    assert docs.get_hits(old) == [] and docs.document_text("d1") == group[0].text
    for i in (1, 2, 3):
        assert [h.text for h in docs.get_hits(docs.chunk_ids(f"d{i}"))] == [f"group {i} first", f"group {i} second"]
        assert docs.document_record(f"d{i}").content_hash == f"g{i}" and docs.document_metadata(f"d{i}") == {"n": i}
    assert sorted(docs.collections()) == ["c", "default"]
    docs.replace_documents([])


def test_delete_removes_everything(stores):
    text, found = chunks(["alpha beta", "gamma delta"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)
    ids = stores.documents.chunk_ids("d1")
    assert stores.documents.delete_documents(["d1", "missing"]) == 1
    assert stores.documents.list_documents() == []
    assert stores.documents.get_hits(ids) == []
    with pytest.raises(NotFoundError):
        stores.documents.document_text("d1")
    with pytest.raises(NotFoundError, match="no document"):
        stores.documents.document_record("d1")


def test_failure_keeps_last_good_version(stores):
    text, found = chunks(["good content here"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)
    failed = record("d1", "/a.txt")
    failed.status, failed.error = "error", "corrupt: broken"
    stores.documents.record_failure(failed)
    [doc] = stores.documents.list_documents()
    assert doc.status == "error" and doc.chunks == 1
    assert stores.fulltext.search_text(parse_query("good"), 5)


def test_a_new_file_that_fails_is_listed_with_its_error(stores):
    failed = record("d1", "/bad.pdf")
    failed.status, failed.error = "error", "corrupt: broken"
    stores.documents.record_failure(failed)
    [doc] = stores.documents.list_documents()
    assert (doc.status, doc.error, doc.chunks) == ("error", "corrupt: broken", 0)
    assert stores.documents.collections() == ["default"]


def test_file_states_move_and_touch(stores):
    docs = stores.documents
    text, found = chunks(["moving text"])
    docs.replace_document(record("d1", "/a.txt", title="Moving"), text, found)
    state = docs.file_states("default")["/a.txt"]
    assert (state.size, state.content_hash, state.status, state.title) == (10, "h1", "ok", "Moving")
    docs.touch("d1", 11, 123)
    assert (docs.file_states("default")["/a.txt"].size, docs.file_states("default")["/a.txt"].mtime_ns) == (11, 123)
    docs.move_document("d1", "d2", "/b.txt", 12, 456)
    assert list(docs.file_states("default")) == ["/b.txt"] and docs.file_states("other") == {}
    assert DocumentStore.file_states(docs, "default") == docs.file_states("default")  # a backend's override agrees
    assert docs.document_text("d2") == text and [h.path for h in docs.get_hits(docs.chunk_ids("d2"))] == ["/b.txt"]
    with pytest.raises(NotFoundError):
        docs.document_record("d1")


def test_list_documents_by_collection_and_prefix(stores):
    docs = stores.documents
    for doc_id, path, collection in (("d1", "/docs/a.txt", "one"), ("d2", "/docs-old/b.txt", "one"), ("d3", "/docs/c.txt", "two")):
        docs.replace_document(record(doc_id, path, collection), "x", [])
    # by collection, then path, compared as bytes ("-" sorts before "/"; a server backend needs the C collation)
    assert [d.document_id for d in docs.list_documents()] == ["d2", "d1", "d3"]
    assert [d.document_id for d in docs.list_documents("one")] == ["d2", "d1"]
    assert [d.document_id for d in docs.list_documents(path_prefix="/docs")] == ["d1", "d3"]  # not /docs-old
    assert [d.document_id for d in docs.list_documents("two", path_prefix="/docs/")] == ["d3"]


def test_collections(stores):
    docs = stores.documents
    assert docs.create_collection("empty") is True and docs.create_collection("empty") is False
    docs.replace_document(record("d1", "/a.txt", "full"), "x", [])
    assert docs.collections() == ["empty", "full"] == DocumentStore.collections(docs)  # a backend's override agrees
    assert docs.collection_sizes() == {"empty": 0, "full": 1}
    assert [r.document_id for r in docs.delete_collection("full")] == ["d1"]
    assert docs.collections() == ["empty"] and docs.list_documents() == []
    with pytest.raises(NotFoundError, match="no collection"):
        docs.delete_collection("full")


def test_page_lines(stores):
    text = "page one\npage two\n"
    found = [Chunk(text="page one", char_start=0, char_end=8, ordinal=0, page_start=1, page_end=1, line_start=1, line_end=1),
             Chunk(text="page two", char_start=9, char_end=17, ordinal=1, page_start=2, page_end=2, line_start=2, line_end=2)]
    stores.documents.replace_document(record("d1", "/a.pdf"), text, found)
    assert stores.documents.page_lines("d1") == [(1, 1), (2, 2)]


# -- Catalog: the browsing reads -------------------------------------------------------------
def _browsable(docs):
    for doc_id, path, collection in (("d1", "/kb/b.md", "one"), ("d2", "/kb/a.md", "one"), ("d3", "/kb/sub/c.txt", "two")):
        r = record(doc_id, path, collection, title=f"title {doc_id}")
        docs.replace_document(r, f"text of {doc_id}", [])
    failed = record("d4", "/kb/z.md", "one")
    failed.status, failed.error = "error", "corrupt: broken"
    docs.record_failure(failed)


def test_catalog_pages_by_path(stores):
    _browsable(stores.documents)
    page = stores.documents.catalog()
    assert [r.path for r in page.records] == ["/kb/a.md", "/kb/b.md", "/kb/sub/c.txt"] and (page.total, page.failed) == (3, 1)
    one = stores.documents.catalog("one", offset=1, limit=1)
    assert [r.path for r in one.records] == ["/kb/b.md"] and (one.total, one.failed) == (2, 1)


def test_catalog_select_gets_each_line_once(stores):
    _browsable(stores.documents)
    seen = []

    def select(lines):
        seen.extend(lines)
        return [i for i, line in enumerate(lines) if "sub" in line or "title d2" in line]

    page = stores.documents.catalog(select=select, offset=1)
    assert seen[0] == "/kb/a.md\ntitle d2\nalpha\nsummary" and len(seen) == 3
    assert [r.path for r in page.records] == ["/kb/sub/c.txt"] and page.total == 2


def test_find_documents_by_path_or_suffix(stores):
    _browsable(stores.documents)
    assert [r.document_id for r in stores.documents.find_documents("/kb/a.md")] == ["d2"]
    assert [r.document_id for r in stores.documents.find_documents("sub/c.txt")] == ["d3"]
    assert stores.documents.find_documents("c.tx") == []


def test_document_texts_and_path_bounds(stores):
    _browsable(stores.documents)
    texts = list(stores.documents.document_texts())
    assert [(t[0], t[1], t[3]) for t in texts] == [("d2", "/kb/a.md", "text of d2"), ("d1", "/kb/b.md", "text of d1"),
                                                   ("d3", "/kb/sub/c.txt", "text of d3")]
    assert [t[0] for t in stores.documents.document_texts(ChunkFilter(collection="two"))] == ["d3"]
    assert [t[0] for t in stores.documents.document_texts(ChunkFilter(path_glob="*.md"))] == ["d2", "d1"]
    assert stores.documents.path_bounds() == ("/kb/a.md", "/kb/sub/c.txt")
    assert stores.documents.path_bounds("two") == ("/kb/sub/c.txt", "/kb/sub/c.txt")
    assert stores.documents.path_bounds("none") is None
