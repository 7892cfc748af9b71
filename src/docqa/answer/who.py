"""A question that asks who did something, quoted with no name: a near miss (issue 28, items 2 and 4).

"CVE-2024-32002 是谁发现的？" finds the release notes that fix the CVE ("This addresses the security issues
CVE-2024-32002, CVE-2024-32004, ..."), which do not say who found it; the notes of another release do ("Credit for
finding CVE-2022-39260 goes to Kevin Backhouse of GitHub.").  A question that asks who found, reported, wrote,
maintains or fixed something (`asks`) is answered by a name: documentation writes a person's, a team's or a company's
name in Latin letters with a capital ("Kevin Backhouse", "GitHub", "the Debian Edu team"), or an address
(<juliank@ubuntu.com>) or a handle (@dscho).  An English sentence with no such name beside those the question writes
itself, and not as its first word, cannot say who; the extractive answerer abstains when none of the sentences it
quotes holds one (`unanswered`), as it does on a quantity question no quoted sentence states a quantity for
(docqa.answer.quantity).  A sentence with Chinese characters may name a person in them, which no pattern tells from
other words: it is taken to name one.  "Who can log in?" asks for a role ("root", "users of the group"), not a name:
only the doing verbs below ask for one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.text.language import has_cjk

_DEEDS_EN = (r"discover|found|find|report|wr[io]te|written|author|creat|develop|maintain|credit|fix|design|invent|translat"
             r"|propos|contribut|sponsor|fund|implement")
_DEEDS_ZH = r"发现|报告|报告了|编写|撰写|写的|开发|维护|创建|设计|发明|修复|翻译|提出|贡献|创立|发起|实现"
ASKS = re.compile(rf"\bwho\b[^?]{{0,80}}?\b(?:{_DEEDS_EN})\w*|\bby\s+whom\b"
                  rf"|谁[^？?，,]{{0,10}}?(?:{_DEEDS_ZH})|(?:{_DEEDS_ZH})[^？?，,]{{0,10}}?是谁|由谁|作者是谁|是谁(?:{_DEEDS_ZH})",
                  re.IGNORECASE)
# A capitalised word (not all capitals: "CVE", "SSH" name no one), an e-mail address, a handle.
_NAME = re.compile(r"(?<![\w.@/-])[A-Z][a-z]+(?:[A-Z][a-z]*)*(?![\w@-])|[\w.+-]+@[\w-]+\.[\w.]+|(?<![\w@])@[A-Za-z][\w-]+")
_FIRST = re.compile(r"^[^A-Za-z]*[A-Za-z]+")  # the first word of the sentence: a capital there names no one


def asks(question: str) -> bool:
    """Whether `question` asks who did something (found, reported, wrote, maintains ...): a name answers it."""
    return ASKS.search(question) is not None


def names(text: str, question: str) -> bool:
    """Whether `text` names someone the question does not name itself (see the module docstring)."""
    if has_cjk(text):
        return True
    first = _FIRST.match(text)
    text = text[first.end():] if first is not None else text
    written = {w.lower() for w in re.findall(r"[A-Za-z][\w.+-]*", question)}
    return any(m.group().lower().strip("@") not in written for m in _NAME.finditer(text))


def unanswered(question: str, quoted: Iterable[str]) -> bool:
    """A question that asks who did something, and none of the `quoted` sentences names anyone it does not."""
    return asks(question) and not any(names(text, question) for text in quoted)
