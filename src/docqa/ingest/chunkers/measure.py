"""Token arithmetic on spans of a text: counts, decode-safe token cuts, overlap tails.

Counting is the chunkers' main cost (tiktoken runs at roughly 10-18 MB/s here), so each unit
of text is counted once and chunk sizes are sums of unit counts plus `JOIN_TOKENS` per join.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from docqa.text.sentences import sentence_spans
from docqa.text.tokens import ENCODING

# The whitespace between two joined units tokenizes to at most about one token; counting one
# per join keeps a chunk's summed count at or above its exact count.
JOIN_TOKENS = 1
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _encoding():
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def ntokens(text: str) -> int:
    """Exact cl100k token count of `text`."""
    return len(_encoding().encode_ordinary(text)) if text else 0


def _char_boundary(data: bytes, b: int) -> int:
    """`b` moved back to the start of the UTF-8 character it falls in."""
    while 0 < b < len(data) and (data[b] & 0xC0) == 0x80:
        b -= 1
    return b


def token_cuts(text: str, start: int, end: int, size: int) -> list[int]:
    """Offsets that cut `text[start:end]` into pieces of about `size` tokens at token boundaries.

    The last offset is `end`.  Cuts never fall inside a UTF-8 character; a cut moves back to
    the last whitespace in the piece's final quarter so words stay whole where possible.
    """
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
    enc = _encoding()
    lo = max(start, end - tokens * 6 - 8)
    window = text[lo:end]
    ids = enc.encode_ordinary(window)
    if len(ids) <= tokens:
        pos = lo
    else:
        data = window.encode("utf-8")
        tail = len(enc.decode_bytes(ids[-tokens:]))
        b = len(data) - tail
        while b < len(data) and (data[b] & 0xC0) == 0x80:
            b += 1  # forward, so the tail never grows past `tokens`
        pos = lo + len(data[:b].decode("utf-8"))
    if pos <= start:
        return end  # the tail would be the whole unit: no partial overlap
    return _round_forward(text, lo, pos, end)


def _round_forward(text: str, lo: int, pos: int, end: int) -> int:
    """`pos` moved forward to a sentence start (keeping a third of the tail) or a word start."""
    for s, _ in sentence_spans(text, lo, end):
        if s >= pos:
            if end - s >= (end - pos) // 3:
                return s
            break
    if text[pos - 1].isspace() and not text[pos].isspace():
        return pos
    m = _SPACE.search(text, pos, end)
    if m is not None and m.end() < end:
        return m.end()
    return pos
