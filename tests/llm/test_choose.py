"""Which chat model docqa uses, one test per branch of `choose_chat_model`: a configured endpoint,
OPENAI_API_KEY alone, OPENAI_BASE_URL, Ollama with or without the configured model, the local model
(shared, or started on demand), nothing.  The scripted OpenAI-compatible server stands in for every
model server, on loopback; the settings are resolved from a real environment, as the CLI does."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from docqa.errors import ConfigError
from docqa.llm import Message, best_ollama_model, choose_chat_model
from docqa.llm.local import LocalModel
from docqa.llm.server import STATE_FILE, LocalServing, healthy
from docqa.settings import load_settings

from . import scripted_server
from .scripted_server import ScriptedServer

DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port
GB = 1 << 30


@pytest.fixture
def env(monkeypatch, tmp_path):
    """A clean environment and working directory (no docqa.yml), as a user's shell would be."""
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "DOCQA_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    for name in [n for n in os.environ if n.startswith("DOCQA_LLM")]:
        monkeypatch.delenv(name)
    return monkeypatch


def choose(settings, **kw):
    s = settings.llm
    return choose_chat_model(s.provider, s.base_url, s.model, s.api_key, max_retries=0, timeout=10,
                             ollama_url=s.ollama_url or DEAD, via=s.from_environment.get("base_url"), **kw)


def test_a_configured_endpoint_is_used_and_not_announced(env):
    with ScriptedServer([{"text": "hi"}]) as server:
        env.setenv("DOCQA_LLM__BASE_URL", server.base_url)
        env.setenv("OPENAI_API_KEY", "sk-not-for-this-server")
        choice = choose(load_settings())
        assert choice.model is not None and choice.model.complete([Message("user", "x")]).text == "hi"
        assert server.base_url in choice.reason and choice.note is None
        assert "sk-not-for-this-server" not in server.headers[0].get("Authorization", "")  # never sent elsewhere


def test_openai_api_key_alone_means_openai_itself(env):
    env.setenv("OPENAI_API_KEY", "sk-test")
    settings = load_settings()
    assert (settings.llm.base_url, settings.llm.model, settings.llm.api_key) == (
        "https://api.openai.com/v1", "gpt-4o-mini", "sk-test")
    choice = choose(settings)  # builds the client; nothing is sent until a question is asked
    assert choice.model is not None and choice.model.base_url == "https://api.openai.com/v1"
    assert choice.model.name == "gpt-4o-mini"
    assert "OPENAI_API_KEY" in choice.note and "llm.provider: none" in choice.note


def test_openai_base_url_with_its_key(env):
    with ScriptedServer([{"text": "from the base url"}]) as server:
        env.setenv("OPENAI_BASE_URL", server.base_url)
        env.setenv("OPENAI_API_KEY", "sk-local")
        env.setenv("DOCQA_LLM__MODEL", "served-model")
        choice = choose(load_settings())
        assert choice.model.complete([Message("user", "x")]).text == "from the base url"
        assert server.headers[0]["Authorization"] == "Bearer sk-local"
        assert server.requests[0]["model"] == "served-model"
        assert "from OPENAI_BASE_URL" in choice.note


def test_ollama_host_with_the_configured_model(env):
    with ScriptedServer([{"text": "from ollama"}]) as server:
        server.ollama_models = ["qwen2.5:7b-instruct", "bge-m3:latest"]
        env.setenv("OLLAMA_HOST", server.base_url.removesuffix("/v1").removeprefix("http://"))
        choice = choose(load_settings())
        assert choice.model.complete([Message("user", "x")]).text == "from ollama"
        assert server.requests[0]["model"] == "qwen2.5:7b-instruct"
        assert "qwen2.5:7b-instruct on Ollama" in choice.note


@pytest.mark.slow
def test_ollama_without_the_configured_model_picks_the_best_and_says_which(env):
    with ScriptedServer([{"text": "from llama"}]) as server:
        server.ollama_models = [
            {"name": "nomic-embed-text:latest", "size": 274_000_000, "details": {"family": "nomic-bert", "parameter_size": "137M"}},
            {"name": "qwen2.5:0.5b", "size": 398_000_000, "details": {"parameter_size": "494.03M"}},
            {"name": "llama3.1:8b", "size": 4_900_000_000, "details": {"parameter_size": "8.0B"}},
            {"name": "llama3.1:70b", "size": 42_000_000_000, "details": {"parameter_size": "70.6B"}},
        ]
        env.setenv("OLLAMA_HOST", server.base_url.removesuffix("/v1"))
        choice = choose(load_settings(), memory=16 * GB)
        assert choice.model.complete([Message("user", "x")]).text == "from llama"
        assert server.requests[0]["model"] == "llama3.1:8b"
        assert "does not have qwen2.5:7b-instruct" in choice.note and "using llama3.1:8b" in choice.note
        with pytest.raises(ConfigError, match="has no chat model: run 'ollama pull qwen2.5:7b-instruct'"):
            server.ollama_models = ["bge-m3:latest"]
            choose(load_settings(llm={"provider": "ollama"}))


@pytest.mark.parametrize("models, memory, best", [
    (["qwen2.5:7b", "qwen2.5:1.5b", "bge-m3:latest"], 16 * GB, "qwen2.5:7b"),  # largest that fits
    (["qwen2.5:7b", "qwen2.5:1.5b"], 2 * GB, "qwen2.5:1.5b"),  # 7b does not fit in 2 GB
    (["qwen2.5:72b", "llama3.1:70b"], 4 * GB, "llama3.1:70b"),  # none fits: the smallest
    (["llama3:70b-text", "llama3:8b"], 64 * GB, "llama3:8b"),  # a base model only when nothing else
    (["llama3:8b-text"], 64 * GB, "llama3:8b-text"),
    (["nomic-embed-text:latest", "mxbai-embed-large:latest", "all-minilm:l6"], 64 * GB, None),  # embeddings only
    ([{"name": "mistral:latest", "size": 4_100_000_000, "details": {"parameter_size": "7.2B"}},
      {"name": "phi3:latest", "size": 2_200_000_000, "details": {"parameter_size": "3.8B"}}], 16 * GB, "mistral:latest"),
    ([{"name": "granite:latest", "details": {"family": "bert", "parameter_size": "278M"}}], 16 * GB, None),
])
def test_best_ollama_model_rule(models, memory, best):
    entries = [m if isinstance(m, dict) else {"name": m} for m in models]
    assert best_ollama_model(entries, memory) == best


def _tiny_model(folder: Path) -> LocalModel:
    data = b"GGUF stand-in for the tests"
    (folder / "tiny.gguf").write_bytes(data)
    return LocalModel("tiny-local", "tiny.gguf", len(data), hashlib.sha256(data).hexdigest())


def _scripted_process(reply: str):
    return lambda port: [sys.executable, scripted_server.__file__, "--port", str(port), "--reply", reply]


def test_an_installed_local_model_is_started_used_and_stopped(env, tmp_path):
    serving = LocalServing(tmp_path, _tiny_model(tmp_path), command=_scripted_process("from the local model"))
    choice = choose(load_settings(), local=serving)
    try:
        assert choice.model.complete([Message("user", "x")]).text == "from the local model"
        assert "using the local model tiny-local" in choice.note and "llm.provider: none" in choice.note
        url = choice.model.server.url.removesuffix("/v1")
        assert healthy(url)
    finally:
        choice.model.close()
    assert not healthy(url)  # stopped with the command that started it


def test_a_running_docqa_model_serve_is_shared(env, tmp_path):
    with ScriptedServer([{"text": "from the shared server"}]) as server:
        (tmp_path / STATE_FILE).write_text(f'{{"url": "{server.base_url}", "pid": {os.getpid()}}}')
        serving = LocalServing(tmp_path, _tiny_model(tmp_path), command=_scripted_process("never started"))
        choice = choose(load_settings(), local=serving)
        assert choice.model.complete([Message("user", "x")]).text == "from the shared server"
        assert "served by 'docqa model serve'" in choice.note


def test_a_local_model_that_is_not_installed_is_not_used(env, tmp_path):
    model = _tiny_model(tmp_path)
    (tmp_path / model.file).write_bytes(b"damaged")
    serving = LocalServing(tmp_path, model, command=_scripted_process("never started"))
    choice = choose(load_settings(), local=serving)
    assert choice.model is None
    with pytest.raises(ConfigError, match="llm.provider is 'local' but the local model cannot run: .*docqa model install"):
        choose(load_settings(llm={"provider": "local"}), local=LocalServing(tmp_path / "empty"))


def test_nothing_there_means_extractive_answers_said_with_how_to_get_a_model(env, tmp_path):
    choice = choose(load_settings(), local=LocalServing(tmp_path))
    assert choice.model is None and "extracted" in choice.note and "docqa model install" in choice.note
    with pytest.raises(ConfigError, match="ollama serve"):
        choose(load_settings(llm={"provider": "ollama"}))
    assert choose_chat_model("none", "http://x/v1", "m").model is None
    with pytest.raises(ConfigError, match="llm.base_url is required"):
        choose_chat_model("openai", "", "m")

