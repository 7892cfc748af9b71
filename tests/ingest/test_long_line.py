"""A very long line of text (issue 30: a 200 MB single-line file failed after 300 s at 2.1 GB): the last-
resort token cuts tokenize it one window at a time, so memory stays a small multiple of a window, not
~25x the text, and the pieces still hold at most the asked tokens, at token boundaries, covering it all."""

from __future__ import annotations

import random
import tracemalloc

from docqa.ingest.chunkers.measure import token_cuts
from docqa.text import count_tokens

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "运维", "文档"]


def _line(chars: int, seed: int = 7) -> str:
    rnd = random.Random(seed)
    out, n = [], 0
    while n < chars:
        word = rnd.choice(WORDS)
        out.append(word)
        n += len(word) + 1
    return " ".join(out)


def test_pieces_cover_the_line_and_hold_at_most_the_asked_tokens():
    text = _line(300_000)
    for size in (7, 120, 504):
        cuts = token_cuts(text, 0, len(text), size)
        assert cuts[-1] == len(text) and cuts == sorted(set(cuts)) and cuts[0] > 0
        starts = [0, *cuts[:-1]]
        assert max(count_tokens(text[a:b]) for a, b in zip(starts, cuts)) <= size + 2  # as on main: a seam re-tokenizes
        assert len(cuts) >= count_tokens(text) // (size + 1)  # not fewer pieces than the tokens need


def _peak(text: str) -> int:
    tracemalloc.start()
    try:
        cuts = token_cuts(text, 0, len(text), 504)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert cuts[-1] == len(text)


def test_a_long_line_costs_memory_of_a_window_not_of_the_whole_line():
    token_cuts(_line(5_000), 0, 5_000, 504)  # the tokenizer loaded before memory is traced
    short, long = _peak(_line(1_000_000)), _peak(_line(4_000_000))
    assert long < 4_000_000, f"{long / 1e6:.1f} MB for a 4 MB line"  # main: ~110 MB, 28x the line
    assert long < short * 1.5  # a window's worth, whatever the line's length (main: 4x for 4x the line)
