"""Which chat model docqa uses: a configured endpoint, a local Ollama with the model, or none."""

from __future__ import annotations

import pytest

from docqa.errors import ConfigError
from docqa.llm import Message, choose_chat_model

from .scripted_server import ScriptedServer


def test_configured_endpoint_wins():
    with ScriptedServer([{"text": "hi"}]) as server:
        choice = choose_chat_model("auto", server.base_url, "qwen2.5")
        assert choice.model is not None and choice.model.complete([Message("user", "x")]).text == "hi"
        assert server.base_url in choice.reason


def test_auto_uses_an_ollama_that_has_the_model():
    with ScriptedServer([{"text": "from ollama"}]) as server:
        server.ollama_models = ["qwen2.5:latest", "bge-m3:latest"]
        url = server.base_url.removesuffix("/v1")
        choice = choose_chat_model("auto", "", "qwen2.5", ollama_url=url)
        assert choice.model is not None and "Ollama" in choice.reason
        assert choice.model.complete([Message("user", "x")]).text == "from ollama"
        missing = choose_chat_model("auto", "", "llama3.1", ollama_url=url)
        assert missing.model is None and "ollama pull llama3.1" in missing.reason
        with pytest.raises(ConfigError, match="ollama pull llama3.1"):
            choose_chat_model("ollama", "", "llama3.1", ollama_url=url)


def test_nothing_there_means_extractive_answers():
    choice = choose_chat_model("auto", "", "qwen2.5", ollama_url="http://127.0.0.1:9")
    assert choice.model is None and "extracted" in choice.reason
    with pytest.raises(ConfigError, match="ollama serve"):
        choose_chat_model("ollama", "", "qwen2.5", ollama_url="http://127.0.0.1:9")
    assert choose_chat_model("none", "http://x/v1", "m").model is None
    with pytest.raises(ConfigError, match="llm.base_url is required"):
        choose_chat_model("openai", "", "m")
