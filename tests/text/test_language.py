"""The one home of the CJK ranges and language detection (text/language.py), table-driven."""

from __future__ import annotations

import re

import pytest

from docqa.text.language import (CJK_PUNCTUATION, HAN, HAN_RANGES, WIDE, guess_language, has_cjk, language_of,
                                 script)

# text, has_cjk, script, language_of, guess_language
CASES = [
    ("", False, "latin", "en", None),
    ("How long are backups kept?", False, "latin", "en", "en"),
    ("12345 -- !!", False, "latin", "en", None),
    ("备份保留多久？", True, "cjk", "zh", "zh"),
    ("数据备份", True, "cjk", "zh", "zh"),
    ("㐀㐁 in extension A", True, "latin", "en", "en"),            # U+3400: Extension A counts, but is outnumbered
    ("㐀㐁㐂", True, "cjk", "zh", "zh"),                              # Extension A alone
    ("豈更車", True, "cjk", "zh", "zh"),                              # U+F900: compatibility ideographs
    ("。，！？「」", False, "latin", "en", None),                        # punctuation alone is not Chinese
    ("What does 备份 mean in this config file for the server?", True, "latin", "en", "en"),
    ("备份策略 backup policy", True, "cjk", "zh", "zh"),              # 4 Han of 16 letters: at least a fifth
    ("ひらがなとカタカナ", False, "latin", "en", "ja"),
    ("한국어 문장입니다", False, "latin", "en", "ko"),
    ("Это русский текст", False, "latin", "en", "ru"),
    ("Ünïcödé café", False, "latin", "en", "en"),
]


@pytest.mark.parametrize("text,cjk,expected_script,language,guess", CASES)
def test_detection(text, cjk, expected_script, language, guess):
    assert has_cjk(text) is cjk
    assert script(text) == expected_script
    assert language_of(text) == language
    assert guess_language(text) == guess


# character, in HAN, in CJK_PUNCTUATION, in WIDE
CHARACTERS = [
    ("\u4e00", True, False, True), ("\u9fff", True, False, True),      # CJK Unified Ideographs
    ("\u3400", True, False, True), ("\u4dbf", True, False, True),      # Extension A
    ("\uf900", True, False, True), ("\ufaff", True, False, True),      # compatibility ideographs
    ("。", False, True, True), ("、", False, True, True),                # CJK symbols and punctuation
    ("，", False, True, True), ("！", False, True, True),                # fullwidth forms
    ("あ", False, False, True), ("한", False, False, True),              # kana, hangul: wide, not Chinese
    ("a", False, False, False), ("é", False, False, False), ("\u2e7f", False, False, False),
]


@pytest.mark.parametrize("char,han,punctuation,wide", CHARACTERS)
def test_ranges(char, han, punctuation, wide):
    assert (re.fullmatch(f"[{HAN}]", char) is not None) is han
    assert (re.fullmatch(f"[{CJK_PUNCTUATION}]", char) is not None) is punctuation
    assert (re.fullmatch(f"[{WIDE}]", char) is not None) is wide
    assert any(a <= ord(char) <= b for a, b in HAN_RANGES) is han


def test_one_home_for_the_ranges():
    """No module but text/language.py spells a CJK range; the others import it."""
    import docqa

    src = __import__("pathlib").Path(docqa.__file__).parent
    spelled = re.compile(r"\\u4e00|\\u9fff|\\u3400|0x4e00|0x9fff|[\u4e00]-[\u9fff]", re.I)
    offenders = [str(p.relative_to(src)) for p in src.rglob("*.py")
                 if p.name != "language.py" and spelled.search(p.read_text(encoding="utf-8"))]
    assert not offenders, offenders
