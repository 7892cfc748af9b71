"""The release a sentence belongs to, for questions that ask for one.

"In which release did git grep learn -m?", "Which point release of 2.35 fixed rebase?", "霞鹜文楷是在哪个版本加上越南语支持的？":
release notes, changelogs and NEWS files name the release once, in a heading ("Git v2.38 Release Notes",
"### v1.233.4 22/04/09", "openssh (1:8.5p1-1) unstable; urgency=medium") or in the file's name
(`RelNotes/2.38.0.txt`), and the sentence that answers does not repeat it.  `label` finds that name for a
sentence: the nearest heading line above it in its chunk that holds a version, else the innermost section title
that holds one, else the file name when it holds one.  The extractive answerer ranks such sentences up for a
release question and shows the heading with the answer (docqa.answer.extractive).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docqa.answer import clause

# A question that asks which version or release: "which version", "in which (feature|point) release", "哪个版本".
ASKS = re.compile(r"\b(?:which|what)\s+(?!(?:does|do|did|is|was|are|were|has|have|had|can|will|would|should)\b)"
                   r"(?:[\w.-]+\s+){0,3}(?:versions?|releases?)\b"
                   r"|哪一?个\s*(?:[A-Za-z][\w.+-]*\s*)?版本|哪一版|什么版本|哪个发行版|哪次发布|版本号", re.IGNORECASE)
# "When will Debian change the default?", "When was --preserve-merges removed?", "什么时候加入的": when something changed in the
# software's history, which a release or a date answers as "which version" does; not "When is the cache rebuilt?" (an
# event: "after each upgrade" answers it).
_CHANGES_EN = r"chang|introduc|add|remov|deprecat|drop|switch|releas|becom|became|renam|replac|merg|ship|support|fix|land"
_CHANGES_ZH = r"改|引入|加入|加上|新增|移除|删除|删掉|去掉|废弃|弃用|发布|切换|支持|修复|合并|成为"
WHEN_CHANGED = re.compile(rf"^\W*when\s+(?:will|would|did|was|were|has|have|had)\b[^?]{{0,100}}?\b(?:{_CHANGES_EN})\w*"
                          rf"|(?:什么时候|何时|哪一年|哪年)[^？?，,]{{0,20}}?(?:{_CHANGES_ZH})"
                          rf"|(?:{_CHANGES_ZH})[^？?，,]{{0,12}}?(?:什么时候|何时|哪一年|哪年)", re.IGNORECASE)
# A change still to come: "In which release will egrep be dropped?", "Which GCC version will become the default?",
# "会在哪个版本里删掉？", "以后 … 会成为唯一行为": release notes and NEWS files are written under the release they come with,
# so the heading or file name that names a sentence's release names when the note was written, not the release a
# change it announces will come in ("In the next release of GNU make, … we may remove that sorting." under 3.82-1).
_FUTURE = re.compile(rf"\b(?:will|shall|going\s+to)\b[^?]{{0,80}}?\b(?:{_CHANGES_EN}|stop|ceas|end)\w*"
                     rf"|(?:会|将|以后|今后|未来)[^？?，,]{{0,24}}?(?:{_CHANGES_ZH})", re.IGNORECASE)
VERSION = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+")
SERIES = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)*)\.[xX*](?![\w*])")  # a release series: "2.39.x", "v3.x", "1.2.*"
# Debian's releases by their code names, capitalised as release notes write them ("the release following Squeeze").
CODENAME = re.compile(r"\b(?:Hamm|Slink|Potato|Woody|Sarge|Etch|Lenny|Squeeze|Wheezy|Jessie|Stretch|Buster|Bullseye|Bookworm"
                      r"|Trixie|Forky|Duke)\b")
_ATX = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_ADORNMENT = re.compile(r"^\s*([=\-~^*#])\1{2,}\s*$")
_TITLE_WORDS = 10  # a title line holds at most this many words
# A heading that names an earlier release as its starting point ("Updates since Git 2.33", "Fixes since v2.37",
# "Changes from 1.2", "自 2.0 以来的变化") is a sub-heading of the release the file is about, not its name.
_SINCE = re.compile(r"\b(?:since|from|after|prior to|before|compared to|relative to)\s+(?:\S+\s+)?v?\d+(?:\.\d+)+|自\s*\S*\d", re.IGNORECASE)
# A book's section number ("23.1. Debian Edu 12 Bookworm", "4.3. Memcheck Command-Line Options"): numbered, not a version.
_SECTION_NUMBER = re.compile(r"^\s*(?:#{1,6}\s+)?\d+(?:\.\d+)*\.(?=\s)")
# A paragraph that introduces the items below it and names their release ("OpenSSH 8.5 includes a number of changes
# that may affect existing configurations:"): NEWS files name a release so inside an entry that covers several.
_LEAD_IN_WORDS = 30
_ITEM_WORDS = 16  # a list item standing on a line of its own holds at most this many words
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
# Numbers that are no figure: a list item's number ("5. `systemd-homed` mounts ..."), a man page's section ("ssh(1)").
# a range of whole numbers ("61184…65519", "60001-60513", "1 to 999") and a user, group, process id or a port
# ("UID 65534", "GID 5", "port 5432"): what `systemd` and the like number, not a release; a bug number ("see #825394",
# "Closes: #945911").
_NOT_A_FIGURE = re.compile(r"^\s*\d+[.)]\s|\(\d[a-z]*\)|(?<![\w&])#\d+"
                           r"|(?<![\w.])\d+\s*(?:…|\.{2,3}|–|—|-|\bto\b|~|到|至)\s*\d+(?![\w.])"
                           r"|\b(?:[UG]IDs?|PIDs?|ports?)\b\W{0,3}\d+", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s")
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


@dataclass(frozen=True, slots=True)
class Label:
    text: str  # the heading line, section title or file name that names the release
    version: str  # the version it holds
    span: tuple[int, int] | None = None  # the heading line's span in the chunk text; None: a section title or file name
    source: str = "heading"  # "heading", "section", "above" (a heading line above the chunk: `span` is in that text) or "file"


def asks_release(question: str) -> bool:
    """Whether the question asks which version or release (something happened in, or holds)."""
    return ASKS.search(question) is not None


def asks_when_changed(question: str) -> bool:
    """Whether the question asks when something changed (`WHEN_CHANGED`, in the clause that asks): a release or a date
    answers it, as a release question."""
    return WHEN_CHANGED.search(clause.asking(question)) is not None


def asks_future(question: str) -> bool:
    """Whether the question asks in which release a change will come (`_FUTURE`, in the clause that asks)."""
    return _FUTURE.search(clause.asking(question)) is not None


def names_asked(question: str, found: Label | None) -> bool:
    """Whether what names a sentence's release (`label`) names one the question asks for: not None, not a release
    the question writes itself ("Which Vim versions does the vimdiff driver support after the 2.37.2 fixes?" is not
    answered by the 2.37.2 notes' heading, nor "… dropped from the python3.11 packages?" by "Python 3.11 for Debian"),
    and not for a change still to come (`asks_future`)."""
    if found is None or asks_future(question):
        return False
    return found.version not in set(_NUMBER.findall(question))


def names_release(question: str, text: str) -> bool:
    """Whether `text` names a version the question does not ("Git 2.35 shipped with a regression" names none for
    "Which point release of 2.35 ...?"), and of the series the question names if it names one ("merges up the fix
    that appears in v2.30.9, … and v2.38.5" names no release of "Which 2.39.x release …?": its heading does)."""
    asked = {m.group().lstrip("v") for m in VERSION.finditer(question)}
    series = [f"{m.group(1)}." for m in SERIES.finditer(question)]
    return any(v not in asked and (not series or v.startswith(tuple(series)))
               for v in (m.group().lstrip("v") for m in VERSION.finditer(text)))


def names_nothing(question: str, text: str) -> bool:
    """Whether `text` holds no number the question does not: no version, release or figure a release question's
    answer could be ("`systemd` defines a number of special UID ranges:" for "Which systemd version introduced ...?"),
    nor a Debian release by its code name ("… will be removed for the Debian release following Squeeze.")."""
    asked = set(_NUMBER.findall(question))
    if any(m.group().lower() not in question.lower() for m in CODENAME.finditer(text)):
        return False
    return all(n in asked for n in _NUMBER.findall(_NOT_A_FIGURE.sub(" ", text)))


def label(text: str, start: int, section: str | tuple[str, ...], path: str, above: str = "") -> Label | None:
    """What names the release of the sentence at `start` of a chunk's `text` (see the module docstring), or None;
    `above`: the lines above the chunk in its document, whose last title line holding a version names the release
    when nothing in the chunk or its section titles does (`_heading_before`)."""
    heading = _heading_above(text, start)
    if heading is not None:
        return heading
    titles = [t.strip() for t in (section.split(" > ") if isinstance(section, str) else section) if t.strip()]
    for title in reversed(titles):
        m = _version(title)
        if m:
            return Label(title, m.group().lstrip("v"), source="section")
    before = _heading_before(above, text, titles)
    if before is not None:
        return before
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    m = VERSION.search(name)
    return Label(name, m.group().lstrip("v"), source="file") if m else None


def _heading_before(above: str, text: str, titles: list[str]) -> Label | None:
    """The last title line of `above` (the text before a chunk's `text`) that holds a version, unless it heads an
    earlier section than the chunk's (`titles`, outermost first): the chunk opens with its own section's title, or
    one of its section titles comes after that line."""
    if not above or (titles and text.lstrip().startswith(titles[-1])):
        return None
    found = _title_above(above, len(above))
    if found is None or found.span is None:
        return None
    if any(line.strip().lstrip("#").strip() in titles for line in above[found.span[1] :].splitlines()):
        return None
    return Label(found.text, found.version, found.span, source="above")


def _version(title: str) -> re.Match[str] | None:
    """The first version in a title, past a section number that leads it ("23.1. Debian Edu 12 Bookworm": none), and
    not a folder of a path ("(/etc/freeradius/3.0/huntgroups)")."""
    number = _SECTION_NUMBER.match(title)
    for m in VERSION.finditer(title, number.end() if number else 0):
        if not (title[m.start() - 1 : m.start()] == "/" or title[m.end() : m.end() + 1] == "/"):
            return m
    return None


def _heading_above(text: str, start: int) -> Label | None:
    """The nearest title line above `start` that holds a version: a Markdown heading, or a short line standing alone
    (a blank line or the chunk's start above it; a blank line, an underline or a list below it) without a full stop;
    or, when it is nearer, a paragraph that introduces the items below it and names a release (`_lead_in`)."""
    found = _title_above(text, start)
    lead = _lead_in(text, start, found.span[1] if found is not None and found.span is not None else 0)
    return lead or found


def _lead_in(text: str, start: int, after: int) -> Label | None:
    """The nearest paragraph between `after` and `start` that ends with a colon, is no list item, holds a version
    and at most _LEAD_IN_WORDS words ("OpenSSH 8.5 includes a number of changes that may affect existing
    configurations:")."""
    bounds = [after, *(m.end() for m in _BLANK_LINE.finditer(text, after, start)), start]
    for a, b in reversed(list(zip(bounds, bounds[1:]))):
        para = text[a:b].strip()
        m = VERSION.search(para)
        if (m is None or not para.endswith((":", "：")) or _LIST_ITEM.match(para) or _SINCE.search(para)
                or len(para.split()) > _LEAD_IN_WORDS):
            continue
        s = a + text[a:b].index(para)
        return Label(para, m.group().lstrip("v"), (s, s + len(para)))
    return None


def _title_above(text: str, start: int) -> Label | None:
    lines: list[tuple[int, int]] = []
    pos = 0
    for line in text[:start].splitlines(keepends=True):
        lines.append((pos, pos + len(line.rstrip("\r\n"))))
        pos += len(line)
    for i in range(len(lines) - 1, -1, -1):
        s, e = lines[i]
        line = text[s:e]
        m = _version(line)
        if m is None or _SINCE.search(line) or not _is_title(text, lines, i):
            continue
        title = line.strip().lstrip("#").strip()
        a = s + line.index(title)
        return Label(title, m.group().lstrip("v"), (a, a + len(title)))
    return None


def _is_title(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    line = text[lines[i][0] : lines[i][1]]
    if _ATX.match(line):
        return True
    words = line.split()
    if not words or len(words) > _TITLE_WORDS or line.rstrip().endswith((".", ",", "。", "，")) or _LIST_ITEM.match(line):
        return False  # a sentence, or a list item ("* Support for POWER8 (Power ISA 2.07) instructions")
    above = text[lines[i - 1][0] : lines[i - 1][1]] if i > 0 else ""
    below_end = text.find("\n", lines[i][1] + 1)
    below = text[lines[i][1] + 1 : below_end if below_end != -1 else len(text)]
    alone_above = not above.strip()
    alone_below = not below.strip() or _ADORNMENT.match(below) is not None or below.lstrip()[:2] in ("- ", "* ", "+ ")
    underlined = _ADORNMENT.match(below) is not None
    return alone_above and alone_below and (underlined or not _in_list(text, lines, i))


def _in_list(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    """The line is an item of a list rendered one item a line between blank lines ("LibreOffice 7.4", "LTSP 23.01"):
    two of its neighbours (the two lines above it and the one below that are not blank) are such lines too."""
    paragraphs = [p.strip() for p in _BLANK_LINE.split(text[: lines[i][0]]) if p.strip()][-2:]
    below = _BLANK_LINE.split(text[lines[i][1] :].lstrip("\r\n"), maxsplit=1)[0].strip()
    return sum(_list_item(p) for p in [*paragraphs, below]) >= 2


def _list_item(paragraph: str) -> bool:
    """A short paragraph of one line with no end mark: what a list item rendered on a line of its own looks like."""
    return bool(paragraph) and "\n" not in paragraph and len(paragraph.split()) <= _ITEM_WORDS and not paragraph.endswith(
        (".", ",", ":", ";", "!", "?", "。", "，", "：", "；", "！", "？"))


def note(found: Label, language: str) -> str:
    """One line saying which release a quoted sentence is from, when its heading is not quoted with it."""
    if found.source == "file":
        return (f"（版本 {found.version}：见文件名 {found.text}。）" if language == "zh"
                else f"(Release {found.version}, as the file name {found.text} says.)")
    return (f"（版本 {found.version}：见标题“{found.text}”。）" if language == "zh"
            else f"(Release {found.version}, under the heading “{found.text}”.)")
