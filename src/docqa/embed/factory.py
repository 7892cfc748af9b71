"""Build the configured embedder (settings resolved at the edge are passed in)."""

from __future__ import annotations

from docqa.embed.base import Embedder
from docqa.errors import ConfigError


def make_embedder(provider: str, model: str = "", base_url: str = "", api_key: str | None = None,
                  timeout: float = 60.0, window_chars: int = 0) -> Embedder | None:
    """The embedder for a provider name; None for 'none' (BM25 only)."""
    if provider == "none":
        return None
    if provider == "hash":  # tests only: no meaning, and its fingerprint keeps it out of a real index
        from docqa.embed.hash import HashEmbedder

        return HashEmbedder()
    if provider == "local":
        if model in ("", "use-multilingual-v3"):
            from docqa.embed.local import LocalEmbedder

            return LocalEmbedder()
        if model in ("multilingual-e5-small", "e5"):
            from docqa.embed.e5 import E5Embedder

            return E5Embedder()
        raise ConfigError(f"unknown local embedding model {model!r}: use-multilingual-v3 (default) or multilingual-e5-small")
    if provider in ("ollama", "openai"):
        if not model:
            raise ConfigError(f"embed.model must name the {provider} embedding model (e.g. DOCQA_EMBED__MODEL=bge-m3)")
        from docqa.embed.remote import OllamaEmbedder, OpenAIEmbedder

        cls = OllamaEmbedder if provider == "ollama" else OpenAIEmbedder
        url = base_url or ("http://127.0.0.1:11434" if provider == "ollama" else "")
        if not url:
            raise ConfigError("embed.base_url is required for the openai provider (e.g. http://127.0.0.1:8080/v1)")
        return cls(model, url, api_key, timeout, window_chars=window_chars)
    raise ConfigError(f"unknown embed.provider {provider!r}: use local, ollama, openai or none (hash: tests only)")
