"""Fakes at the boundary, for tests: a deterministic embedder and a scripted chat model.

Unit tests use them instead of the bundled ONNX model and an HTTP model server, so they run in
milliseconds (``pytest -m "not slow"``).  Both are ordinary implementations of the interfaces:
`HashEmbedder` is also ``embed.provider: hash`` (for a CLI test in a child process), and its
fingerprint is recorded in the index like any model's, so it can never answer for a real index.
"""

from docqa.embed.hash import HashEmbedder, hash_tokens
from docqa.llm.scripted import Call, ScriptedChat

__all__ = ["Call", "HashEmbedder", "ScriptedChat", "hash_tokens"]
