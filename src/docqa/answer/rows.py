"""Structured lines that may be quoted when they carry what a question asks: table rows and command lines.

The extractive answerer quotes statements only (docqa.answer.statement): a heading, a table row or a command line
is never a sentence.  Some questions are answered by nothing else: "how fast does zstd 1.5.1 at level 1 compress?"
by a benchmark table's row, "how do I start Valgrind for GDB?" by the command line a sentence introduces.  Two
narrow exceptions, each only when the question asks for that kind of token:

- `table_rows`: a table row whose first cell holds one of the question's terms (its subject) and a token of the kind the
  question asks for (answerability.asked_kinds: a number, version, path, command, date; a file, package, variable),
  with the table's header row, which is quoted on a line of its own before it (so "| Compressor | Ratio | ... |"
  then the row reads as a statement);
- `introduced_commands`: a sentence that introduces a command ("start Valgrind like this:", "Running the command
  below ...") extended over the command line right after it and the command lines under it, when the question asks
  for a command or option or how to do something.  The command is quoted with its sentence, as an option's label
  line is quoted with its description (extractive._labelled).

- `introduced_lists`: a sentence that introduces a list ("the following algorithms have been disabled:", "步骤如下：")
  extended over the list's items right after it, when they are no sentences of their own ("- RC5", "- MDC2": labels,
  which are never quoted alone), for a question that asks for several things or how to do something.  The items are
  quoted in order with their introduction, at most `MAX_ITEMS` of them and `MAX_BLOCK` characters.

- `step_commands`: a list item that is a step's label ("1. Create the dictionary") and the command lines under it,
  one quote, for the same questions as `introduced_commands` (a how-to written so has no sentence to quote).

- `shown_lines`: how such a quote is shown: its command lines and list items a line each, under their introduction.

- `label_lines`: a short line standing alone (a list item as an HTML book renders it: "Linux kernel 6.1") whose words
  name the question's subject and then hold a token of the asked kind ("Which Linux kernel version does ... ship
  with?"), when the question asks for a kind.

Navigation, markup and bare headings are never quoted: a row must have cells, a command line must look like one.
"""

from __future__ import annotations

import re

from docqa.answer import answerability
from docqa.answer.shape import _PROCEDURE, asks_list  # a procedure asked: "how do I …", "what steps …", 要执行哪些步骤
from docqa.answer.statement import structure_line
from docqa.text.segment import query_terms

# A pipe table's separator "| --- | :-: |".
_SEPARATOR = re.compile(r"^[ \t]*\|(?:[ \t]*:?-{2,}:?[ \t]*\|)+[ \t]*$")
# A command line: an optional prompt, a program name and at least one argument, optionally in backticks.
# A program may be named by its path, alone or before an option ("/usr/share/debian-edu-config/tools/install-task-pkgs",
# "./configure --prefix=/usr"); a path before a word is a configuration entry ("/srv/nfs4 gss/krb5i(rw,sync)").
_COMMAND_LINE = re.compile(r"^[ \t]*(?:\$ |\(gdb\) )?`?(?:[a-z][\w.+-]*(?: +[^\s`]+)+"
                           r"|(?:/|\./|~/)[\w.+-]+(?:/[\w.+-]+)*(?: +-[^\s`]*(?: +[^\s`]+)*)?)`?[ \t]*$")
_SENTENCE_END = re.compile(r"[.。!！?？]\s*$")  # a line that ends so is prose, not a command
_INTRODUCES = re.compile(r"(?:[:：]|\b(?:below|following|like this|as follows)\b[^\n]*[.。])\s*$", re.IGNORECASE)
# a setting is asked for as a command is: "which readline setting …?" is answered by the line "add to ~/.inputrc:" shows
_COMMAND_KINDS = ("command", "option", "package", "variable")
LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•◦▪]|\d{1,2}[.)、]|[a-z][.)])[ \t]+\S")  # a list item's line: "- RC5", "1. Run"
MAX_ITEMS = 10  # a list quoted with its introduction: at most this many items ...
MAX_BLOCK = 600  # ... and characters, the introduction included
_MAX_ROW = 300
_HOW = re.compile(r"\bhow\s+(?:many|much|long|often|large|big|far|fast|old|quickly)\b", re.IGNORECASE)  # asks, names nothing
_LABEL_TOKEN = re.compile(r"\w+(?:[.=:/]\w+)*")
_ITEM = re.compile(r"^[ \t]*[-*+•][ \t]+")  # a list item's mark
_LABEL_WORDS = 8  # a label line holds at most this many words
_LABEL_END = re.compile(r"[.。!！?？:：;；,，]$")  # a sentence, a lead-in or a clause: no label
_INNER_END = re.compile(r"[。！？]|[.!?]\s")  # a sentence's end inside the line: prose, no label
_VALUE = re.compile(r"[^\s,，;；()（）]+")  # a label line's tokens, one of which is the value asked


def table_rows(question: str, text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(header span, row span) of each table row in `text` that holds a question term and a token of the kind the
    question asks for; [] when the question asks for no kind.  A table is a run of table lines (a Markdown pipe
    table, or an HTML or docx table as the readers render it: "a | b | c", a row per line, its header first); its
    header is the line above a separator ("| --- | --- |"), else its first line."""
    kinds = answerability.asked_kinds(question)
    if kinds == (None, None):
        return []
    terms = [t.casefold() for t in query_terms(_HOW.sub(" ", question)) if len(t) > 1]
    out = []
    header: tuple[int, int] | None = None
    previous: tuple[int, int] | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        span = (pos, pos + len(body))
        pos += len(line)
        if "|" not in body or structure_line(body) != "table":
            header = previous = None
            continue
        if _SEPARATOR.match(body):
            header = previous  # the row above a separator is the header
            continue
        if header is None and previous is None:
            header = span  # a rendered table's first line is its header (the chunker repeats it in every row group)
        elif header is not None and len(body) <= _MAX_ROW and _carries(body, terms, kinds):
            out.append((header, span))
        previous = span
    return _best_labelled(question, text, out)


def label_lines(question: str, text: str) -> list[tuple[int, int]]:
    """Spans of the short lines of `text` that stand alone (a list's items as an HTML book renders them, "Linux kernel
    6.1" between blank lines, or a "- " item) and carry what is asked: a token of the kind the question asks for that
    the question does not hold, after words that name one of the question's terms (its subject: "Linux kernel" for
    "Which Linux kernel version does Debian Edu 12 ship with?").  No sentence, no table row, no lead-in ("...:"), no
    option's label line ("--freelist-vol=<number> [default: 20000000]": quoted with its description, extractive._labelled)."""
    kinds = answerability.asked_kinds(question)
    if kinds == (None, None):
        return []
    terms = {t.casefold() for t in query_terms(_HOW.sub(" ", question)) if len(t) > 1}
    asked = question.casefold()
    out = []
    lines = text.split("\n")
    pos = 0
    for i, line in enumerate(lines):
        start, pos = pos, pos + len(line) + 1
        body = _ITEM.sub("", line).strip()
        ends = i + 1 == len(lines) or not lines[i + 1].strip() or bool(_ITEM.match(lines[i + 1]))  # no wrapped item
        alone = ends and (bool(_ITEM.match(line)) or i == 0 or not lines[i - 1].strip())
        if (not alone or not body or body.startswith("-") or len(body.split()) > _LABEL_WORDS or "|" in body
                or _LABEL_END.search(body.rstrip("*_` ")) or _INNER_END.search(body)
                or structure_line(line) in ("heading", "markup", "table", "navigation")):
            continue
        token = next((m for m in _VALUE.finditer(body) if m.group().casefold() not in asked
                      and answerability.holds_kind(m.group(), kinds)), None)
        if token is None:
            continue
        subject = _LABEL_TOKEN.findall(body[: token.start()].casefold())
        if any(w in terms for w in subject):
            at = start + line.index(body)
            out.append((at, at + len(body)))
    return out


def introduced_commands(question: str, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each sentence span of `spans` that introduces a command, extended over the command line right after it (a
    blank line may lie between) and the command lines under it up to a blank line, when they are no sentences of
    `spans` themselves, or over the next span when it is
    command lines only (an indented block the splitter reads as one sentence: the quote replaces both);
    only for a question that asks for a command, an option or how to do something."""
    kind, thing = answerability.asked_kinds(question)
    if not (kind == "command" or thing in _COMMAND_KINDS or _PROCEDURE.search(question)):
        return []
    out = []
    for s, e in spans:
        if not _INTRODUCES.search(text[s:e]):
            continue
        rest = text[e:]
        gap = len(rest) - len(rest.lstrip("\n \t"))
        if rest[:gap].count("\n") > 2:
            continue
        line_end = rest.find("\n", gap)
        line = rest[gap: len(rest) if line_end == -1 else line_end]
        at = e + gap
        block = next(((lo, hi) for lo, hi in spans if lo <= at < hi), None)  # prose the answerer quotes anyway
        if block is not None and block[0] == at and _commands_only(text[block[0]:block[1]]):
            out.append((s, block[1]))  # a block of command lines the splitter took for a sentence: one quote, not two
        elif _COMMAND_LINE.match(line) and not _SENTENCE_END.search(line) and block is None:
            out.append((s, _block_end(text, at, spans, s)))
    return out


# A displayed line: what a lead-in ending with a colon shows on a line of its own ("add the following line to
# /etc/resolv.conf:" then "    options trust-ad"; "其格式如下:" then "group_name:passwd:GID:user_list"): a setting, a
# format or a path, which no full stop ends and the sentence splitter never quotes.
DISPLAYED_LINES = 3  # at most this many lines under one lead-in
# A lead-in that says it shows what to write: "the following line", "as follows", "add … to /etc/inputrc:", 如下, 添加.
# "Previous maintainers of Debian Perl packages:" or "Cachegrind-specific options are:" list, they show nothing to write.
_SHOWS = re.compile(r"\b(?:following|follows|below|like (?:this|so)|(?:this|these|the) lines?|add|append|insert|put|write)\b"
                    r"|如下|以下|下面|下列|添加|加入|写入|加上", re.IGNORECASE)
_DISPLAYED_CHARS = 120  # ... each at most this long


def introduced_lines(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each sentence span of `spans` that ends with a colon, extended over the lines it displays right after it (a
    blank line may lie between): at most `DISPLAYED_LINES` short lines up to a blank line, none a sentence of `spans`,
    a list item, a table row or a heading, none ending as prose does; only a lead-in that says it shows something to
    write (`_SHOWS`: "the following line", "as follows", "add … to /etc/inputrc:", 如下).  The lead-in says what the line
    is ("add the following line to /etc/resolv.conf:"), the line what to write ("options trust-ad"): neither answers
    alone.  For every question: such a lead-in is no statement without what it introduces."""
    out = []
    for s, e in spans:
        if not text[s:e].rstrip().endswith((":", "：")) or not _SHOWS.search(text[s:e]):
            continue
        rest = text[e:]
        gap = len(rest) - len(rest.lstrip("\n \t"))
        if rest[:gap].count("\n") > 2 or e + gap >= len(text):
            continue
        at, end, count = e + gap, e, 0
        line_start = text.rfind("\n", 0, at) + 1
        while count < DISPLAYED_LINES:
            line_end = text.find("\n", line_start)
            line_end = len(text) if line_end < 0 else line_end
            line = text[line_start:line_end]
            first = line_start + len(line) - len(line.lstrip())
            if (not line.strip() or len(line.strip()) > _DISPLAYED_CHARS or _SENTENCE_END.search(line)
                    or LIST_ITEM.match(line) or line.rstrip().endswith((":", "："))
                    or structure_line(line) in ("heading", "markup", "table", "navigation")
                    or any(lo <= first < hi for lo, hi in spans)):
                break
            end, count = line_end, count + 1
            if line_end >= len(text):
                break
            line_start = line_end + 1
        if count and end - s <= MAX_BLOCK:
            out.append((s, s + len(text[s:end].rstrip())))
    return out


# A sentence cut by the example it displays: its first half ends in a word (no full stop, colon or comma), its second
# half goes on in lower case, and between them stand at most CARRIED_LINES short lines that end no sentence.
_ENDS_IN_WORD = re.compile(r"[^\W_]\s*$")
_GOES_ON = re.compile(r"\s*[a-z]")
CARRIED_LINES = 3
_CARRIED_LINE = 120


def carried(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` with each sentence that a displayed example cuts in two read as one, the example in it: "In order to
    disable the loading of defaults.vim, add" / "    let g:skip_defaults_vim = 1" / "to /etc/vim/vimrc(.local)."
    (the splitter leaves the example out, and neither half says what to do).  At most MAX_BLOCK characters."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and _cut_by_example(text, out[-1], (s, e)):
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _cut_by_example(text: str, first: tuple[int, int], second: tuple[int, int]) -> bool:
    """The sentence `first` goes on in `second` after the example displayed between them: indented deeper than the
    line `second` starts on (a heading, "pgrep" over "-----", or a paragraph of its own is no example)."""
    gap = text[first[1]:second[0]]
    lines = [line for line in gap.splitlines() if line.strip()]
    start = text.rfind("\n", 0, second[0]) + 1
    margin = len(text[start:second[0]]) - len(text[start:second[0]].lstrip(" \t"))
    return (bool(_ENDS_IN_WORD.search(text[first[0]:first[1]])) and _GOES_ON.match(text[second[0]:second[1]]) is not None
            and "\n" in gap and 0 < len(lines) <= CARRIED_LINES and second[1] - first[0] <= MAX_BLOCK
            and all(len(line) <= _CARRIED_LINE and not _SENTENCE_END.search(line) and _indent(line) > margin for line in lines))


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def _block_end(text: str, at: int, spans: list[tuple[int, int]], start: int) -> int:
    """The end of the run of command lines from `at` (its first line, a command): the lines up to a blank line or a
    line that is no command ("apt update" then "apt full-upgrade" under "make sure the system is up to date:"), none a
    sentence of `spans`, at most `MAX_BLOCK` characters from `start`."""
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    stop = end
    while end < len(text):
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        line = text[end + 1 : nxt]
        if (not line.strip() or not _COMMAND_LINE.match(line) or _SENTENCE_END.search(line) or nxt - start > MAX_BLOCK
                or any(lo <= end + 1 + len(line) - len(line.lstrip()) < hi for lo, hi in spans)):
            break
        stop = end = nxt
    return at + len(text[at:stop].rstrip())


def step_commands(question: str, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each step of a list that is a label and the command lines under it ("1. Create the dictionary" then
    "`zstd --train FullPathToTrainingSet/* -o dictionaryName`", a blank line between), as one quote: a how-to written
    so has no sentence at all, and the reader of a procedure needs both the step's name and its command.  The label is
    a list item line no sentence of `spans` starts in; the command lines are none either; at most `MAX_BLOCK`
    characters; only for a question that asks for a command, an option or how to do something."""
    kind, thing = answerability.asked_kinds(question)
    if not (kind == "command" or thing in _COMMAND_KINDS or _PROCEDURE.search(question)):
        return []
    out = []
    pos = 0
    for line in text.split("\n"):
        start, pos = pos, pos + len(line) + 1
        if not LIST_ITEM.match(line) or _COMMAND_LINE.match(LIST_ITEM.sub("", line)) and "`" in line:
            continue
        at = start + len(line) - len(line.lstrip())
        if any(at <= lo < start + len(line) or lo <= at < hi for lo, hi in spans):
            continue  # the item is a sentence the answerer reads anyway
        rest = text[pos:]
        gap = len(rest) - len(rest.lstrip("\n \t"))
        if rest[:gap].count("\n") > 1 or pos + gap >= len(text):
            continue
        first = pos + gap
        first_line = text[first : (text.find("\n", first) + 1 or len(text) + 1) - 1]
        if (not _COMMAND_LINE.match(first_line) or _SENTENCE_END.search(first_line)
                or any(lo <= first < hi for lo, hi in spans)):
            continue
        end = _block_end(text, first, spans, at)
        if end - at <= MAX_BLOCK:
            out.append((at, end))
    return out


def _commands_only(block: str) -> bool:
    """Every line of `block` is a command line ("mkdir -p /var/log/journal", "apt update"), none ends as prose does."""
    lines = [x for x in block.splitlines() if x.strip()]
    return bool(lines) and all(_COMMAND_LINE.match(x) and not _SENTENCE_END.search(x) for x in lines)


def introduced_lists(question: str, text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each sentence span of `spans` that introduces a list (it ends with a colon, or "as follows." and the like),
    extended over the list's item lines right after it ("- RC5", "1. ..."; a blank line may lie between items), when
    its first item is no sentence of `spans` itself (the items are then quoted as steps: answer/shape.py); at least two
    items, at most `MAX_ITEMS` and `MAX_BLOCK` characters; only for a question that asks for several things or how to
    do something (shape.asks_list)."""
    if not asks_list(question):
        return []
    out = []
    for s, e in spans:
        if not _INTRODUCES.search(text[s:e]):
            continue
        items, end, pos, level = 0, e, e, 0
        for line in text[e:].split("\n")[1:]:  # the lines after the introduction's own
            pos += len(line) + 1
            if not line.strip():
                continue
            at = pos - len(line)
            indent = len(line) - len(line.lstrip())
            if not LIST_ITEM.match(line) or (not items and any(lo <= at + indent < hi for lo, hi in spans)):
                break  # no list, or its items are sentences of their own (the first one tells)
            if items and indent < level:
                break  # a nested list is over: the next item belongs to the list around it
            level = level if items else indent
            if items == MAX_ITEMS or pos - 1 - s > MAX_BLOCK:
                break
            items, end = items + 1, at + len(line.rstrip())
        if items >= 2:
            out.append((s, end))
    return out


_LEAD_BACK = 2000  # a list item's lead-in is looked for this many characters back at most
_LEAD_CHARS = 300  # ... and read with at most this much of its paragraph


def lead_in(text: str, start: int) -> str:
    """The line that introduces the list whose item (its line, or a line wrapped under it) holds `start` in `text`
    ("However, four UIDs are special on Linux:" above "2. 65534 → The `nobody` UID ...", "- 最低限度的磁盘空间需求取决于所安装的
    设定：" above "  - LTSP 服务器：40 GiB。"), or "" when `start` is in no list item or its list has no lead-in ending with a
    colon.  The items before it in the same list, their wrapped lines and blank lines are passed over; the first line
    less indented than the item, or as indented and no item, is the lead-in, read with the lines of its paragraph above
    it.  An item names its answer, its lead-in what the list is about."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    while not LIST_ITEM.match(line) and line[:1] in (" ", "\t") and line_start > 0:  # an item's wrapped line: up to the item
        line_end = line_start - 1
        line_start = text.rfind("\n", 0, line_end) + 1
        line = text[line_start:line_end]
    if not LIST_ITEM.match(line):
        return ""
    indent = len(line) - len(line.lstrip())
    end = line_start - 1
    while end > 0 and line_start - end < _LEAD_BACK:
        begin = text.rfind("\n", 0, end) + 1
        above = text[begin:end]
        end = begin - 1
        level = len(above) - len(above.lstrip())
        if not above.strip() or level > indent or (level == indent and LIST_ITEM.match(above)):
            continue  # a blank line, a wrapped line of an item above, a sibling item
        if not above.rstrip().endswith((":", "：")):
            return ""
        blank = max(text.rfind("\n\n", 0, begin), begin - _LEAD_CHARS)  # with its paragraph's lines above it
        return " ".join(text[max(blank, 0) : begin + len(above)].split())
    return ""


def shown_lines(quote: str) -> str:
    """The text a quote is shown with: its whitespace collapsed, except where an introduction (its line ends with a
    colon, or a step's label) is quoted over command lines or list items only (`introduced_commands`,
    `introduced_lists`, `step_commands`): each of those
    keeps a line of its own, with its indentation ("… create /var/log/journal:" then "mkdir -p /var/log/journal" and
    "systemd-tmpfiles --create …" on two lines, not one run of words nobody can copy)."""
    lines = [x for x in quote.splitlines() if x.strip()]
    k = next((i for i, x in enumerate(lines) if x.rstrip().endswith((":", "："))),
             0 if lines and LIST_ITEM.match(lines[0]) and not _SENTENCE_END.search(lines[0]) else None)  # a step's label
    rest = lines[k + 1 :] if k is not None else []
    if k is None or not rest or not all(LIST_ITEM.match(x) or (_COMMAND_LINE.match(x) and not _SENTENCE_END.search(x))
                                        for x in rest):
        return " ".join(quote.split())
    lead = " ".join(" ".join(lines[: k + 1]).split())
    return "\n".join([lead, *(x[: len(x) - len(x.lstrip())] + " ".join(x.split()) for x in rest)])


def ends_structured(quote: str) -> bool:
    """The quote ends on a table row or a command line, which no full stop ends: what follows it in an answer starts
    on a line of its own (docqa.answer.pipeline), or a reader and a claim splitter read the two as one sentence."""
    last = quote.rstrip().rsplit("\n", 1)[-1]
    return structure_line(last) == "table" or ("\n" in quote.strip() and bool(_COMMAND_LINE.match(last))
                                                  and not _SENTENCE_END.search(last))


def _best_labelled(question: str, text: str, found: list[tuple[tuple[int, int], tuple[int, int]]]
                   ) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Of each table's rows, those whose label (the first cell) the question names best: the share of the label's
    tokens the question holds ("zstd 1.5.1 -1" for "zstd 1.5.1 at level 1", not "zstd 1.5.1 --fast=4")."""
    asked = question.casefold()

    def named(row: tuple[int, int]) -> float:
        label = text[row[0]:row[1]].strip().strip("|").split("|")[0]
        tokens = _LABEL_TOKEN.findall(label.casefold())
        return sum(t in asked for t in tokens) / len(tokens) if tokens else 0.0

    best: dict[tuple[int, int], float] = {}
    for header, row in found:
        best[header] = max(best.get(header, 0.0), named(row))
    return [(header, row) for header, row in found if named(row) >= best[header]]


def _carries(row: str, terms: list[str], kinds: tuple[str | None, str | None]) -> bool:
    cells = [c.strip(" *`") for c in row.strip().strip("|").split("|")]
    if len(cells) < 2:
        return False
    label = cells[0].casefold()  # the row's subject is its first cell
    return any(t in label for t in terms) and any(answerability.holds_kind(c, kinds) for c in cells[1:])
