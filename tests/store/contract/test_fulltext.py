"""The FullText contract: BM25 over the chunks written by replace_document, scoped, escaped, boosted."""

from __future__ import annotations

import pytest

from docqa.retrieve import parse_query
from docqa.store import ChunkFilter
from store.backends import chunks, record


def test_replace_keeps_no_stale_entries(stores):
    text, found = chunks(["the quick brown fox", "jumps over the lazy dog"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)
    text2, found2 = chunks(["an entirely new sentence"])
    stores.documents.replace_document(record("d1", "/a.txt", content_hash="h2"), text2, found2)
    assert stores.fulltext.search_text(parse_query("fox"), 10) == []
    assert len(stores.fulltext.search_text(parse_query("entirely"), 10)) == 1


def test_deleted_documents_are_not_found(stores):
    text, found = chunks(["alpha beta", "gamma delta"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)
    stores.documents.delete_documents(["d1"])
    assert stores.fulltext.search_text(parse_query("gamma"), 10) == []


def test_search_is_collection_scoped(stores):
    text, found = chunks(["shared word zebra"])
    stores.documents.replace_document(record("d1", "/a.txt", "one"), text, found)
    stores.documents.replace_document(record("d2", "/b.txt", "two"), text, found[:])
    ids_one = stores.fulltext.search_text(parse_query("zebra"), 10, ChunkFilter(collection="one"))
    assert [stores.documents.get_hits([i])[0].collection for i, _ in ids_one] == ["one"]
    assert len(stores.fulltext.search_text(parse_query("zebra"), 10)) == 2


def test_search_filters_by_path_and_type(stores):
    text, found = chunks(["shared word zebra"])
    stores.documents.replace_document(record("d1", "/docs/a.md"), text, found)
    stores.documents.replace_document(record("d2", "/src/b.txt"), text, found[:])
    by_glob = stores.fulltext.search_text(parse_query("zebra"), 10, ChunkFilter(path_glob="docs/*.md"))
    assert [stores.documents.get_hits([i])[0].path for i, _ in by_glob] == ["/docs/a.md"]
    by_type = stores.fulltext.search_text(parse_query("zebra"), 10, ChunkFilter(types=("md",)))
    assert [stores.documents.get_hits([i])[0].path for i, _ in by_type] == ["/docs/a.md"]


@pytest.mark.parametrize(
    ("query", "finds"),
    [('"', False), ("'", False), ("AND", True), ("OR NOT", True), ("a*", True), ("(unbalanced", True), ("col:value", True),
     ("^start", True), ("NEAR(a b)", True), ("-minus", True), ("\\", False), ("{x}", True), ("田中 AND", True),
     ("\x00", False)],
)
def test_no_query_raises_syntax_errors(stores, query, finds):
    """FTS5 syntax in a query is taken as words: each query whose words are in the text finds it (a query
    swallowed by the escaping would find nothing), and one without words finds nothing."""
    text, found = chunks(["some text AND more text with col value and NEAR words, or not: a start, unbalanced minus x 田中"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)
    hits = stores.fulltext.search_text(parse_query(query), 5)  # must not raise
    assert [stores.documents.get_hits([i])[0].path for i, _ in hits] == (["/a.txt"] if finds else [])


def test_phrase_match_ranks_first(stores):
    text, found = chunks([
        "rotate keys often; the api is stable and the keys are many keys keys",
        "to rotate the api keys run the command",
    ])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)
    best = stores.fulltext.search_text(parse_query("rotate the API keys", phrase_boost=3.0), 2)
    assert stores.documents.get_hits([best[0][0]])[0].text.startswith("to rotate")


def test_chinese_is_segmented(stores):
    text, found = chunks(["每天凌晨进行一次全量备份，备份保留三十五天。", "监控系统负责告警。"])
    stores.documents.replace_document(record("d1", "/zh.txt"), text, found)
    hits = stores.fulltext.search_text(parse_query("备份保留多久"), 5)
    assert hits and stores.documents.get_hits([hits[0][0]])[0].text.startswith("每天")


def test_boosts_do_not_depend_on_top_k(stores):
    """Keywords put query words side by side in every chunk; only the text's own match may win."""
    text, found = chunks(["the database runs in one region", "to rotate the api keys run the command"])
    doc = record("d1", "/a.md")
    doc.keywords = ["rotate", "api", "keys"]
    stores.documents.replace_document(doc, text, found)
    for k in (1, 2, 10):
        best = stores.fulltext.search_text(parse_query("rotate the API keys"), k)[0][0]
        assert stores.documents.get_hits([best])[0].text.startswith("to rotate"), k


def test_term_counts_are_document_frequencies(stores):
    text, found = chunks(["heron and egret", "heron alone", "nothing here"])
    stores.documents.replace_document(record("d1", "/a.txt"), text, found)
    counts, total = stores.fulltext.term_counts(["heron", "egret", "crane", "heron"])
    assert counts == {"heron": 2, "egret": 1, "crane": 0} and total == 3
    # Counted again after this same connection writes (SQLite's data_version sees only other connections).
    text2, found2 = chunks(["heron again", "egret again"])
    stores.documents.replace_document(record("d2", "/b.txt"), text2, found2)
    counts, total = stores.fulltext.term_counts(["heron", "egret"])
    assert counts == {"heron": 3, "egret": 2} and total == 5
    stores.documents.delete_documents(["d1"])
    assert stores.fulltext.term_counts(["heron"]) == ({"heron": 1}, 2)
