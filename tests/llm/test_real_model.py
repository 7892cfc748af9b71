"""Our OpenAI-compatible client against a REAL small model (Qwen2.5-Coder-1.5B on llama.cpp, loopback).

Skipped, with the install command, when the model is not installed: docqa model install.
Replies are short (max_tokens ≤ 64) and greedy (temperature 0), so each test takes seconds.
"""

from __future__ import annotations

import re
import time

import pytest

from docqa.llm import Message, OpenAICompatModel

pytestmark = pytest.mark.real_llm

MODEL = "qwen2.5-coder-1.5b"
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def chat(real_llm: str):
    model = OpenAICompatModel(real_llm, MODEL, timeout=120, max_retries=0, temperature=0.0, max_tokens=64)
    yield model
    model.close()


def test_streams_an_answer_found_in_the_context(chat: OpenAICompatModel):
    messages = [
        Message("system", "Answer the question using only the context. Be brief."),
        Message("user", "Context: The backup runs every 6 hours. Old copies are kept for 30 days.\n\n"
                        "Question: How often does the backup run?"),
    ]
    started = time.monotonic()
    deltas = list(chat.stream(messages, max_tokens=32))
    elapsed = time.monotonic() - started
    pieces = [d.text for d in deltas if d.text]
    answer = "".join(pieces)
    usage = [d.usage for d in deltas if d.usage is not None]
    print(f"\nanswer: {answer!r}; usage {usage}; {elapsed:.1f} s")
    assert len(pieces) > 1, "the reply should arrive in several streamed pieces"
    assert "6" in answer
    assert usage and usage[-1].prompt_tokens > 0 and usage[-1].completion_tokens > 0
    assert deltas[-1].finish_reason in ("stop", "length")


def test_answers_a_chinese_question_in_chinese(chat: OpenAICompatModel):
    result = chat.complete([
        Message("system", "你是一个乐于助人的助手。请用中文简短回答。"),
        Message("user", "资料：数据库每天凌晨两点自动备份。\n\n问题：数据库什么时候备份？"),
    ])
    print(f"\nanswer: {result.text!r}; usage {result.usage}")
    assert CJK.search(result.text), f"expected Chinese characters in {result.text!r}"
    assert result.usage.completion_tokens > 0
