"""The fakes shipped in docqa.testing: a deterministic embedder and a scripted chat model.

The fast tier's unit tests stand on them, so they are checked here against the interfaces they
stand in for: the embedder through the settings and the index's fingerprint check, the chat model
through the same deltas and results an OpenAI-compatible server gives.
"""

from __future__ import annotations

import numpy as np
import pytest

from docqa.embed import make_embedder
from docqa.errors import EmbedderMismatchError, LLMError
from docqa.kb import KnowledgeBase
from docqa.llm import Message
from docqa.settings import Settings
from docqa.testing import HashEmbedder, ScriptedChat, hash_tokens


def test_hash_vectors_are_unit_length_deterministic_and_closer_for_shared_words():
    texts = ["Backups are kept for 35 days.", "How long are backups kept?", "API keys rotate every 90 days.", ""]
    first, second = HashEmbedder().embed_batch(texts), HashEmbedder().embed_batch(texts)
    assert first.shape == (4, 256) and first.dtype == np.float32
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first[:3], axis=1), 1.0) and not first[3].any()
    query = HashEmbedder().embed_query("backups kept")
    assert query @ first[0] > query @ first[2] and query @ first[1] > query @ first[2]


def test_hash_tokens_split_words_and_cjk_runs():
    assert hash_tokens("Backup_Policy v2") == ["backup", "policy", "v2"]
    assert hash_tokens("数据库 backups") == ["数", "据", "库", "数据", "据库", "backups"]


def test_the_hash_embedder_is_chosen_by_name_and_recorded_like_any_model(tmp_path):
    assert isinstance(make_embedder("hash"), HashEmbedder)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text("# Ops\n\nBackups are kept for 35 days.\n", encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "hash"}, llm={"provider": "none"})
    with KnowledgeBase(settings) as kb:
        kb.add([tmp_path / "docs"])
        assert kb.status.summary()["embedder"]["key"] == "hash@1/256/r1"
        hit = kb.search("how long are backups kept")[0]
        assert "Backups are kept" in hit.text and hit.dense_rank == 1
    with KnowledgeBase(settings, embedder=HashEmbedder(dimensions=64)) as kb, pytest.raises(EmbedderMismatchError):
        kb.search("backups", mode="hybrid")  # another model's vectors: refused, never mixed


def test_scripted_chat_plays_back_its_queue_and_records_the_calls():
    chat = ScriptedChat(["The database is backed up every 6 hours [1]."])
    chat.enqueue({"tool_calls": [{"name": "search_docs", "arguments": {"query": "backups"}}], "usage": (40, 3)},
                 LLMError("server down"))
    first = chat.complete([Message("system", "Be brief."), Message("user", "How often?")], max_tokens=50)
    assert first.text == "The database is backed up every 6 hours [1]." and first.finish_reason == "stop"
    tools = [{"type": "function", "function": {"name": "search_docs", "parameters": {}}}]
    second = chat.complete([Message("user", "again")], tools=tools)
    assert [(c.name, c.arguments) for c in second.tool_calls] == [("search_docs", '{"query": "backups"}')]
    assert second.finish_reason == "tool_calls" and second.usage.total_tokens == 43
    with pytest.raises(LLMError, match="server down"):
        chat.complete([Message("user", "third")])
    assert chat.complete([Message("user", "more")]).text == "(script exhausted)"
    assert [c.prompt for c in chat.calls] == ["Be brief.\nHow often?", "again", "third", "more"]
    assert chat.calls[1].tool_names == ["search_docs"] and chat.requests[0]["max_tokens"] == 50
    assert chat.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_scripted_chat_streams_in_pieces_and_answers_from_a_function():
    chat = ScriptedChat([lambda body: f"you said {body['messages'][-1]['content']}", {"text": "cut", "finish_reason": "length"}],
                        supports_tools=False)
    pieces = [d.text for d in chat.stream([Message("user", "a long enough question")]) if d.text]
    assert len(pieces) > 1 and "".join(pieces) == "you said a long enough question"
    cut = chat.complete([Message("user", "x")], tools=[{"type": "function", "function": {"name": "t"}}])
    assert cut.truncated and chat.calls[1].tools is None  # a model without tools is sent none
