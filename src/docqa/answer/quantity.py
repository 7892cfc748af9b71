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

The quantity must be of the kind asked (`measure`): a multiple for "how many times slower" / 几倍 (`5x`, not `2 GiB`),
a size for "how large" / 多大, a time or a bare figure for "how long" / 多久 (not "三个主机名"), the counted thing or a
bare number for "how many X" / 多少个X; and of the subject asked: a sentence about the subject a question sets aside
("How long does apt-get (not apt) wait ...?": apt's "120 seconds") states none for it, nor does one that states its
figure for the case without a thing the question asks about ("How many times slower ... under full Callgrind
instrumentation?": "running your program without any instrumentation (... about 5x)", "Nulgrind, adds no
instrumentation at all and causes ... about a 4 times slowdown"), nor, across languages, one that lacks a token of the
question both languages write alike (docqa.answer.neutral: "systemd 系统上 render 组的 GID 是多少？" is not answered by
"the `tty` group must have the GID 5" in a passage that never writes "render"; the sentence is read with its passage's
text, title, section and file name, where a release note's item names its CVE once).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.answer import answerability, clause, kind, neutral
from docqa.answer.facts import normalise
from docqa.text.exact import holds_exact
from docqa.text.language import HAN
from docqa.text.segment import STOPWORDS

# The kinds of value (docqa.answer.kind.asked) a quantity answers: "how many / how much / 多少 / 几个", "how long / 多久".
ASKED = ("number", "duration")
# "几倍 / 几层 / 几次" (how many times, levels ...), which the kinds do not read as a number question; not 哪几 (which),
# nor 那几 / 这几 / 好几 / 十几 ("those few", "these few", "several", "a dozen or so": no question), and only in the clause
# that asks (`_asking_clauses`): "想知道每一行重复出现了几次，uniq 该加哪个参数？" asks for an option, not a count.
_FEW = re.compile(r"(?<![哪那这好十])几(?:倍|层|次|级|行|列|位|天|秒|分钟|小时|个|种|项|条|台|兆)")
# The last clause of each asked sentence: what follows its last comma or semicolon up to its question mark.
_ASKING_CLAUSE = re.compile(r"[^，,；;。！!?？]*[?？]")
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
# A number in words: lower case (so "Abstract Syntax Notation One" names no quantity; nor "one of the libsasl2-modules*
# packages", "one or more", "one another": which, not how many), or Chinese numerals that are no lone 一 ("一些", "一个好主意", "统一"): 三, 两百, 一千, 数十.
_WORDS = re.compile(r"\b(?:one(?!\s+(?:of|or|another)\b)|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
                    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundreds?|thousands?"
                    r"|millions?|billions?|dozens?|half|twice|thrice|once|double|triple)\b"
                    r"|[二两三四五六七八九十百千万亿]|[一数几][十百千万亿]")
# Whether a default asked for must be stated as one (`_not_the_default`).  Measured on dev 4 near misses better, one
# answer (uncited) lost; valid unchanged; on test (read once) one right answer lost: "Memcheck adds and protects a minimum
# of 16 bytes before and after each block" states the default redzone as what Memcheck does, with no word for "default".
DEFAULT_STATED = True
# A default asked for: "by default", "the default limit", "initially", 默认, 缺省, 预设, 初始.
_DEFAULT_ASKS = re.compile(r"\bdefault|\binitial(?:ly)?\b|默认|缺省|预设|初始", re.IGNORECASE)
# ... and stated: so, or as the case where nothing is given: "if omitted", "unless specified", "when not given",
# 当行数没有给出时, 不指定时, 省略时.
_DEFAULT = re.compile(r"\bdefault|\binitial(?:ly)?\b|\bunless\b|\b(?:if|when)\s+(?:it\s+is\s+|they\s+are\s+)?(?:omitted|not\s+(?:given|specified|set|supplied))"
                      r"|默认|缺省|预设|初始|没有给出|未给出|未指定|不指定|没有指定|省略", re.IGNORECASE)
# No limit, or how long something lasts with no figure: "unlimited", "any number of", "until the next boot", "indefinitely",
# 不限, 没有限制, 永久, 直到 ...: an answer to "how many / how long" that names no number.
_UNBOUNDED = re.compile(r"\b(?:unlimited|infinite(?:ly)?|indefinitely|forever|permanently|until|till|no\s+(?:limit|maximum|upper\s+bound)"
                        r"|any\s+number|as\s+many\s+as)\b|不限|无限|没有限制|没有上限|永久|永远|直到", re.IGNORECASE)
# ... of them, how long something lasts: no answer to how large or how many
_ENDLESS = re.compile(r"indefinitely|forever|permanently|until|till|永久|永远|直到", re.IGNORECASE)
# A bug or issue number ("Closes: #945911"): no quantity.
_ISSUE = re.compile(r"#\d+")
# A question that sets a subject aside: "apt-get (not apt)", "apt-get rather than apt", "apt-get 而不是 apt".
_NAME = r"[A-Za-z0-9][\w.+-]*"
_NOT = re.compile(rf"({_NAME})\s*[(（]\s*(?:not|but\s+not|不是|而非)\s+({_NAME})\s*[)）]"
                  rf"|({_NAME})\s*,?\s*(?:rather\s+than|instead\s+of|而不是|而非)\s*({_NAME})", re.IGNORECASE)
# A case without a thing: "without (any) instrumentation", "adds no instrumentation", "with no cache simulation".
_WITHOUT = r"\b(?:without|no|not\s+any)\s+(?:any\s+|the\s+|a\s+|an\s+)?"
_CONTENT = re.compile(r"[A-Za-z][A-Za-z-]{3,}")
_ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）")  # an aside between brackets
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


# What a quantity question asks for, beyond "a number" (`measure`): how many times as much ("how many times slower",
# 几倍, 多少倍), a size ("how large", "how much memory", 多大, 多少空间), how many of a counted thing ("how many frames",
# 多少个字符); kind.asked gives a duration and a frequency.
_MULTIPLE_ASKS = re.compile(r"\bhow\s+many\s+times\s+(?:more|less|slower|faster|larger|bigger|smaller|higher|as)\b|\bby\s+what\s+factor\b"
                            r"|几倍|多少倍", re.IGNORECASE)
_SIZE_ASKS = re.compile(r"\bhow\s+(?:large|big)\b|\bwhat\s+size\b|\bhow\s+much\s+(?:memory|ram|disk|space|storage)\b"
                        r"|多大|多少(?:磁盘|硬盘|存储)?空间|多少内存|多少容量", re.IGNORECASE)
# "What is the default HTTP timeout apt uses?": a timeout, a delay or an interval asked for by its name asks how long
# (not "What is the timeout option called?").
_TIME_NAMED = re.compile(r"\bwhat(?:\s+is|'s|\s+are)\s+the\s+(?:[\w.-]+\s+){0,3}?(?:timeout|time-out|delay|interval|lifetime)s?\b"
                         r"(?!\s+(?:options?|settings?|variables?|directives?|keys?|parameters?|flags?|called|named)\b)", re.IGNORECASE)
# "How many megabytes per second ...?", 每秒多少: a rate, a quantity per unit of time ("3 MB/s", "10 per second", 每秒 5 次).
_RATE_ASKS = re.compile(r"\bper\s+(?:second|sec|minute|hour)\b|每秒|每分钟|每小时", re.IGNORECASE)
_RATE_UNIT = re.compile(r"[^\d\n]{0,16}?(?:/\s?(?:s|sec|second|min|minute|h|hour)\b|\bper\s+(?:second|sec|minute|hour)\b|每秒|/秒)",
                        re.IGNORECASE)
_RATE_BEFORE = re.compile(r"每秒|每分钟|每小时")
_ZH_COUNTER = "个個种種项項条條位门門台行列层層次件张張本"
# (the counted thing: no counter and no verb, 多少种是完整翻译的 counts nothing named)
_COUNT_ASKS = re.compile(rf"\bhow\s+many\s+(?!times\b)([a-z][a-z-]+)"
                         rf"|(?:多少|几)\s*[{_ZH_COUNTER}]?\s*(?![是的了在就都也还会能可有要{_ZH_COUNTER}])([{HAN}]{{1,2}})", re.IGNORECASE)
# The unit right after a number, by kind: a time ("120 seconds", 一个月, 两天), a size or a share ("4MiB", "2300 kbytes",
# "10%", 2 GiB, 字节), a multiple ("5x", "4 times", 倍), a counted thing in Chinese (三个主机名: `counted`).
_TIME_UNIT = re.compile(r"\s?(?:ms\b|milliseconds?|seconds?|secs?\b|s\b|minutes?|mins?\b|hours?|h\b|days?|weeks?|months?|years?"
                        r"|个?(?:月|天|日|小时|钟头|分钟|秒|年|周|星期))", re.IGNORECASE)
_SIZE_UNIT = re.compile(r"\s?(?:%|percent\b|[KMGTP]i?B?\b|[kmgt]bytes?\b|(?:kilo|mega|giga|tera)(?:bytes?)?\b|bytes?\b|bits?\b"
                        r"|字节|兆|千字节|位元)", re.IGNORECASE)
_MULTIPLE_UNIT = re.compile(r"\s?(?:x\b|×|times\b|-?fold\b|倍)", re.IGNORECASE)
_COUNTED = re.compile(rf"\s?[{_ZH_COUNTER}]\s*([{HAN}]{{1,2}})")
_NUMBER_AT = re.compile(r"[+]?\d+(?:[.,]\d+)*|[一二两三四五六七八九十百千万亿数几]+|[A-Za-z]+")
_UNIT_WORDS = re.compile(r"\s(?:million|thousand|hundred|billion)\b", re.IGNORECASE)


_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)
# "What exit status …", "which return code …", 退出状态 / 返回值是多少: a status is a number; "non-zero", "zero",
# EXIT_FAILURE, 非零 answer it in words (not "fails", which any description of an error writes).
_STATUS = re.compile(r"\b(?:what|which)\s+(?:\w+\s+){0,2}(?:exit\s+(?:status|code|value)|return\s+(?:code|value|status)|status\s+code"
                     r"|error\s+code)s?\b|(?:退出|返回)(?:状态|码|值|代码)(?:是|为)?(?:多少|什么|几)", re.IGNORECASE)
_STATUS_WORDS = re.compile(r"\b(?:non-?zero|zero|EXIT_[A-Z]+)\b|非零|非 0|零", re.IGNORECASE)


# A limit asked with "how long can / may ..." is a time or a length ("How long can a line get?": 2KB), as is 多长 but
# not 多长时间; "How long are backups kept?" and 多久 ask for a time.
_LONG = re.compile(r"\bhow\s+long\s+(?:can|could|may|might|must|should)\b|多长(?!时间)", re.IGNORECASE)


def measure(question: str) -> str:
    """What a quantity question asks for: "frequency", "duration", "length" (a time or a length), "rate" (per second),
    "multiple", "size", "count" (how many of a thing the question names) or "number" (any quantity)."""
    asked = kind.asked(question)
    if asked == "duration" and _LONG.search(question):
        return "length"
    if asked in ("frequency", "duration"):
        return asked
    if _TIME_NAMED.search(question):
        return "duration"
    if _RATE_ASKS.search(question):
        return "rate"
    if _MULTIPLE_ASKS.search(question):
        return "multiple"
    if _SIZE_ASKS.search(question):
        return "size"
    return "count" if _COUNT_ASKS.search(clause.asking(question)) else "number"


def _unit(text: str, end: int) -> str:
    """The kind of the unit after a number that ends at `end` of `text`: time, size, multiple, counted or none."""
    after = _UNIT_WORDS.sub("", text[end : end + 24], count=1)
    for name, pattern in (("multiple", _MULTIPLE_UNIT), ("time", _TIME_UNIT), ("size", _SIZE_UNIT), ("counted", _COUNTED)):
        if pattern.match(after):
            return name
    return "none"


def _counted(question: str) -> str:
    """The thing a "how many" question counts, in Chinese (多少个字符: 字符), or ""."""
    m = _COUNT_ASKS.search(clause.asking(question))
    return (m.group(2) or "") if m else ""


def _fits(text: str, start: int, end: int, measured: str, counted: str) -> bool:
    """A number at text[start:end] answers a question that asks for `measured` (see `measure`)."""
    number = _NUMBER_AT.match(text, start)
    unit = _unit(text, number.end() if number is not None and number.end() <= end else end)
    if measured == "rate":
        return (_RATE_UNIT.match(text, number.end() if number is not None and number.end() <= end else end) is not None
                or _RATE_BEFORE.search(text[max(0, start - 8) : start]) is not None)
    if measured == "multiple":
        return unit == "multiple"
    if measured in ("duration", "frequency"):
        return unit in ("time", "none", "multiple" if measured == "frequency" else "time")
    if measured == "size":
        return unit in ("size", "none")
    if measured == "length":
        return unit != "multiple"
    if measured == "count" and unit == "counted" and counted:
        m = _COUNTED.match(_UNIT_WORDS.sub("", text[number.end() if number is not None else end :][:24], count=1))
        return m is not None and bool(set(m.group(1)) & set(counted))
    return measured != "count" or unit != "time"


def asks(question: str) -> bool:
    """Whether `question` asks for a quantity: how many, how much, how long (docqa.answer.kind.asked), 几倍, the
    largest file or the highest level, a timeout, delay or interval by its name, "how many X" whatever else it names
    ("How many characters long may a .rules file name be?", which names a file), or an exit status (`_STATUS`)."""
    asking = clause.asking(question)
    return (kind.asked(question) in ASKED or _FEW.search(_asking_clauses(question)) is not None or _EXTREME.search(question) is not None
            or _TIME_NAMED.search(asking) is not None or _HOW_MANY.search(asking) is not None or asks_status(question))


def _asking_clauses(question: str) -> str:
    """The clauses of `question` that hold its question marks (`_ASKING_CLAUSE`), or all of it when it has none."""
    found = _ASKING_CLAUSE.findall(question)
    return " ".join(found) if found else question


def asks_status(question: str) -> bool:
    """Whether `question` asks for an exit status or a return code ("What exit status does umount return when the
    filesystem is busy?", 返回值是多少): a number answers it, or zero, non-zero, success or failure said in words."""
    return _STATUS.search(clause.asking(question)) is not None


def holds(text: str, question: str, names: str = "", written: Iterable[str] = ()) -> bool:
    """Whether `text` states a quantity `question` does not write itself (see the module docstring), of the kind it
    asks for (`measure`): a duration for "how long", a multiple for "how many times slower", a size for "how large",
    the counted thing or a bare number for "how many"; and for its subject: not one the question sets aside, nor the
    case without a thing it asks about, nor, in the other language than the question, a sentence that lacks one of the
    question's language-neutral tokens (`written`, docqa.answer.neutral.tokens) with what names its passage (`names`);
    and for a default asked, a sentence that says its figure is the default (`_not_the_default`)."""
    if (_other_subject(text, question) or _without(text, question) or _other_language(text, question, names, written)
            or _not_the_default(text, question)):
        return False
    text = _SECTION.sub(" ", LIST_MARKER.sub(" ", text, count=1), count=1)
    text = _ISSUE.sub(" ", _DATE.sub(" ", answerability.unwritten(text, question)))
    measured = measure(question)
    if asks_status(question) and _STATUS_WORDS.search(text):
        return True
    endless = _UNBOUNDED.search(text)
    if endless is not None and measured != "multiple" and (measured in ("duration", "number") or not _ENDLESS.match(endless.group())):
        return True
    if _IPV4.search(text) and measured in ("number", "count"):
        return True
    counted = _counted(question) if measured == "count" else ""
    return any(_fits(text, m.start(), m.end(), measured, counted) for p in (AMOUNT, _WORDS) for m in p.finditer(text))


def _other_subject(text: str, question: str) -> bool:
    """`text` is about what the question sets aside ("How long does apt-get (not apt) wait ...?": a sentence that names
    apt and not apt-get), so its quantity is another subject's."""
    m = _NOT.search(question)
    if m is None:
        return False
    asked, other = m.group(1) or m.group(3), m.group(2) or m.group(4)
    return _named(other, text) and not _named(asked, text)


def _without(text: str, question: str) -> bool:
    """`text` speaks of the case without a thing the question names and does not itself set aside ("without any
    instrumentation", "adds no instrumentation" for a question on full instrumentation): its figure is that case's."""
    words = {w.lower() for w in _CONTENT.findall(question)} - STOPWORDS
    return any(re.search(_WITHOUT + re.escape(w) + r"\b", text, re.IGNORECASE) is not None
               and re.search(_WITHOUT + re.escape(w) + r"\b", question, re.IGNORECASE) is None for w in words)


def _other_language(text: str, question: str, names: str, written: Iterable[str]) -> bool:
    """`text` is in the other language than the question and lacks one of its language-neutral tokens (`written`), even
    with what names its passage (`names`): a sentence on the `tty` group states no GID of the render group.  A token the
    question writes only in an aside, between brackets ("在没有终端（比如 cron 里）时"), is an example, not its subject."""
    if not answerability.crossing(question, text):
        return False
    subject = normalise(_ASIDE.sub(" ", question))
    tokens = [t for t in written if holds_exact(subject, t)]
    return bool(tokens) and neutral.missing(tokens, f"{text}\n{names}") > 0


def _not_the_default(text: str, question: str) -> bool:
    """The question asks for a default ("How many intervals does SimPoint pick by default?", MTU 默认是多少) and the
    sentence does not say its figure is one ("[default: 12]", "defaults to", 默认): its figure is an example's ("-k 5"),
    a setting someone chose ("reduced the auth_timeout from 30 seconds to 5 seconds") or another thing's.  The sentence
    alone, not its passage: a chunk that states some default elsewhere does not make this figure the default."""
    return DEFAULT_STATED and _DEFAULT_ASKS.search(clause.asking(question)) is not None and _DEFAULT.search(text) is None


def _named(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)", text, re.IGNORECASE) is not None


def unanswered(question: str, quoted: Iterable[str], names: Iterable[str] = (), written: Iterable[str] = ()) -> bool:
    """A question that asks for a quantity, and none of the `quoted` sentences states one it does not write itself:
    the documents discuss the subject, not the figure asked.  `names`: for each quoted sentence, what names its passage
    (title, section, file name); `written`: the question's language-neutral tokens (docqa.answer.neutral.tokens), which
    a sentence in the other language must hold to state the quantity for the question's subject."""
    if not asks(question):
        return False
    texts, tokens = list(quoted), list(written)
    named = [*names, *[""] * len(texts)]
    return not any(holds(text, question, name, tokens) for text, name in zip(texts, named))
