"""`HashEmbedder`: deterministic vectors from token hashes, for tests (embed.provider: hash).

No model, no meaning: each word (and each CJK character and character pair) adds ±1 to one of
`dimensions` slots picked by its hash, and the sum is normalised.  Texts sharing words get close
vectors, so hybrid retrieval behaves plausibly, and the same text gives the same vector on every
machine.  Its fingerprint (`hash@1/256/r1`) is recorded in the index like any model's, so an index
built with it is refused by the real embedders (and the other way round) with the reindex hint.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from docqa.embed.base import Embedder
from docqa.text.language import HAN_RANGES, HANGUL_RANGES, KANA_RANGES, char_class

_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(f"[{char_class(HAN_RANGES + KANA_RANGES + HANGUL_RANGES)}]+")


def hash_tokens(text: str) -> list[str]:
    """The lower-cased words of a text; a CJK run gives its characters and their pairs."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        for part in _CJK.split(word):
            if part:
                out.append(part)
        for run in _CJK.findall(word):
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


class HashEmbedder(Embedder):
    """Unit vectors from token hashes: fast, deterministic, and only as good as word overlap."""

    name = "hash"
    version = "1"
    batch_size = 256

    def __init__(self, dimensions: int = 256):
        self.dimensions = dimensions
        self.calls = 0  # batches embedded (a test can check that unchanged text is not embedded again)

    def _embed(self, texts: list[str], kind: str) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in hash_tokens(text):
                digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self.dimensions
                out[row, slot] += 1.0 if digest[4] & 1 else -1.0
        return out
