"""A short option's case is its meaning: where the answerer measures a question's terms in a sentence (coverage,
exact tokens), `-W` holds only where the text writes `-W`.  Lines from the manpages-zh man pages (tar, ls, grep, ssh)
as the man reader renders them."""

from __future__ import annotations

import pytest

from docqa.retrieve.snippet import coverage, highlight
from docqa.text import exact_tokens, holds_exact
from docqa.text.segment import OptionTerm, query_terms

# (question, the line that answers it, its sibling option's line of the same man page)
CASES = [
    ("tar 的 -W 選項是做什麼用的？", "-W, --verify 寫完存檔後對其進行校驗", "-w, --interactive, --confirmation 每一個動作都要求確認"),
    ("tar 的 -w 選項是做什麼用的？", "-w, --interactive, --confirmation 每一個動作都要求確認", "-W, --verify 寫完存檔後對其進行校驗"),
    ("tar -L 後面跟的數字是什麼意思？", "-L, --tape-length N 在寫入了N*1024位元組後， 更換磁帶",
     "-l, --check-links 如果檔案系統中檔案的硬連結數和存檔中記錄的不同， 則發出警告"),
    ("ls -L 对符号链接做什么？", "-L, --dereference 显示符号链接的文件信息时，显示符号链接指向的文件的信息，而非符号链接本身的信息",
     "-l 使用长列表格式"),
    ("grep -E 是什么意思", "-E, --extended-regexp 将模式 PATTERN 作为一个扩展的正则表达式来解释 (参见下面)。",
     "-e PATTERN, --regexp=PATTERN 使用模式 PATTERN 作为模式；在保护以 - 为起始的模式时有用。"),
    ("What does grep -V print?", "-V, --version 向标准错误输出打印 grep 的版本号。", "-v, --invert-match 改变匹配的意义，只选择不匹配的行。"),
    ("ssh 用-p指定什么？", "-p port 指定远程主机的端口。", "-P tag 指定一个标签"),
]


@pytest.mark.parametrize(("question", "answer", "sibling"), CASES)
def test_a_short_option_covers_only_the_line_that_writes_its_case(question, answer, sibling):
    terms = query_terms(question)
    assert coverage(answer, terms) > coverage(sibling, terms)


@pytest.mark.parametrize(("question", "answer", "sibling"), CASES)
def test_a_short_option_is_an_exact_token_held_only_as_written(question, answer, sibling):
    option = next(t for t in exact_tokens(question) if t.startswith("-"))
    assert holds_exact(answer, option)
    assert not holds_exact(sibling, option)


@pytest.mark.parametrize(("question", "written"), [
    ("tar 的 -W 選項是做什麼用的？", "W"),
    ("gcc 用-O2编译", "O2"),  # a letter glued to a value, Chinese touching it
    ("what does -d1 mean here", "d1"),
])
def test_the_option_term_keeps_the_case_it_was_written_in(question, written):
    term = next(t for t in query_terms(question) if isinstance(t, OptionTerm))
    assert term == written.lower() and term.written == written  # equal to the index's term: weights keyed by it find it
    assert {written.lower(): 2.0}.get(term) == 2.0


@pytest.mark.parametrize("question", [
    "tar 的 -w 和 -W 有什么区别？",  # both cases asked: the letter stays case-blind
    "grep --Extended-regexp 是什么",  # a long option: no case
    "find -name 和 gcc -Wall 是什么",  # a single-dash word is not a short option
    "What does the x key do, and what does -x do?",  # the letter also written as a word
])
def test_what_is_not_one_short_option_stays_case_blind(question):
    assert not any(isinstance(t, OptionTerm) for t in query_terms(question))


def test_long_options_and_words_stay_case_blind():
    assert holds_exact("-W, --VERIFY", "--verify")
    assert coverage("Tar can VERIFY the archive after writing it.", query_terms("tar -W verify")) == pytest.approx(2 / 3)
    assert highlight("-W, --verify", query_terms("tar -W")) == "-**W**, --verify"
    assert highlight("-w, --interactive", query_terms("tar -W")) == "-w, --interactive"
