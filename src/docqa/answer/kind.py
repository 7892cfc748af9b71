"""The kind of value a question asks for, and whether a few words are one (issue 28, item 4 and 7).

A short answer leads with a few words; they must be the kind of thing asked, else a neighbour sentence's value
leads ("35 days" for "How often is the database backed up?", where the sentence before says "every 6 hours").
The question's kind comes from the detection the answerer already uses (docqa.answer.answerability.asked_type:
version, number, path, command, date; docqa.answer.shape.asks_for: file, package, variable, command), with a
number question split further by its words: "how often" asks for a frequency (`every 6 hours`, `daily`, 每天,
or `90 days` after "every"), "how long" for a duration (`35 days`, not `every 6 hours`).

`mismatch(words, question)` says what the question asks for when `words` are not of that kind, None when they
are or when the question asks for no kind.  Lenient where the kind is loose (a "when" question is answered by
"at boot" as well as by a date): it turns away a value of another kind, not every unusual phrasing.
"""

from __future__ import annotations

import re

from docqa.answer import answerability, clause, shape
from docqa.text.segment import STOPWORDS

BEFORE = 12  # characters before the words that may make them a frequency ("every ", "rotated each ", 每)
_FREQUENCY_ASKS = re.compile(r"\bhow\s+(?:often|frequently)\b|\bat\s+what\s+(?:interval|frequency|rate)\b"
                             r"|\bwhat\s+(?:is\s+the\s+)?(?:interval|frequency|schedule)\b|\bhow\s+many\s+times\s+(?:a|an|per|each)\b"
                             r"|(?:多久|多长时间).{0,12}?一次|每隔多久|隔多久|多频繁|频率|间隔", re.IGNORECASE)
_DURATION_ASKS = re.compile(r"\bhow\s+long\b|\bfor\s+how\s+many\s+(?:seconds|minutes|hours|days|weeks|months|years)\b"
                            r"|多久|多长时间|多少天|多少小时|多少分钟|多少秒|期限|有效期", re.IGNORECASE)
# "Which kernel version", "in which feature release", 哪个版本 (answerability's words, and a few between).
_VERSION_ASKS = re.compile(r"\b(?:which|what)\s+(?:[\w.+-]+\s+){0,3}(?:version|release)\b|\bin\s+which\s+(?:\w+\s+)?release\b"
                           r"|哪个版本|什么版本|哪一版|版本号|哪个发行版本", re.IGNORECASE)
# A symbol, a character, a suffix: no kind here (备份文件名后面会加什么符号 asks for "~", not a file).
_NO_KIND = re.compile(r"什么符号|什么字符|哪个字符|哪个符号|什么后缀|什么前缀|\b(?:which|what)\s+(?:character|symbol|suffix|prefix|sign)s?\b",
                      re.IGNORECASE)
_WHICH_FEW = re.compile(r"哪几")
# A frequency: "every 6 hours", "twice a day", "daily", "3 times per run", 每天, 每隔 6 小时, 一天两次.
_FREQUENCY = re.compile(r"\b(?:every|each|per|once|twice|thrice|hourly|daily|nightly|weekly|fortnightly|monthly|quarterly"
                        r"|yearly|annually|always|whenever)\b|\btimes?\b|\b(?:a|an)\s+(?:second|minute|hour|day|week|month|year)\b"
                        r"|每|次|周期", re.IGNORECASE)
# A duration or a length: a number, or "forever", "until the next boot", 永久, 直到 ...
_DURATION = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty"
                       r"|fifty|sixty|ninety|hundred|thousand|a\s+(?:few|couple)|several|forever|indefinitely|permanently"
                       r"|until|till|unlimited|infinite)\b|[一二三四五六七八九十百千万两半]|永久|永远|直到|无限", re.IGNORECASE)
# A date or a time, or when something happens: "2022-10-03", "at boot", "after the upgrade", 启动时.
_WHEN = re.compile(r"\d|\b(?:before|after|during|until|since|at|on|when|whenever|once|every|each|boot|startup|start|shutdown"
                   r"|install(?:ation)?|upgrade|login|now|immediately|never|always|daily|weekly|monthly|yearly)\b"
                   r"|[一二三四五六七八九十]|时|前|后|启动|每|年|月|日", re.IGNORECASE)
_DATE_ASKS = re.compile(r"^\W*(?:and\s+|so\s+|but\s+)?when\b|\bwhat\s+(?:year|date|day|time)\b|\bwhich\s+(?:year|date|day)\b"
                        r"|\bin\s+what\s+year\b|哪一年|哪年|什么时候|何时|哪天|哪一天|日期|时间点", re.IGNORECASE)
# A name of code: one token with a symbol in it (`warn-nopipe`, `glibc-static-devel`, `PermitRootLogin`, `$HOME`).
_CODE = re.compile(r"^[`'\"]?(?:[\w.+/~$=:@<>-]*[-_./~$=:@<>][\w.+/~$=:@<>-]*|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[A-Z][A-Z0-9_]+)[`'\"]?$")
_WORD = re.compile(r"[`'\"]?[a-z][a-z0-9+.]*[`'\"]?")
_QUOTES = "`'\""
_SAID = {"frequency": "a frequency (how often)", "duration": "a duration (how long)", "version": "a version",
         "number": "a number", "path": "a path or file", "file": "a path or file", "command": "a command or option",
         "package": "a package name", "option": "an option or setting", "variable": "a variable, setting or option",
         "date": "a date or time"}


def asked(question: str) -> str | None:
    """The kind of value `question` asks for: frequency, duration, version, number, path, file, package, variable,
    command or date; None: no kind (a fact, a reason, a yes-or-no question ...).  Read in the clause that asks
    (docqa.answer.clause): "When tee is run with -p, which mode ...?" asks for a mode, not a date."""
    question = clause.asking(question)
    if _FREQUENCY_ASKS.search(question):
        return "frequency"
    if _DURATION_ASKS.search(question):
        return "duration"
    if _VERSION_ASKS.search(question):
        return "version"
    if _NO_KIND.search(question):
        return None
    typed = answerability.asked_type(_WHICH_FEW.sub("哪", question))  # 哪几个字段: which fields, not how many
    if typed == "date":
        return "date" if _DATE_ASKS.search(question) else None  # "what happens when ..." asks for no date
    return typed or shape.asks_for(question)


def fits(words: str, kind: str, before: str = "") -> bool:
    """`words` are a value of `kind` (see `asked`); `before`: the text just before them in their sentence, which
    makes "90 days" a frequency in "rotated every 90 days" and not in "kept for 90 days"."""
    lead = before[-BEFORE:]
    if kind == "frequency":
        return _FREQUENCY.search(f"{lead} {words}") is not None
    if kind == "duration":
        return _DURATION.search(words) is not None and not _FREQUENCY.search(f"{lead} {words}")
    if kind == "date":
        return _WHEN.search(words) is not None
    if kind in ("path", "file"):
        return answerability.holds_type(words, "path") or shape.holds_type(words, "file")
    if kind in ("version", "number"):
        return answerability.holds_type(words, kind)
    return shape.holds_type(words, kind) or _names_code(words)


def mismatch(words: str, question: str, before: str = "") -> str | None:
    """What `question` asks for, said in words ("a frequency (how often)"), when `words` (after `before` in their
    sentence) are not of that kind; None when they are, or when the question asks for no kind."""
    kind = asked(question)
    if kind is None or fits(words, kind, before):
        return None
    return _SAID[kind]


def _names_code(words: str) -> bool:
    """`words` name a thing of code: up to four tokens, one of them with a symbol (`warn-nopipe`), in camel or
    upper case (`PermitRootLogin`), or lower-case words that are no sentence (`acmectl keys rotate`, not "the keys
    are rotated")."""
    tokens = words.split()
    if not tokens or len(tokens) > 4:
        return False
    if any(_CODE.match(t) for t in tokens):
        return True
    return all(_WORD.fullmatch(t) and t.strip(_QUOTES) not in STOPWORDS for t in tokens)
