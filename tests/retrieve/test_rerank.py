"""The rerank stage (search.rerank: llm): a real knowledge base (SQLite, the hash embedder) and
the scripted OpenAI-compatible server on loopback standing in for the chat model."""

from __future__ import annotations

import re
import time

import pytest
from pydantic import ValidationError

from docqa.access import Principal
from docqa.kb import KnowledgeBase
from docqa.llm import OpenAICompatModel
from docqa.retrieve.rerank import UnusableOrderError, parse_graded, parse_listwise
from docqa.settings import Settings
from docqa.settings.lint import lint_config

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

OPS = {
    "backup-schedule.md": "# Backup schedule\n\nThe database backup runs every 6 hours; backups are made by acmectl.\n",
    "backup-retention.md": "# Backup retention\n\nDatabase backups are kept for 35 days, then deleted.\n",
    "backup-restore.md": "# Restoring a backup\n\nTo restore a database backup, run acmectl restore with the backup id.\n",
    "logs.md": "# Logs\n\nApplication logs are kept for 14 days; database logs for 7 days.\n",
}
SECRET = {"vault.md": "# Vault backups\n\nThe vault database backup key is SECRET-KEY-42; backups go to the vault.\n"}
QUERY = "how often is the database backup made"


@pytest.fixture
def make_kb(tmp_path, embedder):
    for collection, files in (("ops", OPS), ("secret", SECRET)):
        folder = tmp_path / collection
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    opened: list[KnowledgeBase] = []

    def make(server: ScriptedServer | None = None, **search) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), search={"rerank": "llm", **search},
                            llm={"provider": "openai" if server else "none", "base_url": server.base_url if server else "",
                                 "timeout": 5, "max_retries": 0})
        model = OpenAICompatModel(server.base_url, "scripted", timeout=5, max_retries=0) if server else None
        kb = KnowledgeBase(settings, embedder=embedder, chat_model=model)
        if not opened:
            kb.add([tmp_path / "ops"], collection="ops")
            kb.add([tmp_path / "secret"], collection="secret")
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()


def passages(body: dict) -> dict[int, str]:
    """The numbered passages of a rerank request: {number: text}."""
    user = body["messages"][-1]["content"]
    return {int(n): text for n, text in re.findall(r"^\[(\d+)\] (.*)$", user, re.M)}


@pytest.mark.slow
def test_the_model_s_order_is_the_order(make_kb):
    def last_then_retention(body: dict) -> dict:  # the model puts the fused last first, then the retention page
        numbered = passages(body)
        retention = next(n for n, text in numbered.items() if "kept for 35 days" in text)
        return {"text": f"{max(numbered)} > {retention}"}

    with ScriptedServer([last_then_retention]) as server:
        kb = make_kb(server)
        fused = kb.search(QUERY, 10, rerank="none")  # the depth the reranker reads (search.rerank_depth 10)
        reranked = kb.search(QUERY, 4)
    assert reranked.rerank["status"] == "reranked" and reranked.rerank["method"] == "llm"
    assert reranked.rerank["candidates"] == len(fused) == len(passages(server.requests[0]))
    retention = next(h for h in fused if h.path.endswith("backup-retention.md"))
    expected = list(dict.fromkeys([fused[-1].chunk_id, retention.chunk_id, *(h.chunk_id for h in fused)]))[:4]
    assert [h.chunk_id for h in reranked] == expected != [h.chunk_id for h in fused[:4]]
    assert fused.rerank is None and "rerank" not in fused.to_dict()
    assert reranked.to_dict()["rerank"]["status"] == "reranked"
    request = server.requests[0]
    assert request["temperature"] == 0.0 and request["max_tokens"] <= 32  # names the best few only


@pytest.mark.slow
def test_garbage_output_keeps_the_fused_order_and_says_so(make_kb):
    with ScriptedServer([{"text": "I am sorry, I cannot rank these documents."}]) as server:
        kb = make_kb(server)
        fused = kb.search(QUERY, 4, rerank="none")
        results = kb.search(QUERY, 4)
    assert [h.chunk_id for h in results] == [h.chunk_id for h in fused]
    assert results.rerank["status"] == "fallback" and "not an order" in results.rerank["reason"]


@pytest.mark.slow
def test_a_slow_model_runs_out_of_time_and_the_fused_order_stays(make_kb):
    with ScriptedServer([{"text": "4 > 3 > 2", "delay": 3}]) as server:
        kb = make_kb(server, rerank_timeout=0.5)
        fused = kb.search(QUERY, 4, rerank="none")
        started = time.monotonic()
        results = kb.search(QUERY, 4)
        elapsed = time.monotonic() - started
    assert elapsed < 2.5, "the budget bounds the wait"
    assert [h.chunk_id for h in results] == [h.chunk_id for h in fused]
    assert results.rerank["status"] == "fallback" and "rerank_timeout (0.5 s)" in results.rerank["reason"]


@pytest.mark.slow
def test_a_failing_model_keeps_the_fused_order(make_kb):
    with ScriptedServer([{"status": 500}]) as server:
        results = make_kb(server).search(QUERY, 4)
    assert results.rerank["status"] == "fallback" and results.rerank["reason"].startswith("the model failed")
    assert len(results) == 4


def test_no_chat_model_means_the_fused_order_with_the_reason(make_kb):
    kb = make_kb(None)
    results = kb.search(QUERY, 3)
    assert [h.chunk_id for h in results] == [h.chunk_id for h in kb.search(QUERY, 3, rerank="none")]
    assert results.rerank["status"] == "fallback" and "no chat model" in results.rerank["reason"]


@pytest.mark.slow
def test_reranking_never_shows_more_than_the_caller_may_see(make_kb):
    def name_everything(body: dict) -> dict:  # the model tries numbers beyond the passages it was shown
        return {"text": " > ".join(str(n) for n in range(12, 0, -1))}

    reader = Principal("reader", ("ops",), "k1", remote=True)
    with ScriptedServer([name_everything, name_everything]) as server:
        kb = make_kb(server)
        scoped = kb.search(QUERY, 10, principal=reader)
        everything = kb.search(QUERY, 10)
    assert scoped.rerank["status"] == "reranked"
    assert {h.collection for h in scoped} == {"ops"} and len(scoped) == len(OPS)
    prompt = server.requests[0]["messages"][-1]["content"]
    assert "SECRET-KEY-42" not in prompt and len(passages(server.requests[0])) == len(OPS)
    assert "secret" in {h.collection for h in everything}  # the owner's search does reach it


@pytest.mark.slow
def test_the_answer_and_its_trace_carry_the_rerank_report(make_kb):
    def rerank_or_answer(body: dict) -> dict:
        if "answer the question best" in body["messages"][-1]["content"]:
            return {"text": "garbage"}
        return {"text": "The database backup runs every 6 hours [1]."}

    with ScriptedServer([rerank_or_answer, rerank_or_answer, rerank_or_answer]) as server:
        kb = make_kb(server)
        events = []
        answer = kb.ask("How often is the database backup made?", on_event=events.append, check=False)
    report = answer.retrieval.rerank
    assert report["status"] == "fallback" and "not an order" in report["reason"]
    trace = kb.log.run(events[0].run_id).trace
    assert any(entry.get("rerank") == report for entry in trace if entry.get("stage") == "retrieving")


def test_settings_accept_none_and_llm_only():
    assert Settings(search={"rerank": "LLM"}).search.rerank == "llm"
    with pytest.raises(ValidationError, match="unknown reranker 'bge-reranker'"):
        Settings(search={"rerank": "bge-reranker"})
    with pytest.raises(ValidationError):
        Settings(search={"rerank_depth": 1})


def test_config_lint_names_a_bad_reranker(tmp_path):
    path = tmp_path / "docqa.yml"
    path.write_text("search:\n  rerank: cross-encoder\n  rerank_timeout: 0\n", encoding="utf-8")
    problems = {p.key: p.message for p in lint_config(path, {})}
    assert "unknown reranker 'cross-encoder'" in problems["search.rerank"]
    assert "search.rerank_timeout" in problems


@pytest.mark.parametrize("reply, n, expected", [
    ("3 > 1 > 2", 3, [2, 0, 1]),
    ("[2] > [2] > [9] > [1]", 3, [1, 0]),  # repeats and invented numbers dropped
    ("Passage 4 is best, then 1.", 5, [3, 0]),
])
def test_parse_listwise(reply, n, expected):
    assert parse_listwise(reply, n) == expected


@pytest.mark.parametrize("reply", ["", "none of them", "0 > 7"])
def test_parse_listwise_refuses_no_order(reply):
    with pytest.raises(UnusableOrderError):
        parse_listwise(reply, 5)


def test_parse_graded_sorts_by_grade_and_keeps_ties_in_fused_order():
    assert parse_graded("1: 1\n2: 3\n3: 0\n4: 3", 4) == [1, 3, 0, 2]
    assert parse_graded("[1] = 2\n[3] = 3", 4) == [2, 0, 1, 3]  # ungraded count as 0
    with pytest.raises(UnusableOrderError):
        parse_graded("1: 3", 4)


@pytest.mark.slow  # two CLI processes
def test_cli_search_rerank(make_kb, tmp_path):
    import os
    import subprocess
    import sys

    make_kb(None).close()  # builds the knowledge base
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    with ScriptedServer([{"text": "2 > 1"}]) as server:
        env.update(DOCQA_LLM__PROVIDER="openai", DOCQA_LLM__BASE_URL=server.base_url, DOCQA_LLM__MAX_RETRIES="0",
                   DOCQA_EMBED__PROVIDER="hash")  # the embedder the knowledge base was built with (make_kb)
        run = [sys.executable, "-m", "docqa", "--kb", str(tmp_path / "kb.db"), "search", QUERY, "-k", "3"]
        reranked = subprocess.run([*run, "--rerank", "llm"], capture_output=True, text=True, env=env, timeout=120)
        bogus = subprocess.run([*run, "--rerank", "cross-encoder"], capture_output=True, text=True, env=env, timeout=120)
    assert reranked.returncode == 0 and "reranked by the chat model" in reranked.stderr, reranked.stderr
    assert len(server.requests) == 1 and "Which 3 passages" in server.requests[0]["messages"][-1]["content"]
    assert bogus.returncode == 2 and "unknown reranker 'cross-encoder'" in bogus.stderr and "Traceback" not in bogus.stderr


@pytest.mark.slow
def test_the_agent_s_search_tool_reranks_and_says_when_it_could_not(make_kb):
    from docqa.agent.tools import Evidence, SearchDocs

    with ScriptedServer([{"text": "3 > 1"}, {"text": "no idea"}]) as server:
        library = make_kb(server).answers.library()
        tool = SearchDocs(library.search, Evidence(), 3)
        first, second = tool.run({"query": QUERY}), tool.run({"query": QUERY})
    assert first.summary.endswith("; reranked") and len(server.requests) == 1 + 1
    assert "not reranked (the model's answer was not an order" in second.summary
