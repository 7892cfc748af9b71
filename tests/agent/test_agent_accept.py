"""The agent under the acceptance rule, and `auto`'s choice: a model that does not call tools
reliably (a small one) never gets the agent; a confused or chatty agent's answer is not published."""

from __future__ import annotations

import pytest

from docqa.kb import KnowledgeBase
from docqa.llm.capability import is_small, parameters
from docqa.run.life import choose_mode
from docqa.settings import Settings
from docqa.testing import ScriptedChat


OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.
"""
EXPLORE = "Compare the backup schedules across all documents."


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def make(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    made = []

    def factory(server: ScriptedChat, name: str = "scripted", tool_calling: str = "auto", **agent) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), agent={"check": False, **agent},
                            llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "timeout": 3,
                                 "tool_calling": tool_calling})
        server.name = name  # the name tells the model's size (docqa.llm.capability)
        kb = KnowledgeBase(settings, embedder=embedder, chat_model=server)
        if not made:
            kb.add([tmp_path / "docs"])
        made.append(kb)
        return kb

    yield factory
    for kb in made:
        kb.close()


def test_a_chatty_final_answer_gives_the_extractive_answer_over_the_evidence(make):
    chatter = 'The query "retention" did not match any lines in the documents. I\'ll try a shorter pattern.'
    with ScriptedChat([call("search_docs", query="backups kept"), call("answer", text=chatter)]) as server:
        result = make(server).ask("How long are backups kept?", mode="agent")
    assert result.mode == "extractive" and "35 days" in result.answer and "query" not in result.answer
    assert result.retrieval.acceptance.outcome == "extractive"


def test_an_agent_answer_the_evidence_does_not_bear_out_is_not_published(make):
    made_up = "Backups are kept for 35 days [1]. They are encrypted with AES-512 [1]. They go to 4 regions [1]."
    with ScriptedChat([call("search_docs", query="backups kept"), call("answer", text=made_up)]) as server:
        result = make(server).ask("How long are backups kept?", mode="agent")
    assert result.mode == "extractive" and "AES" not in result.answer and "35 days" in result.answer


def test_a_confused_agent_falls_back_to_the_pipeline_not_its_last_message(make):
    same = call("search_docs", query="backups")
    with ScriptedChat([same, same, same, {"text": "Backups are kept for 35 days [1]."}]) as server:
        result = make(server).ask("How long are backups kept?", mode="agent")
        last = server.requests[-1]
    assert len(server.requests) == 4 and "tools" not in last
    assert result.status == "FALLBACK" and result.answer == "Backups are kept for 35 days [1]."
    assert any("a repeated call" in n for n in result.notes)


def test_an_agent_that_gathered_nothing_falls_back_to_a_search(make):
    with ScriptedChat([{"text": '{"name": "search_docs", "arguments": '}] * 2
                        + [{"text": "Backups are kept for 35 days [1]."}]) as server:
        result = make(server, max_steps=2).ask("How long are backups kept?", mode="agent")
    assert result.status == "FALLBACK" and "35 days" in result.answer and result.citations


@pytest.mark.parametrize("name, tool_calling, expected", [
    ("qwen2.5-coder-1.5b", "auto", "pipeline"),  # small: it writes tool calls as text (measured)
    ("Qwen2.5-3B-Instruct", "auto", "pipeline"),
    ("qwen2.5:14b-instruct", "auto", "agent"),
    ("gpt-4o-mini", "auto", "agent"),  # the name does not say: taken to be large
    ("qwen2.5-coder-1.5b", "reliable", "agent"),  # declared
    ("gpt-4o-mini", "unreliable", "pipeline"),
])
def test_auto_gives_the_agent_only_to_a_model_that_calls_tools_reliably(make, name, tool_calling, expected):
    with ScriptedChat([]) as server:
        kb = make(server, name=name, tool_calling=tool_calling)
        assert choose_mode(EXPLORE, "auto", kb.models.chat.model) == expected
        assert choose_mode("How long are backups kept?", "auto", kb.models.chat.model) == "pipeline"


def test_model_sizes_from_names():
    assert parameters("qwen2.5-coder-1.5b") == 1.5e9 and parameters("llama3.2:3b") == 3e9
    assert parameters("Qwen2.5-7B-Instruct") == 7e9 and parameters("gpt-4o-mini") is None
    assert is_small("qwen2.5-coder-1.5b") and not is_small("qwen2.5:7b-instruct") and not is_small("deepseek-chat")


def test_a_small_model_gets_fewer_shorter_sources(make):
    with ScriptedChat([{"text": "Backups are kept for 35 days [1]."}]) as server:
        make(server, name="qwen2.5-coder-1.5b").ask("How long are backups kept?", mode="pipeline", check=False)
        prompt = server.requests[0]["messages"][-1]["content"]
    assert "[1]" in prompt and "[4]" not in prompt and "35 days" in prompt
