"""Embedders served over HTTP: Ollama's native API and any OpenAI-compatible `/v1/embeddings`.

Both retry on 429 and 5xx with exponential backoff, learn the vector size from the first
answer, and turn every transport problem into an `EmbedError` that names the server and what
to do.
"""

from __future__ import annotations

import time

import httpx
import numpy as np

from docqa.embed.base import Embedder
from docqa.errors import EmbedError

_RETRIES = 3


class _HttpEmbedder(Embedder):
    batch_size = 32

    def __init__(self, model: str, base_url: str, api_key: str | None = None, timeout: float = 60.0,
                 dimensions: int | None = None, window_chars: int = 0):
        self.model = model
        self.name = f"{self.provider}:{model}"
        self.base_url = base_url.rstrip("/")
        self.window_chars = window_chars
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)
        self._dimensions = dimensions

    provider = "http"

    @property
    def dimensions(self) -> int:  # type: ignore[override]
        if self._dimensions is None:
            self._dimensions = len(self._request(["dimension probe"], "query")[0])
        return self._dimensions

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        vectors = self._request(texts, kind)
        if self._dimensions is None:
            self._dimensions = len(vectors[0])
        return np.asarray(vectors, dtype=np.float32)

    def _request(self, texts: list[str], kind: str) -> list[list[float]]:
        raise NotImplementedError

    def _post(self, path: str, payload: dict) -> dict:
        url = self.base_url + path
        for attempt in range(_RETRIES + 1):
            try:
                response = self._client.post(url, json=payload)
            except httpx.HTTPError as exc:
                if attempt == _RETRIES:
                    raise EmbedError(f"cannot reach the embedding server at {url} ({exc}): {self._start_hint}") from exc
            else:
                if response.status_code == 429 or response.status_code >= 500:
                    if attempt == _RETRIES:
                        raise EmbedError(f"{url} answered {response.status_code} {response.text[:200]!r} after {_RETRIES + 1} tries")
                elif response.status_code >= 400:
                    raise EmbedError(f"{url} refused the request: {response.status_code} {response.text[:300]!r} ({self._start_hint})")
                else:
                    try:
                        return response.json()
                    except ValueError as exc:
                        raise EmbedError(f"{url} did not answer JSON: {response.text[:200]!r}") from exc
            time.sleep(0.5 * 2**attempt)
        raise AssertionError("unreachable")

    _start_hint = "check embed.base_url and that the server is running"

    def close(self) -> None:
        self._client.close()


class OllamaEmbedder(_HttpEmbedder):
    """Ollama's `/api/embed` (for example `nomic-embed-text`, `bge-m3`)."""

    provider = "ollama"

    @property
    def _start_hint(self) -> str:  # type: ignore[override]
        return f"start Ollama ('ollama serve') and pull the model ('ollama pull {self.model}')"

    def _request(self, texts: list[str], kind: str) -> list[list[float]]:
        data = self._post("/api/embed", {"model": self.model, "input": texts})
        vectors = data.get("embeddings") if isinstance(data, dict) else None
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise EmbedError(f"{self.base_url}/api/embed returned no embeddings for {len(texts)} texts")
        return vectors


class OpenAIEmbedder(_HttpEmbedder):
    """Any OpenAI-compatible `POST {base_url}/embeddings` (OpenAI, vLLM, llama.cpp server, LM Studio)."""

    provider = "openai"

    def _request(self, texts: list[str], kind: str) -> list[list[float]]:
        data = self._post("/embeddings", {"model": self.model, "input": texts})
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or len(items) != len(texts):
            raise EmbedError(f"{self.base_url}/embeddings returned {len(items or [])} vectors for {len(texts)} texts")
        items = sorted(items, key=lambda item: item.get("index", 0))
        return [item["embedding"] for item in items]
