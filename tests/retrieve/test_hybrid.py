"""Hybrid retrieval end to end: real files, real SQLite, the bundled multilingual model."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

DOCS = {
    "en/backup.md": "# Database backups\n\nA full backup of the PostgreSQL cluster is taken every night at 02:00 UTC "
                    "and kept for 35 days. Restores are rehearsed on the first Monday of each month.\n",
    "en/oncall.md": "# On-call rota\n\nThe on-call engineer carries the pager for one week and must acknowledge an "
                    "alert within five minutes, day or night.\n",
    "en/notes.txt": "Tomatoes need full sun, deep watering twice a week and a stake once the plants are knee high.\n",
    "zh/leave.md": "# 请假制度\n\n员工每年享有十五天带薪年假，病假需要提供医院证明，请假须提前三天在系统中提交申请。\n",
    "zh/travel.md": "# 差旅报销\n\n出差的火车票和机票凭发票报销，住宿标准为每晚不超过五百元，餐补每天一百元。\n",
}


def build(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def kb(tmp_path, local_embedder):
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db")), embedder=local_embedder) as base:
        report = base.add([build(tmp_path / "docs", DOCS)])
        assert len(report.added) == len(DOCS) and not report.failed
        yield base


def names(hits) -> list[str]:
    return [Path(h.path).name for h in hits]


def test_dense_finds_a_paraphrase_that_shares_no_word(kb):
    query = "how long do we retain copies of the data store?"
    assert names(kb.search(query, mode="dense"))[0] == "backup.md"
    assert names(kb.search(query))[0] == "backup.md"


@pytest.mark.parametrize("query, expected", [
    ("数据库多久备份一次？", "backup.md"),           # Chinese question, English document
    ("谁负责夜间告警？", "oncall.md"),
    ("how many days of paid annual leave do employees get?", "leave.md"),  # English question, Chinese document
    ("what is the hotel limit per night on business trips?", "travel.md"),
])
def test_cross_lingual_queries(kb, query, expected):
    assert names(kb.search(query, mode="dense"))[0] == expected
    assert names(kb.search(query))[0] == expected


def test_hits_carry_both_ranks_and_readable_scores(kb):
    hits = kb.search("nightly backup of the PostgreSQL cluster", top_k=5)
    assert hits.mode == "hybrid" and len(hits) == 5
    top = hits[0]
    assert Path(top.path).name == "backup.md" and top.bm25_rank == 1 and top.dense_rank == 1
    assert top.bm25_score > 0 and 0 < top.dense_score <= 1
    scores = [h.score for h in hits]
    assert all(0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
    assert any(h.bm25_rank is None for h in hits)  # dense-only hits are listed, without a BM25 rank
    as_json = top.to_dict()
    assert {"bm25_rank", "dense_rank", "bm25_score", "dense_score"} <= set(as_json)


def test_modes_differ_where_they_should(kb):
    assert kb.search("zebra crossing", mode="bm25") == []  # no word in common: BM25 finds nothing
    dense = kb.search("zebra crossing", mode="dense")
    assert len(dense) == len(DOCS) and all(h.bm25_rank is None for h in dense)
    with pytest.raises(Exception, match="unknown search mode"):
        kb.search("x", mode="fuzzy")


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_filters(tmp_path, local_embedder, mode):
    root = build(tmp_path / "docs", {**DOCS, "other/backup-notes.txt": "Backups of the database are kept for 35 days.\n"})
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db")), embedder=local_embedder) as kb:
        kb.add([root / "en", root / "zh"], collection="main")
        kb.add([root / "other"], collection="notes")
        query = "database backup retention days"
        assert set(names(kb.search(query, mode=mode))) >= {"backup.md", "backup-notes.txt"}
        assert "backup-notes.txt" not in names(kb.search(query, collection="main", mode=mode))
        assert names(kb.search(query, collection="notes", mode=mode)) == ["backup-notes.txt"]
        assert set(names(kb.search(query, types=["txt"], mode=mode))) <= {"notes.txt", "backup-notes.txt"}
        assert set(names(kb.search(query, types=["markdown"], mode=mode))) <= {"backup.md", "oncall.md", "leave.md", "travel.md"}
        assert "backup.md" in names(kb.search(query, types=["markdown"], mode=mode))
        in_zh = names(kb.search(query, path_glob="zh/*.md", mode=mode))
        assert set(in_zh) <= {"leave.md", "travel.md"}
        assert names(kb.search(query, path_glob="**/en/backup.md", mode=mode)) == ["backup.md"]
        assert kb.search(query, path_glob="nowhere/*", mode=mode) == []


def test_dense_index_follows_updates_and_deletes(tmp_path, local_embedder):
    root = build(tmp_path / "docs", DOCS)
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db")), embedder=local_embedder) as kb:
        kb.add([root])
        query = "which vegetables need staking and sunshine"
        assert names(kb.search(query, mode="dense"))[0] == "notes.txt"
        (root / "en" / "notes.txt").write_text("Invoices are paid within thirty days of receipt.\n", encoding="utf-8")
        kb.add([root])
        assert names(kb.search(query, mode="dense"))[0] != "notes.txt"
        assert names(kb.search("when are invoices paid", mode="dense"))[0] == "notes.txt"
        (root / "en" / "notes.txt").unlink()
        kb.add([root])
        assert "notes.txt" not in names(kb.search("when are invoices paid", mode="dense"))
        stats = kb.status.stats()
        assert stats["vectors"] == stats["chunks"]  # no vector outlives its chunk


def test_low_relevance_flags_questions_the_documents_do_not_answer(kb):
    for query in ("How long are database backups kept?", "员工每年有几天年假？", "数据库多久备份一次？"):
        result = kb.search(query)
        assert not result.low_relevance and result[0].score >= 0.5, (query, result[0].score)
    for query in ("recipe for sourdough bread with rye flour", "如何训练一只猫使用马桶"):
        result = kb.search(query)
        assert result.low_relevance and result[0].score < 0.5, (query, result[0].score)
    assert kb.search("recipe for sourdough bread", mode="bm25").low_relevance  # no hit at all


@pytest.mark.parametrize("threshold, expected", [(0.0, False), (0.99, True)])
def test_threshold_is_a_setting(tmp_path, local_embedder, threshold, expected):
    settings = Settings(kb=str(tmp_path / "kb.db"), search={"relevance_threshold": threshold})
    with KnowledgeBase(settings, embedder=local_embedder) as kb:
        kb.add([build(tmp_path / "docs", DOCS)])
        result = kb.search("How long are database backups kept?")
        assert result.low_relevance is expected and result.threshold == threshold
        assert result.to_dict()["low_relevance"] is expected


def test_convex_weight_comes_from_the_model_unless_set(tmp_path, local_embedder):
    with KnowledgeBase(Settings(kb=str(tmp_path / "a.db")), embedder=local_embedder) as kb:
        assert kb.models.retriever.dense_weight == local_embedder.fusion_weight == 0.3
    with KnowledgeBase(Settings(kb=str(tmp_path / "b.db"), search={"dense_weight": 0.6}), embedder=local_embedder) as kb:
        assert kb.models.retriever.dense_weight == 0.6


def test_searches_at_once_on_one_knowledge_base_finish_and_agree(tmp_path, local_embedder):
    """The model's query embedding and the stored vectors' load run on the retriever's two threads:
    many searches at once on one knowledge base (its first search among them) must neither wait on
    each other forever nor see a half-loaded matrix."""
    from concurrent.futures import ThreadPoolExecutor

    queries = ["how long do we retain copies of the data store?", "数据库多久备份一次？", "who carries the pager?",
               "what is the hotel limit per night on business trips?"] * 3
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db")), embedder=local_embedder) as base:
        base.add([build(tmp_path / "docs", DOCS)])
        with ThreadPoolExecutor(max_workers=6) as pool:
            at_once = list(pool.map(lambda q: [(h.chunk_id, h.score) for h in base.search(q)], queries, timeout=120))
        one_by_one = [[(h.chunk_id, h.score) for h in base.search(q)] for q in queries]
    assert at_once == one_by_one


def test_connections_to_one_file_share_its_vectors_and_see_each_others_writes(tmp_path, local_embedder):
    """A server's worker threads each open the file: the matrix is loaded once and held once, and a
    write through any connection makes every one of them search the new vectors."""
    settings = Settings(kb=str(tmp_path / "kb.db"))
    query = "how long do we retain copies of the data store?"
    with KnowledgeBase(settings, embedder=local_embedder) as writer, \
            KnowledgeBase(settings, embedder=local_embedder) as reader:
        writer.add([build(tmp_path / "docs", DOCS)])
        assert names(reader.search(query, mode="dense"))[0] == "backup.md"
        assert names(writer.search(query, mode="dense"))[0] == "backup.md"
        assert writer.store.vectors._cache is reader.store.vectors._cache  # one matrix
        (tmp_path / "docs" / "en" / "backup.md").unlink()
        writer.add([tmp_path / "docs"])
        assert "backup.md" not in names(reader.search(query, mode="dense"))
        assert "backup.md" not in names(writer.search(query, mode="dense"))
        assert writer.store.vectors._cache is reader.store.vectors._cache


def test_a_file_replaced_at_the_same_path_is_searched_afresh(tmp_path, local_embedder):
    """The shared vectors are keyed by the file's path and its random generation token: a new
    knowledge base at the path of one that was searched in this process never gets the old matrix."""
    db = tmp_path / "kb.db"
    query = "how long do we retain copies of the data store?"
    with KnowledgeBase(Settings(kb=str(db)), embedder=local_embedder) as first:
        first.add([build(tmp_path / "one", {"en/backup.md": DOCS["en/backup.md"]})])
        assert names(first.search(query, mode="dense")) == ["backup.md"]
        for leftover in tmp_path.glob("kb.db*"):
            leftover.unlink()
        with KnowledgeBase(Settings(kb=str(db)), embedder=local_embedder) as second, \
                KnowledgeBase(Settings(kb=str(tmp_path / "elsewhere.db")), embedder=local_embedder) as control:
            for base in (second, control):
                base.add([build(tmp_path / "two", {"en/notes.txt": DOCS["en/notes.txt"]})])
            hits, truth = second.search(query, mode="dense"), control.search(query, mode="dense")
            assert names(hits) == ["notes.txt"]
            assert hits[0].dense_score == truth[0].dense_score  # the new file's vector, not the old one's


def test_warm_loads_the_vectors_a_first_search_needs(tmp_path, local_embedder):
    settings = Settings(kb=str(tmp_path / "kb.db"))
    with KnowledgeBase(settings, embedder=local_embedder) as writer:
        writer.add([build(tmp_path / "docs", DOCS)])
    with KnowledgeBase(settings, embedder=local_embedder) as server:
        assert server.store.vectors._cache is None
        server.models.warm()
        warmed = server.store.vectors._cache
        assert warmed is not None and warmed.matrix.rows == len(DOCS)
        assert names(server.search("how long do we retain copies of the data store?", mode="dense"))[0] == "backup.md"
        assert server.store.vectors._cache is warmed  # the search used what warm loaded
    with KnowledgeBase(Settings(kb=str(tmp_path / "bm25.db"), embed={"provider": "none"}), embedder=None) as plain:
        plain.models.warm()  # no embedder: nothing to load, no error
