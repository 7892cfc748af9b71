"""Shared fixtures: a fresh knowledge base, and ../shared/data when it exists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm.real_model import real_llm  # noqa: F401  (the real local chat model; tests/ is on sys.path)
from postgres_server import postgres_server  # noqa: F401  (a throwaway PostgreSQL with pgvector, or a skip)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, or skip with the reason (a user's fresh clone does not have it)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not present (benchmark data ships beside the repo in CI only)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def local_embedder():
    """The bundled offline model, loaded once for the whole run."""
    from docqa.embed.local import LocalEmbedder

    embedder = LocalEmbedder()
    embedder.embed_query("load the model")  # a missing model fails here, with the install command
    return embedder


@pytest.fixture(scope="session", autouse=True)
def no_chat_model_from_the_machine(tmp_path_factory):
    """Tests choose their chat model themselves: an Ollama, an OPENAI_* variable or the installed local
    model of the machine running them must not answer (the real_llm fixture finds that model itself)."""
    saved = {name: os.environ.get(name) for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST",
                                                     "DOCQA_LLM__MODELS_DIR")}
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)
    os.environ["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing listens on the discard port
    os.environ["DOCQA_LLM__MODELS_DIR"] = str(tmp_path_factory.mktemp("no-local-model"))
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
