"""Token arithmetic on spans of a text: counts, decode-safe token cuts, overlap tails.

Counting is the chunkers' main cost, so each unit of text is counted once and chunk sizes are
sums of unit counts plus `JOIN_TOKENS` per join.  Counts come from `docqa.text.count_tokens`,
exact and about 3x cheaper than encoding (it sums cached counts of word segments); overlap tails
are measured the same way, word by word from the end, and encoded only when no word fits.
"""

from __future__ import annotations

import bisect
import re

from docqa.text.sentences import next_sentence_start
from docqa.text.tokens import _encoding, count_tokens, spaced_counts, split_words

# The whitespace between two joined units tokenizes to at most about one token; counting one
# per join keeps a chunk's summed count at or above its exact count.
JOIN_TOKENS = 1
_SPACE = re.compile(r"\s+")


ntokens = count_tokens  # exact cl100k count, from cached word-segment counts


def _char_boundary(data: bytes, b: int) -> int:
    """`b` moved back to the start of the UTF-8 character it falls in."""
    while 0 < b < len(data) and (data[b] & 0xC0) == 0x80:
        b -= 1
    return b


_WINDOW_CHARS_PER_TOKEN = 32  # a window tokenized at once: this many characters per token of a piece, times 4
_WINDOW_MARGIN = 256  # characters before a window's end where its tokens may differ from the whole text's


def token_cuts(text: str, start: int, end: int, size: int) -> list[int]:
    """Offsets that cut `text[start:end]` into pieces of about `size` tokens at token boundaries.

    The last offset is `end`.  Cuts never fall inside a UTF-8 character; a cut moves back to
    the last whitespace in the piece's final quarter so words stay whole where possible.  The
    text is tokenized one window at a time (some thirty pieces' worth), so a 200 MB line costs
    time and memory in proportion to its length, not a token list of the whole of it.
    """
    window = max(size, 1) * _WINDOW_CHARS_PER_TOKEN * 4  # ~30 pieces of ordinary text
    cuts: list[int] = []
    pos = start
    while end - pos > window:
        found = [c for c in _window_cuts(text, pos, pos + window, size)[:-1] if c <= pos + window - _WINDOW_MARGIN]
        if not found:  # a window of a few very long tokens: look further
            window *= 2
            continue
        cuts.extend(found)
        pos = found[-1]
    return cuts + _window_cuts(text, pos, end, size)


def _window_cuts(text: str, start: int, end: int, size: int) -> list[int]:
    """token_cuts of `text[start:end]`, tokenized as a whole."""
    enc = _encoding()
    piece = text[start:end]
    data = piece.encode("utf-8")
    offsets = [0]
    for token in enc.decode_tokens_bytes(enc.encode_ordinary(piece)):
        offsets.append(offsets[-1] + len(token))
    cuts: list[int] = []
    byte_pos = char_pos = first = 0
    while len(offsets) - 1 - first > size:
        target = _char_boundary(data, offsets[first + size])
        if target <= byte_pos:
            target = _char_boundary(data, offsets[first + size + 1])
        cut = _word_round(piece, char_pos, char_pos + len(data[byte_pos:target].decode("utf-8")))
        byte_pos += len(piece[char_pos:cut].encode("utf-8"))
        char_pos = cut
        first = bisect.bisect_left(offsets, byte_pos)
        cuts.append(start + cut)
    cuts.append(end)
    return cuts


def _word_round(piece: str, lo: int, cut: int) -> int:
    """`cut` moved back to just after a whitespace within the last quarter of `piece[lo:cut]`."""
    floor = cut - (cut - lo) // 4
    space = max(piece.rfind(" ", floor, cut), piece.rfind("\n", floor, cut))
    return space + 1 if space > lo else cut


def tail_start(text: str, start: int, end: int, tokens: int) -> int:
    """Where about the last `tokens` tokens of `text[start:end]` begin, moved forward to the
    start of a sentence (if one is near) or of a word; `end` when no such tail exists."""
    lo = max(start, end - tokens * 6 - 8)
    pos = _word_tail(text, lo, end, tokens)
    if pos is None:
        pos = _token_tail(text, lo, end, tokens)
    if pos <= start or pos >= end:
        return end  # the tail would be the whole unit (or nothing): no partial overlap
    return _round_forward(text, lo, pos, end)


def _word_tail(text: str, lo: int, end: int, tokens: int) -> int | None:
    """Start of the most whole space-led words ending `text[lo:end]` that hold at most `tokens`
    tokens (`lo` if all of it does); None when not even the last one fits (or has no space)."""
    words = split_words(text[lo:end])
    counts = spaced_counts(words)
    pos, k = end, len(words) - 1
    while k >= 1 and counts[k] <= tokens:
        tokens -= counts[k]
        pos -= len(words[k]) + 1
        k -= 1
    if k == len(words) - 1:
        return None
    return lo if k == 0 and counts[0] <= tokens else pos + 1


def _token_tail(text: str, lo: int, end: int, tokens: int) -> int:
    """Start of the last `tokens` tokens of `text[lo:end]` (`lo` if it has no more)."""
    enc = _encoding()
    window = text[lo:end]
    ids = enc.encode_ordinary(window)
    if len(ids) <= tokens:
        return lo
    data = window.encode("utf-8")
    b = len(data) - len(enc.decode_bytes(ids[-tokens:]))
    while b < len(data) and (data[b] & 0xC0) == 0x80:
        b += 1  # forward, so the tail never grows past `tokens`
    return lo + len(data[:b].decode("utf-8"))


def _round_forward(text: str, lo: int, pos: int, end: int) -> int:
    """`pos` moved forward to a sentence start (keeping a third of the tail) or a word start."""
    s = next_sentence_start(text, lo, pos, end)
    if s is not None and end - s >= (end - pos) // 3:
        return s
    if text[pos - 1].isspace() and not text[pos].isspace():
        return pos
    m = _SPACE.search(text, pos, end)
    if m is not None and m.end() < end:
        return m.end()
    return pos
