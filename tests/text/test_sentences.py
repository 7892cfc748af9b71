"""The sentence splitter: English and Chinese marks, abbreviations, numbers, exact spans."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from docqa.text import sentence_spans, split_sentences
from docqa.text.sentences import next_sentence_start

CASES = [
    ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
    ("Wait… Then go.", ["Wait…", "Then go."]),
    ("我们去吧。你好！真的吗？是的；好。", ["我们去吧。", "你好！", "真的吗？", "是的；", "好。"]),
    ("他说：“走吧。”然后离开了。", ["他说：“走吧。”", "然后离开了。"]),
    ("（注意！）下一句。", ["（注意！）", "下一句。"]),
    ('He said "Stop." Then left.', ['He said "Stop."', "Then left."]),
    ("Use a tool (e.g. a hammer). Done.", ["Use a tool (e.g. a hammer).", "Done."]),
    ("Dr. Smith and Mr. Jones met. They talked.", ["Dr. Smith and Mr. Jones met.", "They talked."]),
    ("Pi is 3.14 today. Next.", ["Pi is 3.14 today.", "Next."]),
    ("Upgrade to v1.2.3 now. Then restart.", ["Upgrade to v1.2.3 now.", "Then restart."]),
    ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]),
    ("The U.S. economy grew. Fine.", ["The U.S. economy grew.", "Fine."]),
    ("Buy approx. five apples. Eat them.", ["Buy approx. five apples.", "Eat them."]),
    ("1. First item\n2. Second item", ["1. First item\n2. Second item"]),
    ("A line\nwrapped here. Next one.", ["A line\nwrapped here.", "Next one."]),
    ("First paragraph\n\nSecond paragraph", ["First paragraph", "Second paragraph"]),
    ("Really?! Yes.", ["Really?!", "Yes."]),
    ("Mixed 中文句子。English follows. 再来！", ["Mixed 中文句子。", "English follows.", "再来！"]),
    ("", []),
    ("   \n  ", []),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_spans_within_a_range():
    text = "xx One. Two. yy"
    assert [text[s:e] for s, e in sentence_spans(text, 3, 12)] == ["One.", "Two."]


ALPHABET = st.sampled_from(list("ab 中文。！？.!?…\n\"”）e.g3"))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=200))
def test_spans_cover_every_non_space_char_once(text):
    spans = sentence_spans(text)
    covered = [False] * len(text)
    last = 0
    for s, e in spans:
        assert last <= s < e and not text[s].isspace() and not text[e - 1].isspace()
        for i in range(s, e):
            covered[i] = True
        last = e
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab .!?。\n\"”)", max_size=80), st.integers(0, 80))
@pytest.mark.slow
def test_next_sentence_start_matches_spans(text, pos):
    pos = min(pos, len(text))
    starts = [s for s, _ in sentence_spans(text) if s >= pos]
    assert next_sentence_start(text, 0, pos, len(text)) == (starts[0] if starts else None)
