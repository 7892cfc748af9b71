"""Scripts and languages: the one home of the CJK ranges and of language detection.

What counts as *Chinese text* is the Han ideographs of the Basic Multilingual Plane:

| range         | block                                  | in  |
|---------------|----------------------------------------|-----|
| U+3400–U+4DBF | CJK Unified Ideographs Extension A     | HAN |
| U+4E00–U+9FFF | CJK Unified Ideographs                 | HAN |
| U+F900–U+FAFF | CJK Compatibility Ideographs           | HAN |
| U+3000–U+303F | CJK Symbols and Punctuation (。、「」) | CJK_PUNCTUATION |
| U+FF00–U+FFEF | Halfwidth and Fullwidth Forms (，！？) | CJK_PUNCTUATION |

Han characters are what jieba segments, what the full-text index splits into words and what
`has_cjk` / `script` / `language_of` count.  Punctuation alone does not make text Chinese; it
matters where a sentence may end (text/sentences.py).  Extensions B and later (U+20000+) are
rare in documents and absent from jieba's dictionary, so they are left out.  `WIDE` is broader:
every East Asian script that wraps at any character (kana, hangul too), for joining PDF lines.

Regular expressions embed the ranges as character-class bodies: `f"[{HAN}]+"`.
"""

from __future__ import annotations

import re

Ranges = tuple[tuple[int, int], ...]

HAN_RANGES: Ranges = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
CJK_PUNCTUATION_RANGES: Ranges = ((0x3000, 0x303F), (0xFF00, 0xFFEF))
KANA_RANGES: Ranges = ((0x3040, 0x30FF),)
HANGUL_RANGES: Ranges = ((0xAC00, 0xD7AF),)
CYRILLIC_RANGES: Ranges = ((0x0400, 0x04FF),)
# Radicals, kana, bopomofo, CJK punctuation, ideographs (U+2E80–9FFF), hangul, compatibility, fullwidth.
WIDE_RANGES: Ranges = ((0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF))


def char_class(ranges: Ranges) -> str:
    """The body of a regex character class matching `ranges` (wrap it in brackets)."""
    return "".join(f"{chr(first)}-{chr(last)}" for first, last in ranges)


HAN = char_class(HAN_RANGES)
CJK_PUNCTUATION = char_class(CJK_PUNCTUATION_RANGES)
WIDE = char_class(WIDE_RANGES)

HAN_RUN = re.compile(f"[{HAN}]+")
_HAN = re.compile(f"[{HAN}]")
_KANA = re.compile(f"[{char_class(KANA_RANGES)}]")
_HANGUL = re.compile(f"[{char_class(HANGUL_RANGES)}]")
_CYRILLIC = re.compile(f"[{char_class(CYRILLIC_RANGES)}]")
_LATIN = re.compile(r"[A-Za-z]+")


def has_cjk(text: str) -> bool:
    """True when `text` holds at least one Han character."""
    return not text.isascii() and HAN_RUN.search(text) is not None  # isascii: a C-speed fast path


def script(text: str) -> str:
    """'cjk' when Chinese characters make up at least a fifth of the letters, else 'latin'.

    Full-text search cannot match across the two (a Chinese query shares no term with English
    text), which is what hybrid fusion needs to know.
    """
    if not has_cjk(text):
        return "latin"
    cjk = sum(len(run) for run in HAN_RUN.findall(text))
    letters = sum(ch.isalnum() for ch in text)
    return "cjk" if cjk * 5 >= max(letters, 1) else "latin"


def language_of(text: str) -> str:
    """'zh' for text written in Chinese (see `script`), else 'en': the language to answer in."""
    return "zh" if script(text) == "cjk" else "en"


def guess_language(text: str) -> str | None:
    """A cheap guess from the script of the first 400 characters: zh, ja, ko, ru, en or None
    (the label stamped on a chunk)."""
    sample = text[:400]
    if sample.isascii():
        return "en" if _LATIN.search(sample) else None
    if _KANA.search(sample):
        return "ja"
    if _HANGUL.search(sample):
        return "ko"
    han = len(_HAN.findall(sample))
    words = len(_LATIN.findall(sample))
    if han and han >= words:
        return "zh"
    if len(_CYRILLIC.findall(sample)) > words:
        return "ru"
    return "en" if words else None
