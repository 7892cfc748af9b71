"""Shared fixtures: a fresh knowledge base, and ../shared/data when it exists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm.real_model import real_llm  # noqa: F401  (the real local chat model; tests/ is on sys.path)
from postgres_server import postgres_server  # noqa: F401  (a throwaway PostgreSQL with pgvector, or a skip)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


# The fast tier is `pytest -m "not slow"` (README, Tests).  A test is slow when it needs one of these fixtures
# (the bundled ONNX model, a PostgreSQL server, the real chat model, a browser), runs on the PostgreSQL backend,
# or is marked `real_llm` or `slow` itself (a real subprocess, OCR, Ray, or more than about two seconds).
SLOW_FIXTURES = {"local_embedder", "postgres_server", "real_llm", "browser", "page"}


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = getattr(item, "callspec", None)
        given = params.params if params is not None else {}  # parametrized names (a `page` number is no browser)
        on_postgres = "postgres" in given.values()
        fixtures = set(getattr(item, "fixturenames", ())) - set(given)
        if SLOW_FIXTURES & fixtures or on_postgres or item.get_closest_marker("real_llm"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, or skip with the reason (a user's fresh clone does not have it)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not present (benchmark data ships beside the repo in CI only)")
    return SHARED_DATA


@pytest.fixture
def hash_embedder():
    """The deterministic embedder of docqa.testing: word overlap, no model (the fast tier's dense retrieval)."""
    from docqa.testing import HashEmbedder

    return HashEmbedder()


@pytest.fixture
def embedder(request):
    """The embedder of a test's knowledge base: the bundled model when the test also asks for `local_embedder`
    (it asserts what only a model of meaning gives: a match across languages, a relevance gate; such a test
    is slow), else the hash embedder."""
    if "local_embedder" in request.fixturenames:
        return request.getfixturevalue("local_embedder")
    return request.getfixturevalue("hash_embedder")


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
