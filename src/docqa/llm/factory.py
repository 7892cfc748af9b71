"""Choose the chat model from settings (resolved at the edge and passed in)."""

from __future__ import annotations

from dataclasses import dataclass

from docqa.errors import ConfigError
from docqa.llm.base import ChatModel
from docqa.llm.openai_compat import OpenAICompatModel

OLLAMA_URL = "http://127.0.0.1:11434"


@dataclass(slots=True)
class Choice:
    """The chat model to use (None: answer extractively) and why, for the user to see once."""

    model: ChatModel | None
    reason: str
    source: str = "configured"  # configured | ollama (found running locally) | extractive (no model) | given


def choose_chat_model(provider: str, base_url: str, model: str, api_key: str | None = None, temperature: float = 0.2,
                      max_tokens: int = 1024, timeout: float = 120.0, max_retries: int = 3,
                      ollama_url: str = OLLAMA_URL) -> Choice:
    """auto: `base_url` if given; else a local Ollama that has `model`; else no model (extractive)."""
    def build(url: str) -> OpenAICompatModel:
        return OpenAICompatModel(url, model, api_key, timeout, max_retries, temperature, max_tokens)

    if provider == "none":
        return Choice(None, "llm.provider is 'none': answers are extracted from the documents", "extractive")
    if provider == "openai" or (provider == "auto" and base_url):
        if not base_url:
            raise ConfigError("llm.base_url is required for the openai provider (e.g. http://127.0.0.1:8080/v1)")
        return Choice(build(base_url), f"{model} at {base_url}")
    url = (base_url or ollama_url).rstrip("/").removesuffix("/v1")
    found = ollama_models(url)
    if found is None:
        if provider == "ollama":
            raise ConfigError(f"Ollama does not answer at {url}: start it with 'ollama serve'")
        return Choice(None, f"no chat model configured and no Ollama at {url}: answers are extracted from the documents",
                      "extractive")
    if model not in found and f"{model}:latest" not in found:
        if provider == "ollama":
            raise ConfigError(f"Ollama at {url} does not have {model}: run 'ollama pull {model}'")
        return Choice(None, f"Ollama at {url} does not have {model} ('ollama pull {model}'): answers are extracted from the documents",
                      "extractive")
    return Choice(build(url + "/v1"), f"{model} on Ollama at {url}", "configured" if provider == "ollama" else "ollama")


def ollama_models(url: str, timeout: float = 1.5) -> set[str] | None:
    """Names of the models a local Ollama has, or None when nothing answers like Ollama there."""
    import httpx  # only when asking Ollama: it is slow to import

    try:
        response = httpx.get(url.rstrip("/") + "/api/tags", timeout=timeout)
        data = response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        return None
    return {m.get("name", "") for m in data["models"] if isinstance(m, dict)}
