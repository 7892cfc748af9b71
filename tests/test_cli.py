"""The CLI as a user runs it: real subprocesses, real files, the documented --json shapes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
SEARCH_KEYS = {"chunk_id", "document_id", "path", "title", "section", "page", "line_start", "line_end",
               "char_start", "char_end", "score", "text", "snippet", "bm25_rank", "dense_rank", "bm25_score",
               "dense_score", "low_relevance"}
LIST_KEYS = {"document_id", "path", "collection", "type", "chunks", "status", "error", "size", "indexed_at"}


def docqa(kb: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True, env=env, timeout=300)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "kb.db"
    docqa(path, "add", str(SAMPLES))
    return path


@pytest.mark.slow
def test_help_explains_every_command():
    out = subprocess.run([sys.executable, "-m", "docqa", "--help"], capture_output=True, text=True).stdout
    for command in ("add", "watch", "remove", "list", "search", "show", "stats", "reindex"):
        assert command in out
        sub = subprocess.run([sys.executable, "-m", "docqa", command, "--help"], capture_output=True, text=True)
        assert sub.returncode == 0 and "Usage" in sub.stdout and len(sub.stdout) > 200


@pytest.mark.slow
def test_search_json_shape_and_location(kb):
    hits = json.loads(docqa(kb, "search", "rotate API keys", "--json").stdout)
    assert hits and SEARCH_KEYS <= set(hits[0])
    top = hits[0]
    assert Path(top["path"]).name == "operations.md" and "API keys" in top["section"]
    text = Path(top["path"]).read_text(encoding="utf-8")
    assert text[top["char_start"]:top["char_end"]] == top["text"]
    assert "acmectl keys rotate" in "\n".join(text.splitlines()[top["line_start"] - 1: top["line_end"]])


@pytest.mark.slow
def test_search_modes_filters_and_relevance(kb):
    hybrid = json.loads(docqa(kb, "search", "how do I rotate the API keys", "--json").stdout)
    assert hybrid[0]["bm25_rank"] == 1 and hybrid[0]["dense_rank"] is not None
    assert all(0 <= h["score"] <= 1 for h in hybrid)
    dense = json.loads(docqa(kb, "search", "密钥多久轮换一次", "--mode", "dense", "-k", "3", "--json").stdout)
    assert all(h["bm25_rank"] is None and h["dense_rank"] == i for i, h in enumerate(dense, start=1))
    only_code = json.loads(docqa(kb, "search", "retry with backoff", "--type", "code", "--json").stdout)
    assert only_code and {Path(h["path"]).suffix for h in only_code} == {".py"}
    in_faq = json.loads(docqa(kb, "search", "password", "--path", "*/faq.html", "--json").stdout)
    assert {Path(h["path"]).name for h in in_faq} == {"faq.html"}
    off = docqa(kb, "search", "recipe for sourdough bread with rye flour", "-k", "2")
    assert "low relevance" in off.stderr
    assert all(h["low_relevance"] for h in json.loads(docqa(kb, "search", "recipe for sourdough bread with rye flour", "--json").stdout))
    bad = docqa(kb, "search", "x", "--mode", "fuzzy", ok=False)
    assert bad.returncode == 2 and "unknown search mode" in bad.stderr


@pytest.mark.slow
def test_reindex_json(tmp_path):
    path = tmp_path / "kb.db"
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(path), "add", str(SAMPLES / "handbook")],
                          capture_output=True, text=True, env={**os.environ, "DOCQA_EMBED__PROVIDER": "none"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    refused = docqa(path, "search", "API keys", ok=False)  # built without vectors: the default model needs a reindex
    assert refused.returncode == 1 and "docqa reindex" in refused.stderr
    report = json.loads(docqa(path, "reindex", "--json").stdout)
    chunks = json.loads(docqa(path, "stats", "--json").stdout)["chunks"]
    assert report["embedded"] == chunks and report["embedder"].startswith("use-multilingual-v3@")
    assert json.loads(docqa(path, "reindex", "--json").stdout)["embedded"] == 0  # nothing left to do
    assert json.loads(docqa(path, "search", "API keys", "--json").stdout)[0]["dense_rank"] is not None


@pytest.mark.slow
def test_list_json_shape(kb):
    docs = json.loads(docqa(kb, "list", "--json").stdout)
    assert {Path(d["path"]).name for d in docs} >= {"operations.md", "运维手册.md", "retry.py", "faq.html", "service-levels.csv"}
    assert all(LIST_KEYS <= set(d) and d["status"] == "ok" and d["chunks"] > 0 for d in docs)


@pytest.mark.slow
def test_show_chunk_and_document(kb):
    hit = json.loads(docqa(kb, "search", "backoff jitter", "--json").stdout)[0]
    shown = json.loads(docqa(kb, "show", hit["chunk_id"], "--json").stdout)
    assert shown["text"] == hit["text"]
    plain = docqa(kb, "show", hit["chunk_id"]).stdout
    assert "retry.py" in plain and str(hit["line_start"]) in plain
    doc = json.loads(docqa(kb, "show", hit["path"], "--json").stdout)
    assert doc["chunks"] == len(doc["chunk_list"]) and doc["type"] == "code"


@pytest.mark.slow
def test_stats_json(kb):
    stats = json.loads(docqa(kb, "stats", "--json").stdout)
    assert stats["documents"] >= 7 and stats["chunks"] >= stats["documents"] and stats["by_type"]["markdown"] >= 2


@pytest.mark.slow
def test_errors_are_clean(tmp_path, kb):
    proc = docqa(kb, "show", "no-such-chunk", ok=False)
    assert proc.returncode == 1 and "no chunk" in proc.stderr and "Traceback" not in proc.stderr
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 100)
    proc = docqa(bad, "list", ok=False)
    assert proc.returncode == 1 and "not a usable docqa knowledge base" in proc.stderr


@pytest.mark.slow
def test_add_reports_failures_and_exits_1(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.txt").write_text("fine text about herons\n", encoding="utf-8")
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 truncated")
    proc = docqa(tmp_path / "kb.db", "add", str(docs), "--json", ok=False)
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert [Path(p).name for p in report["added"]] == ["ok.txt"]
    assert [Path(f["path"]).name for f in report["failed"]] == ["bad.pdf"] and report["failed"][0]["reason"]


@pytest.mark.slow
def test_add_says_when_its_documents_were_searchable_and_when_their_vectors_were_written(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "herons.md").write_text("# Herons\n\nHerons wade in shallow water.\n", encoding="utf-8")
    last = docqa(tmp_path / "kb.db", "add", str(docs)).stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"searchable in \d+\.\d\d s; vectors for 1 chunks in \d+\.\d\d s", last), last
    again = docqa(tmp_path / "kb.db", "add", str(docs)).stdout
    assert again.startswith("unchanged: 1") and "searchable" not in again and "vectors for" not in again


@pytest.mark.slow
def test_missing_path_fails_clearly(tmp_path):
    proc = docqa(tmp_path / "kb.db", "add", str(tmp_path / "no-such-folder"), ok=False)
    assert proc.returncode == 1 and "no such file or folder" in proc.stderr and not (tmp_path / "kb.db").exists()


@pytest.mark.slow
def test_bad_setting_is_a_config_error(tmp_path):
    env = {**os.environ, "DOCQA_CHUNK__MAX_TOKENS": "lots"}
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(tmp_path / "kb.db"), "list"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "chunk.max_tokens" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_docqa_yml_is_read(tmp_path):
    (tmp_path / "docqa.yml").write_text("chunk: {max_tokens: 20, overlap: 2}\nbogus: 1\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "docqa", "--kb", str(tmp_path / "kb.db"), "list"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "bogus" in proc.stderr
