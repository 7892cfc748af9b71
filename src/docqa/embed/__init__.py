"""Embedders: text -> unit-length vectors for dense retrieval (local ONNX model, Ollama, OpenAI-compatible)."""

from docqa.embed.base import Embedder, Fingerprint, embed_text, text_hash
from docqa.embed.factory import make_embedder

__all__ = ["Embedder", "Fingerprint", "embed_text", "make_embedder", "text_hash"]
