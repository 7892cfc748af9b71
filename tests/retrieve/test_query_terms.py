"""What full-text search is asked: a question's subject, not its framing (parse_query, search_terms)."""

from __future__ import annotations

import pytest

from docqa.retrieve import parse_query
from docqa.text.segment import query_terms

# Real questions of the trust dev set's kind: long, conversational, with the subject in a few words.
CASES = [
    ("打包完以后我想让 tar 顺手把已经放进归档的原始文件删掉，有这种选项吗？叫什么？",
     {"tar", "归档", "原始", "文件", "删掉", "选项"}, {"我", "想", "让", "顺手", "把", "已经", "这种", "叫"}),
    ("du 只想看当前目录下第一层子目录各占多少空间、不要往下展开，应该用哪个选项？",
     {"du", "当前目录", "子目录", "空间", "选项"}, {"只", "想", "应该", "用", "哪个"}),
    ("apt 在没有终端（比如 cron 里）时，遇到 dpkg 锁会等多久？", {"apt", "终端", "cron", "dpkg", "锁"}, {"时", "会"}),
    ("How many frames does Valgrind show in a stack trace by default?", {"frames", "valgrind", "stack", "trace", "default"}, {"many"}),
    ("I want to know which option tells tar to remove the files", {"option", "tells", "tar", "remove", "files"}, {"want", "know"}),
]


@pytest.mark.parametrize(("question", "kept", "dropped"), CASES)
def test_search_terms_keep_the_subject_and_drop_the_framing(question, kept, dropped):
    terms = set(parse_query(question).terms)
    assert kept <= terms, kept - terms
    assert not dropped & terms, dropped & terms
    assert dropped <= set(query_terms(question))  # the answerer's own terms are untouched


def test_a_question_of_framing_alone_still_searches_its_words():
    assert parse_query("我想知道").terms == query_terms("我想知道") != []
    assert parse_query("what do I want").terms == ["want"]
