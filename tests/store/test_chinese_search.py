"""Chinese retrieval: jieba-segmented BM25 on CMRC 2018 material and on a built-in fixture."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings


@pytest.mark.slow
def test_chinese_words_found_inside_sentences(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "db.md").write_text("# 数据库\n\n每天凌晨两点进行一次全量备份，备份保留三十五天。\n", encoding="utf-8")
    (docs / "alerts.md").write_text("# 告警\n\n严重告警会在五分钟内电话通知值班工程师。\n", encoding="utf-8")
    (docs / "mixed.md").write_text("# Release\n\n发布前需要两个 approval，然后灰度 5% 的机器。\n", encoding="utf-8")
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"))) as kb:
        kb.add([docs])
        assert Path(kb.search("备份保留多久")[0].path).name == "db.md"
        assert Path(kb.search("谁会接到电话通知")[0].path).name == "alerts.md"
        assert Path(kb.search("approval 灰度")[0].path).name == "mixed.md"  # mixed-language query
        assert "**备份**" in kb.search("备份")[0].snippet


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_cmrc2018_retrieval(shared_data, tmp_path):
    root = shared_data / "retrieval" / "cmrc2018-dev"
    corpus = [json.loads(line) for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines()][:300]
    ids = {d["_id"] for d in corpus}
    docs = tmp_path / "docs"
    docs.mkdir()
    for d in corpus:
        (docs / f"{d['_id']}.md").write_text(f"# {d['title']}\n\n{d['text']}\n", encoding="utf-8")
    queries = {q["_id"]: q["text"] for q in map(json.loads, (root / "queries.jsonl").read_text(encoding="utf-8").splitlines())}
    with (root / "qrels" / "test.tsv").open(encoding="utf-8") as fh:
        gold = {r["query-id"]: r["corpus-id"] for r in csv.DictReader(fh, delimiter="\t") if r["corpus-id"] in ids}
    sample = sorted(gold)[:400]
    with KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"))) as kb:
        assert len(kb.add([docs]).added) == len(corpus)
        reciprocal = []
        for qid in sample:
            ranked = list(dict.fromkeys(Path(h.path).stem for h in kb.search(queries[qid], top_k=20)))
            reciprocal.append(1 / (ranked.index(gold[qid]) + 1) if gold[qid] in ranked else 0.0)
    mrr = sum(reciprocal) / len(reciprocal)
    assert mrr >= 0.9, f"MRR@20 {mrr:.3f} on {len(sample)} CMRC queries"
