"""What the decision counts as a question's missing words, measured on real question / sentence pairs of the trust dev
split's false abstentions (issue 28, `falseabs5`): a word that is no content (a Chinese negation, "里" for "in", a
clitic the tokenizer cut off "Debian's" (nor is it held by "ssh's"), "supposed to") is not missing content; "版本" is answered by a version; a
sentence that forbids what the question asks as negated does not contradict it (extractive.FORBIDS, off as shipped).  A word of the subject still counts."""

from __future__ import annotations

import pytest

from docqa.answer import extractive
from docqa.answer.extractive import _contradicts, evidence_features
from docqa.text.segment import fold, query_terms

SHUTDOWN_Q = "我用 shutdown +30 安排半小时后关机。普通用户从什么时候开始就登录不进来了？靠的是什么文件？这种文件存在时还有谁能登录？"
SHUTDOWN_S = "如果使用了 [TIME] 参数， 那么在关机流程开始前5分钟将会创建 /run/nologin 文件， 以禁止用户登录。"
DU_Q = "du 只想看当前目录下第一层子目录各占多少空间、不要往下展开，应该用哪个选项？"
DU_S = "-d, --max-depth=N 仅当目录（或在 --all 选项启用时包括文件）层级不高于命令行参数指定的 N 层时输出对应目录或文件的对应大小"
JOURNALD_Q = "journald 能不能直接把日志发到局域网里另一台机器的 syslog 服务器上？在 journald.conf 里配对方 IP 的是哪个选项？"
JOURNALD_S = "ForwardToSyslog= 控制是否将接收到的日志消息转发给传统的 syslog 守护进程。"
SHA_Q = "我下载了一个 ISO 和它的 SHA256SUMS 文件，想一次性校验是否一致，sha256sum 用哪个参数？"
SHA_S = "-c, --check\n从指定文件中校验和信息并对它们进行检查"
SSH_Q = "Does Debian's ssh client forward X11 by default?"
SSH_S = "ssh's default for ForwardX11 has been changed to ``no''"
FIREFOX_Q = "Debian Edu 10 Buster 自带的 Firefox ESR 是哪个版本？"
FIREFOX_S = "Firefox 60.7 ESR 和 Chromium 73.0"
FIREFOX_NONE = "新的默认桌面环境 Xfce（取代 KDE）。"  # the same list of the manual, no version in it
VALGRIND_Q = "How is the name Valgrind supposed to be pronounced?"
VALGRIND_S = "The \"grind\" is pronounced with a short 'i' -- ie. \"grinned\" (rhymes with \"tinned\") rather than \"grined\" (rhymes with \"find\")."


def _missing_rare(question: str, sentence: str, rarest: str) -> float:
    """`missing_rare` with `rarest` weighed as the question's rarest term and every other term nearly nothing: near 1
    when `rarest` counts as missing, near 0 when it does not."""
    terms = query_terms(question)
    assert rarest in {fold(t) for t in terms}  # the tokenizer does make it a term of the question
    weights = {fold(t): (1.0 if fold(t) == rarest else 0.01) for t in terms}
    return evidence_features(question, sentence, sentence, terms, weights, 0.5, 0.6)["missing_rare"]


@pytest.mark.parametrize("question, sentence, rarest", [
    (SHUTDOWN_Q, SHUTDOWN_S, "不"),        # the negation: `contradiction` measures whether the sentence states it
    (DU_Q, DU_S, "不要"),
    (JOURNALD_Q, JOURNALD_S, "里"),       # "在 journald.conf 里": "in"
    (SHA_Q, SHA_S, "一个"),               # "下载了一个 ISO": "an"
    (FIREFOX_Q, FIREFOX_S, "版本"),       # "哪个版本" answered by 60.7
    (VALGRIND_Q, VALGRIND_S, "supposed"),  # "supposed to be": framing
])
def test_a_word_that_is_no_content_is_not_missing(question, sentence, rarest):
    assert _missing_rare(question, sentence, rarest) < 0.05


@pytest.mark.parametrize("question, sentence, rarest", [
    (FIREFOX_Q, FIREFOX_NONE, "版本"),   # no version in the sentence: "版本" is not answered
    (FIREFOX_Q, FIREFOX_S, "自带"),       # a word of the subject
    (VALGRIND_Q, VALGRIND_S, "valgrind"),
    (SHUTDOWN_Q, SHUTDOWN_S, "普通用户"),
])
def test_a_word_of_the_subject_still_counts_missing(question, sentence, rarest):
    assert _missing_rare(question, sentence, rarest) == 1.0


@pytest.mark.parametrize("question, sentence, matched", [
    (SSH_Q, SSH_S, 3.0),  # ssh, forward (ForwardX11), default: "ssh's" held the "s" of "Debian's", a fourth
    ("Don't I need a key?", "You don't need a key.", 2.0),  # need, key: not "don" and "t"
])
def test_a_clitic_the_tokenizer_cuts_off_is_no_term(question, sentence, matched):
    terms = query_terms(question)
    f = evidence_features(question, sentence, sentence, terms, {fold(t): 1.0 for t in terms}, 0.5, 0.6)
    assert f["matched"] == matched


@pytest.mark.parametrize("question, sentence, contradicts", [
    (SHUTDOWN_Q, SHUTDOWN_S, False),   # "以禁止用户登录": users cannot log in
    ("Why are root logins over SSH not accepted?", "Root logins are refused unless PermitRootLogin is set.", False),
    (SHUTDOWN_Q, "如果使用了 [TIME] 参数， 那么在关机流程开始前5分钟将会创建 /run/nologin 文件。", True),
    ("Which ASN.1 types does libtasn1 not handle?", "Supported ASN.1 types, list of .", True),
    # the question asks what was not forbidden: a sentence of what was forbidden says the opposite
    ("What did the treaty not prohibit?", "The treaty prohibited the use of chemical weapons.", True),
])
def test_a_sentence_that_forbids_states_the_negated_fact(question, sentence, contradicts, monkeypatch):
    """With extractive.FORBIDS on (off as shipped: a sentence forbids other things than what the question negates)."""
    monkeypatch.setattr(extractive, "FORBIDS", True)
    assert _contradicts(question, sentence) is contradicts


def test_as_shipped_a_sentence_that_forbids_still_contradicts_a_negated_question():
    """SQuAD 2.0's near miss: "prohibited" in the sentence is about duties, not about what the EU does not manage."""
    assert _contradicts("What the the EU not manage from non-member states?",
                        "The EU manages imports from non-member states, duties between member states are prohibited, "
                        "and imports circulate freely.")


# The debian-edu Buster manual's list of new software, as the HTML reader gives it: an item names a version, its lead-in
# the release it is new in (debian-edu-zh-035).
BUSTER = """28.1.2. 软件更新

Debian 10 Buster 中所有新的部分，例如：

- Linux 内核 4.19
- Firefox 60.7 ESR 和 Chromium 73.0
- LibreOffice 6.1
"""


def _read(question: str, chunk: str, sentence: str) -> dict[str, float]:
    text = extractive._as_item(chunk, chunk.index(sentence), sentence)
    terms = query_terms(question)
    return evidence_features(question, text, text, terms, {fold(t): 1.0 for t in terms}, 0.5, 0.6)


def test_a_list_item_is_read_under_its_lead_in():
    f = _read(FIREFOX_Q, BUSTER, FIREFOX_S)
    assert f["matched"] == 5.0  # debian, 10, buster (the lead-in), firefox, esr (the item)
    assert f["missing_rare"] == 1.0  # "自带" is still missing: a word of the subject


def test_a_sentence_in_no_list_is_read_alone():
    chunk = "Debian 10 Buster 中所有新的部分。\nFirefox 60.7 ESR 和 Chromium 73.0 也在其中。\n"
    assert extractive._as_item(chunk, chunk.index("Firefox"), "Firefox 60.7 ESR 和 Chromium 73.0 也在其中。") == \
        "Firefox 60.7 ESR 和 Chromium 73.0 也在其中。"


def test_without_lead_decision_an_item_is_read_alone(monkeypatch):
    monkeypatch.setattr(extractive, "LEAD_DECISION", False)
    assert _read(FIREFOX_Q, BUSTER, FIREFOX_S)["matched"] == 2.0  # firefox, esr
