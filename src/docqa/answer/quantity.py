"""A question that asks how many or how much, quoted with no quantity: a near miss (issue 28, items 2 and 4).

Documentation that discusses a subject without the figure asked for still shares the question's words: "How many
characters may an ASN.1 identifier have at most in libtasn1?" finds "ASN1_MAX_NAME_SIZE is the maximum number of
characters allowed for an ASN.1 identifier.", "CVE-2023-25652 的 CVSS 评分是多少？" finds release notes that name the
CVE, "manpages-zh 软件包一共收录了多少个中文手册页？" finds the year the project started.  None of them states a
quantity the question does not write itself, so no answer can say how many; the extractive answerer abstains on
such a question (`unanswered`), whatever its evidence, as it does on a release question no version answers
(docqa.answer.release).

A quantity here is a number standing alone with or without its unit (`AMOUNT`, the ranking's `amount`:
`120 seconds`, `4MiB`, `10%`, `+1`, `port 5432`, `一个月`), an IPv4 address (`10.0.2.2`, asked with 多少), or a
number written in words (`three`, `twenty`, 三十, 两百); not a number the question writes (`CVE-2023-25652`,
`2.35`), a piece of a name or version (`ASN1_MAX_NAME_SIZE`, `v2.30.9`), a date (`18 August 2022`, `2016 年末`,
`Mon, 02 Dec 2019 11:45:52 +0100`) or a section number leading a heading (`2.5 Future developments`).  No limit and
no end answer such a question too (`unlimited`, `until the next boot`, `indefinitely`, 没有限制, 永久).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.answer import answerability, clause, kind
from docqa.text.language import HAN

# The kinds of value (docqa.answer.kind.asked) a quantity answers: "how many / how much / 多少 / 几个", "how long / 多久".
ASKED = ("number", "duration")
# "几倍 / 几层 / 几次" (how many times, levels ...), which the kinds do not read as a number question; not 哪几 (which).
_FEW = re.compile(r"(?<!哪)几(?:倍|层|次|级|行|列|位|天|秒|分钟|小时|个|种|项|条|台|兆)")
# a superlative over a measured thing (docqa.answer.clause.EXTREME): "What is the largest file bzip2 can compress?"
_EXTREME = re.compile(clause.EXTREME, re.IGNORECASE)
# A quantity standing alone with its unit, or none: a number not inside a name or version (the same as the
# sentence ranking's `amount`, docqa.answer.extractive; `LIST_MARKER`: a list item's number, left aside).
AMOUNT = re.compile(r"(?<![A-Za-z0-9_.\-/(\[])[+]?\d+(?:[.,]\d+)?(?![0-9]|\.\d|-[0-9A-Za-z])"
                    r"(?:\s?(?:%|[KMGTP]i?B?|[kmgt]b|bytes?|bits?|ms|seconds?|minutes?|hours?|days?|weeks?|months?|years?|times|x)"
                    r"(?![A-Za-z0-9_])|(?![A-Za-z_]))"
                    # a number in words before its unit ("一个月", "两天", "one month"), not "第一个" or "一起"
                    r"|(?<!第)[一二两三四五六七八九十百千万]+\s?个?(?:月|天|日|小时|分钟|秒|年|周|星期|次|倍|字节)"
                    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|hundred|thousand)\s+"
                    r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|times|bytes)\b", re.IGNORECASE)
LIST_MARKER = re.compile(r"^\s*\d{1,2}[.)]\s")
_IPV4 = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.]*\d)")
# A number in words: lower case (so "Abstract Syntax Notation One" names no quantity), or Chinese numerals that are no
# lone 一 ("一些", "一个好主意", "统一"): 三, 两百, 一千, 数十.
_WORDS = re.compile(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
                    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundreds?|thousands?"
                    r"|millions?|billions?|dozens?|half|twice|thrice|once|double|triple)\b"
                    r"|[二两三四五六七八九十百千万亿]|[一数几][十百千万亿]")
# No limit, or how long something lasts with no figure: "unlimited", "any number of", "until the next boot", "indefinitely",
# 不限, 没有限制, 永久, 直到 ...: an answer to "how many / how long" that names no number.
_UNBOUNDED = re.compile(r"\b(?:unlimited|infinite(?:ly)?|indefinitely|forever|permanently|until|till|no\s+(?:limit|maximum|upper\s+bound)"
                        r"|any\s+number|as\s+many\s+as)\b|不限|无限|没有限制|没有上限|永久|永远|直到", re.IGNORECASE)
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?"
          r"|Nov(?:ember)?|Dec(?:ember)?)\b\.?")
# Dates and times: "18 August 2022", "August 18, 2022", "Mon, 02 Dec 2019 11:45:52 +0100", "2022-08-18", "2016 年末",
# "2007 年 11 月", "11月3日".
_DATE = re.compile(rf"\b\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b|\b{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}\b|\b{_MONTH}\s+\d{{4}}\b"
                   r"|\b\d{4}-\d\d-\d\d\b|\b\d{1,2}:\d\d(?::\d\d)?(?:\s*[+-]\d{4})?"
                   r"|(?:19|20)\d\d\s*年(?:\s*\d{1,2}\s*月)?(?:\s*\d{1,2}\s*日)?|\d{1,2}\s*月\s*\d{1,2}\s*日")
# A section number leading a heading: "2.5 Future developments", "2 2.1 ASN.1 syntax.", "3.1 调用" (not "2.5 GB",
# "2.5 Megabytes").
_SECTION = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?\s+)*\d+(?:\.\d+)+\.?\s+"
                      rf"(?=(?!(?:Mega|Giga|Kilo|Tera|[KMGTP]i?B\b|[KMGT]bit|[KMGT]byte|[KMGT]Hz|[KMGT]bps))[A-Z][A-Za-z]{{2,}}|[{HAN}])")


def asks(question: str) -> bool:
    """Whether `question` asks for a quantity: how many, how much, how long (docqa.answer.kind.asked), 几倍, or the
    largest file or the highest level."""
    return kind.asked(question) in ASKED or _FEW.search(question) is not None or _EXTREME.search(question) is not None


def holds(text: str, question: str) -> bool:
    """Whether `text` states a quantity `question` does not write itself (see the module docstring)."""
    text = _SECTION.sub(" ", LIST_MARKER.sub(" ", text, count=1), count=1)
    text = _DATE.sub(" ", answerability.unwritten(text, question))
    return any(p.search(text) for p in (AMOUNT, _IPV4, _WORDS, _UNBOUNDED))


def unanswered(question: str, quoted: Iterable[str]) -> bool:
    """A question that asks for a quantity, and none of the `quoted` sentences states one it does not write itself:
    the documents discuss the subject, not the figure asked."""
    return asks(question) and not any(holds(text, question) for text in quoted)
