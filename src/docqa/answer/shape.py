"""The shape of an extractive answer: which quoted sentence comes first, and a procedure's steps in order.

The extractive answerer picks its best sentences by score; shown in reading order they answer a
fact question well, but not two kinds of questions:

- "Which file / package / variable / command ...?" asks for a thing of one type: the answer leads
  with the picked sentence that holds such a token (a path, a package name, an environment variable
  or setting, a command line), or, when none of the picks holds one, with the best candidate that
  does and ranks at least as well as the later picks must.
- "How do I ...?" asks for a procedure: when the best sentence is a step of a list (`1.`, `-`,
  `Step 2:`) or introduces one ("To rotate the key:"), the answer is the whole list, in order.

`shape` returns a `Shape` (the sentences to show, in order, and whether they are a list of steps to
show whole), or None for the default (the picks in reading order).  It never changes whether the
answerer answers: that is the evidence model's decision.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Protocol

from docqa.answer import clause

MAX_STEPS = 10
MAX_CHARS = 1500  # a list's items quoted whole: at most this many characters (at least two items)

_ASKS = {
    "file": re.compile(clause.WHICH + r"(?:files?|paths?|director(?:y|ies)|folders?)\b(?!\s+systems?\b)|\bname of the (?:\w+ )?file\b"
                       rf"|{clause.WHICH_ZH}(?:文件|目录|路径)|什么文件|哪些文件|什么目录|什么路径"
                       r"|什么文件名|哪个文件名|文件名(?:是|叫|为)(?:什么|啥)|文件名称?(?:是|在)?哪", re.IGNORECASE),  # not "文件名里带空格"
    "package": re.compile(clause.WHICH + r"packages?\b" r"|哪(?:个|一个|些)(?:软件)?包(?![括含])|什么(?:软件)?包(?![括含])", re.IGNORECASE),
    # an option of a command line or a setting: `-c`, `--check`, `ForwardToSyslog=`
    "option": re.compile(clause.WHICH + r"(?:options?|flags?|switch(?:es)?|arguments?|parameters?)\b"
                         rf"|{clause.WHICH_ZH}(?:选项|参数|开关)|什么(?:选项|参数|开关)"
                         + "|" + clause.IS_THERE + r"(?:options?|flags?|switch(?:es)?|arguments?|parameters?)\b"
                         rf"|{clause.IS_THERE_ZH}(?:选项|参数|开关)吗", re.IGNORECASE),
    "variable": re.compile(clause.WHICH + r"(?:variables?|settings?|directives?|keys?)\b"
                           rf"|{clause.WHICH_ZH}(?:变量|配置项)|哪(?:个|项)设置|什么变量|环境变量|什么设置|什么配置项", re.IGNORECASE),
    "command": re.compile(clause.WHICH + r"(?:sub)?commands?\b|\bwhat\s+(?:do|should|must|can)\s+i\s+(?:run|type)\b"
                          rf"|{clause.WHICH_COMMAND_ZH}|什么命令", re.IGNORECASE),
}
_VARIABLE = (r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\$\{?[A-Za-z_]\w*|\b[a-z]\w*\.[a-z]\w*[A-Z]\w*\b"
             r"|\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[\w.-]+=\S")
_HOLDS = {
    "file": re.compile(r"(?<![\w.])(?:~|\.{1,2})?/[\w.+-]+(?:/[\w.+-]*)*"
                       r"|\b[\w+-]+\.(?:conf|cfg|ini|ya?ml|json|toml|txt|md|rst|gz|xz|sh|py|service|socket|list|pem|key|crt|log|xml|html?|pdf|h)\b"
                       r"|(?<![\w/])\.[a-z][\w.-]*rc\b|\bREADME(?:\.[\w.]+)?\b", re.IGNORECASE),
    "package": re.compile(r"\b(?:apt|apt-get|aptitude|dpkg|pip|pip3)\s+(?:-\S+\s+)*(?:install|remove|purge|-i|-s|show)\s+\S"
                          r"|\bpackages?\s+[`'\"“‘]?[a-z0-9][a-z0-9+.-]+|\b[a-z0-9][a-z0-9+.]*-(?:client|server|common|dev|doc|utils|tools|daemon|run|core|data|bin)\b"
                          r"|\blib[a-z0-9+.-]+\d[a-z0-9+.-]*\b"),
    # a command line's option (`-c`, `--check=FILE`), a setting written with its `=` (`ForwardToSyslog=`), or a variable
    "option": re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*|\b[A-Z][A-Za-z]+=|" + _VARIABLE),
    "variable": re.compile(_VARIABLE),
    "command": re.compile(r"`[^`\n]+`|(?:^|\s)[$#]\s+\w|(?<![\w-])--?[A-Za-z][\w-]*"
                          r"|[\"“][a-z][\w.-]*\s[^\"”]+[\"”]"
                          r"|\b(?:sudo|apt|apt-get|dpkg|systemctl|service|git|ssh|ssh-keygen|passwd|usermod|useradd|chmod|chown|make|pip)\s+[\w-]"),
}
# The words naming each type: a sentence that holds a token of the type answers them without repeating them.
TYPE_WORDS = {
    "file": frozenset("file files path paths directory directories folder folders 文件 目录 路径 文件名".split()),
    "package": frozenset("package packages 包 软件包".split()),
    "option": frozenset("option options flag flags switch switches argument arguments parameter parameters 选项 参数 开关".split()),
    "variable": frozenset("variable variables setting settings directive directives key keys 变量 环境变量 设置 配置项".split()),
    "command": frozenset("command commands subcommand subcommands run type 命令 子命令".split()),
}
_PROCEDURE = re.compile(r"\bhow\s+(?:do|can|should|would|must)\s+(?:i|we|you|one)\b|\bhow\s+to\b|\bsteps?\b|\bprocedure\b"
                        r"|如何|怎么|怎样|步骤|流程", re.IGNORECASE)
# A step's or list item's mark: a number or letter with its stop, a bullet with the space after it (`--null` and `-0`
# start an option's label line, `1.004` is a version: neither is an item of a list), first/second, 一是/二是 ...
_ITEM = re.compile(r"\s*(?:\d{1,2}[.)、](?![\d.])|[-*•](?=\s)|[a-z]\)|step\s+\d+[:.)]?|第[一二三四五六七八九十\d]+步[:：,，]?"
                   r"|(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|finally)\s*,|[一二三四五六七八九十]是|其[一二三四五]\s*[，,、:：]?"
                   r"|第[一二三四五六七八九十]\s*[，,、:：]|首先|其次|最后)\s*", re.IGNORECASE)
_INTRO = re.compile(r"[:：]\s*$")
# A question that asks for several things ("which algorithms ...", "which ASN.1 features ...", "what are the ...",
# "有哪些", "哪几种"): the list the best sentence is an item of is quoted whole, as steps are.
_LIST = re.compile(r"\b(?:which|what)\s+(?-i:[\w-]*[A-Z\d][\w.-]*\s+)?"  # a plural noun, not a verb ("what happens")
                   r"(?!(?:does|is|was|has|happens|means|causes|makes|gets|goes|comes|needs|seems|remains|this|its|us)\b)\w+[^\Ws]s\b"
                   r"|\bwhat\s+(?:are|were)\b|\blist\b"
                   r"|\b(?:which|what)\s+(?:two|three|four|five)\b|哪[些几两二三四五六]|几种|都有|分别", re.IGNORECASE)
_BLANK = re.compile(r"\n[^\S\n]*\n")  # a paragraph's end
_BLOCK = re.compile(r"[:：]\s*\n")  # an introduction and the line(s) it introduces, quoted as one (answer/rows.py)


class Quoted(Protocol):
    n: int
    start: int
    end: int
    text: str
    score: float


@dataclass(slots=True)
class Shape:
    sentences: list  # of Quoted, in the order to show; after the first, a caller may cut and reorder
    _: KW_ONLY
    steps: bool  # a procedure's steps: show them all, in this order


def asks_for(question: str) -> str | None:
    """The type of thing the question asks for: file, package, option, variable or command (None: none of them), by the
    clause that asks (docqa.answer.clause: "当文件名里带空格时，xargs 该怎么办？" asks for no file)."""
    asking = clause.asking(question)
    found = [(m.end(), i, kind) for i, (kind, pattern) in enumerate(_ASKS.items()) if (m := pattern.search(asking))]
    return min(found)[2] if found else None  # the noun nearest the question word: 哪个子命令设置 asks for a command


def asks_several(question: str) -> bool:
    """The question asks for several things ("which algorithms …", "哪两个理由", "有哪些")."""
    return _LIST.search(question) is not None


def asks_list(question: str) -> bool:
    """The question asks for several things or how to do something: a list or a procedure answers it whole."""
    return _LIST.search(question) is not None or _PROCEDURE.search(question) is not None


def holds_type(sentence: str, kind: str) -> bool:
    return _HOLDS[kind].search(sentence) is not None


def answered_words(question: str, sentence: str) -> frozenset[str]:
    """The question's type words ("file" in "which file ...?") that `sentence` answers with a token of the type."""
    kind = asks_for(question)
    return TYPE_WORDS[kind] if kind is not None and holds_type(sentence, kind) else frozenset()


def shape(question: str, candidates: Sequence[Quoted], picked: Sequence[Quoted], floor: float,
          text_of: Callable[[int], str]) -> Shape | None:
    """The sentences to show for a procedure or typed question (`picked`: the answerer's picks, best
    first); None: the default order.  `text_of(n)`: the text of source n's chunk (spans index into it)."""
    if not picked:
        return None
    if _PROCEDURE.search(question) or _LIST.search(question):
        text = text_of(picked[0].n)
        steps = _steps(candidates, picked[0], text) or (_blocks(candidates, picked[0], text) if _PROCEDURE.search(question) else None)
        if steps:
            return Shape(steps, steps=True)
    kind = asks_for(question)
    if kind is None:
        return None
    lead = next((s for s in picked if holds_type(s.text, kind)), None)
    if lead is None:
        lead = max((s for s in candidates if s.score >= floor and holds_type(s.text, kind)), key=lambda s: s.score, default=None)
    if lead is None:
        return None
    return Shape([lead, *(s for s in picked if s is not lead)], steps=False)


def enumerated(candidates: Sequence[Quoted], shown: Sequence[Quoted], text_of: Callable[[int], str]) -> list:
    """For a question asking for several things: `shown` with each quoted item of a list or enumeration ("- RC5",
    "一是 … 。二是 … 。", "first, …") read with the rest of its list, in order, where the item stood (the list's
    introduction with it when it ends with a colon right above).  One item of two answers half of "哪两个理由"."""
    out: list = []
    for s in shown:
        run = _steps(candidates, s, text_of(s.n)) if _is_item(s) and any(c is s for c in candidates) else None
        out += [x for x in (run or [s]) if not any(x is y for y in out)]
    return out


def _steps(candidates: Sequence[Quoted], best: Quoted, text: str) -> list[Quoted] | None:
    """The list `best` is a step of, or introduces, in text order (with its introduction); None when it is neither.
    A nested list (its items indented deeper, as Markdown and the HTML reader write them) is a list of its own: the
    items of `best`'s level and any deeper ones under them, introduced by the item above them that ends with a colon."""
    units = _units(sorted((s for s in candidates if s.n == best.n), key=lambda s: s.start), text)
    same = [u[0] for u in units]
    i = next(k for k, u in enumerate(units) if any(s is best for s in u))
    if same[i] is not best and not _is_item(same[i]):
        return None
    best = same[i]  # a later sentence of a list item's paragraph stands for its item
    intro = None
    nests = (_is_item(best) and i + 1 < len(same) and _is_item(same[i + 1])
             and _level(text, same[i + 1]) > _level(text, best))  # an item that opens a nested list
    if not _is_item(best) or nests:
        if not _INTRO.search(units[i][-1].text) or i + 1 >= len(same):
            return None
        intro, i = best, i + 1
    if not _is_item(same[i]):
        return None
    lo = hi = i
    level = _level(text, same[i])
    while (lo > 0 and _is_item(same[lo - 1]) and _level(text, same[lo - 1]) >= level
           and not text[units[lo - 1][-1].end : same[lo].start].strip()):
        lo -= 1
    while (hi + 1 < len(same) and _is_item(same[hi + 1]) and _level(text, same[hi + 1]) >= level
           and not text[units[hi][-1].end : same[hi + 1].start].strip()):
        hi += 1
    if intro is not None and text[units[i - 1][-1].end : same[lo].start].strip():
        return None  # the introduction and the list are not side by side
    if hi == lo:
        return None
    run = units[lo : hi + 1][:MAX_STEPS]
    while len(run) > 2 and sum(s.end - s.start for u in run for s in u) > MAX_CHARS:
        run.pop()  # items of several sentences each: the first ones, as many as a reader takes in
    items = [s for u in run for s in u]
    if intro is None and lo > 0 and _INTRO.search(units[lo - 1][-1].text) and not text[units[lo - 1][-1].end : same[lo].start].strip():
        intro, i = same[lo - 1], lo
    return [*units[i - 1], *items] if intro is not None else items


def _units(same: Sequence[Quoted], text: str) -> list[list[Quoted]]:
    """The sentences of one chunk (in text order) grouped by list item: a sentence that is no item and follows an item
    that starts its line, in the item's paragraph (no blank line between: "- apt-list-changes：准备好阅读大量的消息；" then "按 <return> 向下
    滚动 …", or an item's wrapped lines) belongs to that sentence's item; every other sentence is a unit of its own."""
    units: list[list[Quoted]] = []
    for s in same:
        head = units[-1][0] if units else None
        if (head is not None and _is_item(head) and not text[text.rfind("\n", 0, head.start) + 1 : head.start].strip()
                and not _is_item(s) and not _BLANK.search(text[units[-1][-1].end : s.start])):
            units[-1].append(s)
        else:
            units.append([s])
    return units


def _level(text: str, s: Quoted) -> int:
    """How deep the list item `s` is nested: the indentation of its line (0 when it starts no line)."""
    line_start = text.rfind("\n", 0, s.start) + 1
    indent = text[line_start : s.start]
    return len(indent.expandtabs(4)) if not indent.strip() else 0


def _blocks(candidates: Sequence[Quoted], best: Quoted, text: str) -> list[Quoted] | None:
    """When `best` is an introduction quoted with the command or list it introduces ("start Valgrind like this:" and
    the command line), the run of such quotes it stands in, side by side in its chunk and in text order (a procedure
    written as "do this:" / command, "then this:" / command); None when `best` is no such quote or stands alone."""
    if not _BLOCK.search(best.text):
        return None
    same = sorted((s for s in candidates if s.n == best.n), key=lambda s: s.start)
    i = next(k for k, s in enumerate(same) if s is best)
    lo = hi = i
    while lo > 0 and _BLOCK.search(same[lo - 1].text) and not text[same[lo - 1].end : same[lo].start].strip():
        lo -= 1
    while hi + 1 < len(same) and _BLOCK.search(same[hi + 1].text) and not text[same[hi].end : same[hi + 1].start].strip():
        hi += 1
    items = same[lo : hi + 1][:MAX_STEPS]
    return list(items) if len(items) >= 2 else None


def _is_item(s: Quoted) -> bool:
    m = _ITEM.match(s.text)
    return m is not None and bool(m.group().strip())
