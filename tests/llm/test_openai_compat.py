"""The OpenAI-compatible chat model against a scripted server on loopback (real HTTP, real SSE)."""

from __future__ import annotations

import json

import pytest

from docqa.errors import LLMError
from docqa.llm import Message, OpenAICompatModel

from .scripted_server import ScriptedServer

TOOLS = [{"type": "function", "function": {"name": "search_docs", "description": "Search.",
          "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]


def model(server: ScriptedServer, **kw) -> OpenAICompatModel:
    return OpenAICompatModel(server.base_url, "qwen2.5", timeout=kw.pop("timeout", 5), **kw)


def test_streams_text_in_pieces_with_usage():
    with ScriptedServer([{"text": "Backups are kept for 35 days [1].", "usage": (120, 9)}]) as server:
        deltas = list(model(server).stream([Message("system", "Answer."), Message("user", "How long?")]))
        pieces = [d.text for d in deltas if d.text]
        assert len(pieces) > 1 and "".join(pieces) == "Backups are kept for 35 days [1]."
        usage = [d.usage for d in deltas if d.usage]
        assert usage[0].prompt_tokens == 120 and usage[0].completion_tokens == 9
        assert deltas[-1].finish_reason == "stop"
        sent = server.requests[0]
        assert sent["model"] == "qwen2.5" and sent["stream"] is True
        assert [m["role"] for m in sent["messages"]] == ["system", "user"] and "tools" not in sent


def test_tool_calls_are_assembled_from_pieces():
    reply = {"tool_calls": [{"name": "search_docs", "arguments": {"query": "数据库 备份"}},
                            {"name": "search_docs", "arguments": {"query": "backup retention"}}]}
    with ScriptedServer([reply]) as server:
        result = model(server).complete([Message("user", "find it")], tools=TOOLS)
        assert [c.name for c in result.tool_calls] == ["search_docs", "search_docs"]
        assert json.loads(result.tool_calls[0].arguments) == {"query": "数据库 备份"}
        assert result.finish_reason == "tool_calls" and result.text == ""
        assert server.requests[0]["tools"] == TOOLS


def test_tool_results_go_back_in_the_openai_shape():
    with ScriptedServer([{"text": "done"}]) as server:
        m = model(server)
        call = m.complete([Message("user", "x")]).tool_calls  # no calls: plain text
        assert call == []
        from docqa.llm import ToolCall

        history = [Message("user", "q"), Message("assistant", None, [ToolCall("c1", "search_docs", '{"query": "q"}')]),
                   Message("tool", "3 hits", tool_call_id="c1")]
        server.script.append({"text": "answer"})
        assert m.complete(history).text == "answer"
        sent = server.requests[-1]["messages"]
        assert sent[1]["tool_calls"][0]["function"] == {"name": "search_docs", "arguments": '{"query": "q"}'}
        assert sent[2] == {"role": "tool", "content": "3 hits", "tool_call_id": "c1"}


def test_cut_off_reply_is_reported():
    with ScriptedServer([{"text": "The answer is", "finish_reason": "length"}]) as server:
        result = model(server).complete([Message("user", "q")], max_tokens=3)
        assert result.truncated and server.requests[0]["max_tokens"] == 3


@pytest.mark.parametrize("status", [500, 503, 429])
@pytest.mark.slow
def test_retries_then_succeeds(status):
    with ScriptedServer([{"status": status}, {"status": status}, {"text": "ok"}]) as server:
        assert model(server, max_retries=3).complete([Message("user", "q")]).text == "ok"
        assert len(server.requests) == 3


@pytest.mark.slow
def test_gives_up_with_a_clear_error():
    with ScriptedServer([{"status": 500}] * 5) as server:
        with pytest.raises(LLMError, match="refused the request for qwen2.5: 500"):
            model(server, max_retries=1).complete([Message("user", "q")])
        assert len(server.requests) == 2
    with ScriptedServer([{"status": 400, "body": {"error": {"message": "model not found"}}}]) as server:
        with pytest.raises(LLMError, match="400.*model not found"):
            model(server).complete([Message("user", "q")])
        assert len(server.requests) == 1  # a client error is not retried


@pytest.mark.slow
def test_timeout_and_unreachable():
    with ScriptedServer([{"delay": 2, "text": "late"}]) as server:
        with pytest.raises(LLMError, match="no answer from qwen2.5 in time"):
            model(server, timeout=0.5, max_retries=0).complete([Message("user", "q")])
    m = OpenAICompatModel("http://127.0.0.1:9/v1", "m", timeout=2, max_retries=0)
    with pytest.raises(LLMError, match="cannot reach the chat model at http://127.0.0.1:9/v1"):
        m.complete([Message("user", "q")])
