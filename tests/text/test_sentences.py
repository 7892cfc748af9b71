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
    # abbreviations as README and FAQ files write them (Valgrind FAQ, postgresql-common and systemd README.Debian)
    ('The "grind" is pronounced with a short \'i\' -- ie. "grinned" (rhymes with "tinned"). Next.',
     ['The "grind" is pronounced with a short \'i\' -- ie. "grinned" (rhymes with "tinned").', "Next."]),
    ('This will allow you to look at previous boot logs with e. g.\n"journalctl -b -1". Done.',
     ['This will allow you to look at previous boot logs with e. g.\n"journalctl -b -1".', "Done."]),
    ("E. g. if you first install \"postgresql-11\" on a clean system, it runs on port 5432. Fine.",
     ["E. g. if you first install \"postgresql-11\" on a clean system, it runs on port 5432.", "Fine."]),
    ("Literal patterns (eg. 'Makefile') must be matched first. Then globs.",
     ["Literal patterns (eg. 'Makefile') must be matched first.", "Then globs."]),
    ("That is, i. e. The default value. Another.", ["That is, i. e. The default value.", "Another."]),
    ("Compare gzip vs. Bzip2 first. Then decide.", ["Compare gzip vs. Bzip2 first.", "Then decide."]),
    # "etc." ends a sentence when a capitalised word follows; inside one it does not
    ("It reads grep, sed, awk, etc. The next step runs it.", ["It reads grep, sed, awk, etc.", "The next step runs it."]),
    ("Tools (grep, sed, etc.) are run. Then stop.", ["Tools (grep, sed, etc.) are run.", "Then stop."]),
    # "No." and "Fig." are abbreviations before a number only
    ("See No. 5 and Fig. 3 for details. The answer is no. Then go.",
     ["See No. 5 and Fig. 3 for details.", "The answer is no.", "Then go."]),
    # a man page translated with ASCII marks: a period between Chinese characters ends the sentence
    ("/etc/group 是一个ASCII码的文件,它定义了用户所属的组.文件中每行包括一条记录,其格式如下:",
     ["/etc/group 是一个ASCII码的文件,它定义了用户所属的组.", "文件中每行包括一条记录,其格式如下:"]),
    ("请打开 文件.txt 再看。", ["请打开 文件.txt 再看。"]),
    # a version at a sentence's end is no dotted abbreviation (Valgrind NEWS)
    ("They were deprecated in 3.10.0. The options have been removed.",
     ["They were deprecated in 3.10.0.", "The options have been removed."]),
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
