"""Keywords: TF-IDF over jieba's and wordfreq's tables, held compactly."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from docqa.ingest.enrich import _english_idf, _idf, _Table, keywords_of
from docqa.text.segment import STOPWORDS


def _jieba_table() -> dict[str, float]:
    path = Path(importlib.util.find_spec("jieba").origin).parent / "analyse" / "idf.txt"
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, _, value = line.rstrip().partition(" ")
        if value:
            table[word] = float(value)
    return table


@pytest.mark.slow
def test_the_compact_chinese_table_gives_every_word_its_jieba_idf():
    table = _jieba_table()
    words = list(table)
    assert any(len(w.encode()) > _Table.WIDTH for w in words)  # the long words' dict is exercised
    assert _idf().get_many(words, -1.0) == [table[w] for w in words]
    unseen = ["不存在的词语甲乙丙丁戊己庚辛", "zzzz", "", "中文分词器没有的长长长长词"]
    assert _idf().get_many([w for w in unseen if w not in table], -1.0) == [-1.0] * 4
    values = sorted(table.values())
    assert _idf().median == values[len(values) // 2] and _idf().highest == max(values)


def test_a_table_keeps_the_last_value_of_a_word_given_twice_and_finds_prefixes_apart():
    table = _Table.parse(("ab 1.0\n中 2\nab 3.0\r\nabc 4.5\nnovalue\n\n%s 5.0\n长长长长长 6.25" % ("a" * 13)).encode())
    assert table.get_many(["ab", "中", "abc", "a", "a" * 13, "a" * 12, "长长长长长", "novalue"], 0.0) == \
        [3.0, 2.0, 4.5, 0.0, 5.0, 0.0, 6.25, 0.0]
    assert table.highest == 6.25 and table.median == 4.5


@pytest.mark.slow
def test_the_english_table_is_wordfreqs_own():
    wordfreq = pytest.importorskip("wordfreq")
    expected = {w: -math.log(f) for w, f in wordfreq.get_frequency_dict("en", wordlist="small").items() if f > 0}
    ours = _english_idf()
    web = {"http", "https", "www", "com", "org", "html", "net"}
    for word, value in expected.items():
        if word in STOPWORDS | web:
            assert ours[word] == 0.0
        else:
            assert ours[word] == pytest.approx(value, abs=1e-9), word
    assert set(ours) - set(expected) <= STOPWORDS | web


def test_keywords_are_the_documents_own_terms_not_everyday_words():
    english = ("Rotating the API keys. Every ninety days the gateway rotates its signing keys; "
               "the old keys stay valid for a grace period so that every client can fetch the new keys. " * 3)
    words = keywords_of(english)
    assert "keys" in words[:3] and "gateway" in words
    assert "every" not in words[:5] and "the" not in words
    chinese = "量子计算机利用量子比特进行计算。量子比特可以同时处于多个状态，因此量子计算机在某些问题上更快。" * 2
    words = keywords_of(chinese)
    assert "量子" in words[:3] and "比特" in words
    assert not {"可以", "因此", "同时"} & set(words[:3])
