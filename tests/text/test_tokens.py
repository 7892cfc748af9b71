"""`count_tokens` sums cached counts of word segments; it must equal tiktoken's own count."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docqa.text.tokens import _encoding, count_tokens, spaced_counts, split_words

# Pieces chosen to hit every alternative of the cl100k pattern at the cuts: contractions,
# letters after punctuation, digit runs, punctuation runs with newlines, whitespace runs of
# every kind (including Unicode spaces), Chinese, combining marks.
PIECES = st.sampled_from([
    "the", "Index", "chunk", "'s", "'LL", "don't", "3.14", "12345", "v1.2", "e.g.", "...", "!!",
    "(x)", '"q"', "—", "–", "é", "naïve", "文档", "检索。", "：", "\u0301", "𝔘", "🙂", "_", "-", "#",
    " ", "  ", "   ", "\n", "\n\n", " \n", "\n ", "\t", " \t ", "\r\n", "\u00a0", "\u3000", "\u2003",
    "\x0b", "\x0c", "\x1c", "\x85",
])
TEXT = st.one_of(st.lists(PIECES, max_size=60).map("".join), st.text(max_size=200))


def exact(text: str) -> int:
    return len(_encoding().encode_ordinary(text))


@settings(max_examples=1500, deadline=None)
@given(TEXT)
@pytest.mark.slow
def test_count_equals_tiktoken(text):
    assert count_tokens(text) == exact(text)


@settings(max_examples=300, deadline=None)
@given(TEXT)
@pytest.mark.slow
def test_split_words_parts_add_up(text):
    parts = split_words(text)
    assert " ".join(parts) == text
    assert exact(parts[0]) + sum(spaced_counts(parts[1:])) == exact(text)


def test_cached_counts_stay_exact_on_repeats():
    text = "The index is built. The index is built again!  Twice.\n  Indented line.\n"
    for _ in range(3):
        assert count_tokens(text) == exact(text)
    assert count_tokens("") == 0
