"""What an answer may say: statements, never headings, questions, markup residue or chatter.

Two questions, one rule:

- `quotable_spans(text, titles)`: the sentences of a chunk the extractive answerer may quote.
  The chunk's lines are sorted by structure first: a heading (its title is one of the chunk's
  section titles, which the chunker took from the reader's HEADING blocks, or it carries heading
  markup), rST adornment, a directive or field list, a table row, code (a fence, a literal block),
  a bare list label, navigation or boilerplate.  Such lines never join a sentence; the prose
  between them is split into sentences, and each must then state something (`is_statement`) and
  be a sentence rather than a label (it ends with its full stop, or is long enough to be one).
- `is_statement(sentence)`: the sentence states something: it is not a question, not empty once
  its citation markers are gone, not the agent's tool chatter ("I'll try a shorter pattern"), and
  does not stop on a dangling word ("The mailing list is [1].").  The citer applies it
  to a model's answer, so a model answer and an extractive one obey the same rule.
"""

from __future__ import annotations

import re

from docqa.text.language import has_cjk
from docqa.text.sentences import sentence_spans

_MIN_CHARS = 12  # shorter than this (alphabetic scripts) is a label, not a sentence
_LABEL_WORDS = 6
_BOILERPLATE_WORDS = 12  # a line without a full stop and at most this many words is a label (a footer, a menu)
_END = re.compile(r"[.!。！；;:：…][\"'”’»)\]）】」』》]*$")
_QUESTION = re.compile(r"[?？][\"'”’»)\]）】」』》]*$")

# Structure lines: none of these is ever part of a quoted sentence.
_ATX = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_ADORNMENT = re.compile(r"^\s*([=\-~^\"'`:+*#_<>.])\1{2,}[\s=\-~^\"'`:+*#_<>.]*$")  # rST/setext lines, rules, simple tables
_DIRECTIVE = re.compile(r"^\s*\.\.\s+(?:[\w:.-]+::|_[^:]+:|\[[^\]]+\]|\|[^|]+\|)")  # .. note:: / .. _target: / .. [1]
_DIRECTIVE_BARE = re.compile(r"^\s*\.\.(?:\s|$)")  # an rST comment
_RESIDUE = re.compile(r"[\w)]::(?:\s|$)")  # a directive that lost its leading dots
# YAML front matter at a chunk's start: "---", lines of "key: value", "---".
_FRONT_MATTER = re.compile(r"\A\s*---[ \t]*\n(?:[ \t]*[\w.-]+:[^\n]*\n)+[ \t]*---[ \t]*(?:\n|\Z)")
_FIELD = re.compile(r"^\s*:[^:\s`][^:`]*:(?:\s|$)")  # :param x: / :type x: / :maxdepth: 2
_TABLE = re.compile(r"^\s*(?:\||\+[-=+])|\|\s*$|\S\t+\S")  # pipe/grid rows, tab-separated cells
_CELL_BAR = re.compile(r"\S\s+\|\s+\S")  # "a | b": a cell boundary of a rendered table row (HTML, docx)
_FIRST_CELL = re.compile(r"^\s*[^|.!?。！？,，]{1,40}\s\|\s+\S")  # a row starts with a short cell; prose with a bar does not
_DOCSTRING = re.compile(r"(\"\"\"|''')(.*?)(?:\1|$)", re.DOTALL)  # a code chunk's prose: its docstrings
_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_LIST = re.compile(r"^\s*(?:[-*+•◦▪]|\d{1,3}[.)]|#\.|[a-zA-Z][.)])\s+")
_TAG = re.compile(r"^\s*</?[a-zA-Z][\w-]*(?:\s[^>]*)?/?>\s*$")
_NESTED = re.compile(r"\([^()\n]*\)|（[^（）\n]*）|\{[^{}\n]*\}|`[^`\n]*`")  # a parenthesis, a brace, inline code: one line's aside
_BREADCRUMB = re.compile(r"\S\s+(?:[|·•»›>/])\s+\S")
# A line of slashes that ends as a sentence or a lead-in does ("插入 CD / DVD / 蓝光光盘 / USB 闪存驱动器并使用 apt-cdrom 命令："):
# prose listing alternatives, not a breadcrumb ("Home / Docs / Install" ends in a word).
_PROSE_END = re.compile(r"[.。!！?？:：]\s*$")
_BOILERPLATE = re.compile(
    r"^\s*(?:©|\(c\)\s|copyright\s+(?:©|\(c\)|\d{4})|all rights reserved|skip to (?:main )?content|edit (?:this page )?on github|"
    r"back to top|table of contents|(?:previous|next)(?:\s*[:»›>→←]|\s*$)|last updated|built with|powered by|on this page)", re.IGNORECASE)

# Model chatter: what an agent says about its tools or its search, not about the documents.
_CHATTER = re.compile(
    r"^\s*(?:i(?:'ll| will| am going to|'m going to| need to| should| can)\s+(?:try|search|look|use|call|check|fetch|grep|read|list)"
    r"|let me\b|let's (?:try|search|look)|i (?:could not|couldn't|can't|cannot) find (?:any|it|that|more)\b.*\b(?:try|search)"
    r"|the (?:query|search|pattern|grep)\b.*\b(?:did not|didn't|does not|returned no|found no) (?:match|return|find)"
    r"|(?:next|now),? i(?:'ll| will)\b"
    r"|让我|我(?:将|会|来)(?:尝试|搜索|查找|调用|使用)|接下来我)"
    r"|\b(?:search_docs|list_docs|fetch_doc|grep_docs)\b", re.IGNORECASE)
# The answer prompt's own token for "the sources do not say": never a statement, never published.
_INTERNAL = re.compile(r"\bNOT[_ ]FOUND\b")
# A claim cannot stop on one of these right before its marker: "The mailing list is [1]." is a fragment.
_DANGLING = frozenset("""is are was were be been being the a an of to for at in on by with from and or as
    than that which via into about its their our your""".split())
_MARKERS = re.compile(r"\s*(?:\[[^\]\n]{0,40}\]|【[^】\n]{0,40}】)")
_BEFORE_MARKER = re.compile(r"([A-Za-z]+)(?:\s*(?:\[[^\]\n]{0,40}\]|【[^】\n]{0,40}】))+\s*[.。]?\s*$")


def is_statement(sentence: str) -> bool:
    """Whether a sentence (with or without its citation markers) states something."""
    text = " ".join(_MARKERS.sub("", sentence).split())
    if not any(ch.isalnum() for ch in text):
        return False  # only markers, punctuation or markup
    if _QUESTION.search(text) or _CHATTER.search(text) or _INTERNAL.search(text):
        return False
    dangling = _BEFORE_MARKER.search(sentence)
    return not (dangling and dangling.group(1).lower() in _DANGLING)


def structure_line(line: str, titles: frozenset[str] = frozenset()) -> str | None:
    """What kind of structure a line of a chunk is ("heading", "markup", "table", "label",
    "navigation"), or None for prose.  `titles`: the chunk's section titles, normalised."""
    if _ATX.match(line) or (titles and _title(line) in titles):
        return "heading"
    if (_ADORNMENT.match(line) or _DIRECTIVE.match(line) or _DIRECTIVE_BARE.match(line) or _FIELD.match(line)
            or _TAG.match(line) or _FENCE.match(line)):
        return "markup"
    flat = _NESTED.sub("x", line)  # bars and slashes inside brackets are text ("(… getent passwd | grep x | cut …)"), not cells
    if _TABLE.search(line) or len(_CELL_BAR.findall(flat)) >= 2 or (
            _FIRST_CELL.match(line) and len(line.split("|", 1)[0].split()) <= 3):
        return "table"
    if (_BOILERPLATE.match(line) and len(line.split()) <= _BOILERPLATE_WORDS) or (
            len(_BREADCRUMB.findall(flat)) >= 2 and not _PROSE_END.search(line)):
        return "navigation"
    if _LIST.match(line) and _is_label(_LIST.sub("", line, count=1)):
        return "label"
    return None


def quotable_spans(text: str, section: str | tuple[str, ...] = (), code: bool = False) -> list[tuple[int, int]]:
    """Spans of the sentences of a chunk's `text` that may be quoted as an answer.

    `section`: the chunk's section path (a tuple, or its " > "-joined form), whose titles mark
    the chunk's heading lines.  `code`: the chunk is source code, whose only prose is in its
    docstrings (a statement of code is not a sentence)."""
    parts = section.split(" > ") if isinstance(section, str) else section
    titles = frozenset(_title(t) for t in parts if t and t.strip())
    front = _FRONT_MATTER.match(text)  # a Markdown file's metadata ("title: ...", "SPDX-License-Identifier: ..."): no prose
    regions = [(m.start(2), m.end(2)) for m in _DOCSTRING.finditer(text)] if code else [(front.end() if front else 0, len(text))]
    out: list[tuple[int, int]] = []
    for start, end in (run for lo, hi in regions for run in _prose_runs(text, titles, lo, hi)):
        for s, e in sentence_spans(text, start, end):
            s = _after_label_line(text, s, e)
            sentence = text[s:e]
            if (is_statement(sentence) and not _is_label(sentence) and not _is_title(sentence, titles)
                    and not _RESIDUE.search(sentence)):
                out.append((s, e))
    return out


def _prose_runs(text: str, titles: frozenset[str], lo: int, hi: int) -> list[tuple[int, int]]:
    """Maximal runs of prose lines of `text[lo:hi]` (blank lines included), structure lines and code cut out."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    fenced = literal = False
    pos = lo
    for line in text[lo:hi].splitlines(keepends=True):
        body = line.rstrip("\r\n")
        indented = body[:1] in (" ", "\t") and body.strip() != ""
        if literal and body.strip() and not indented:
            literal = False
        code = fenced or literal or bool(_FENCE.match(body))
        if _FENCE.match(body):
            fenced = not fenced
        skip = code or (body.strip() != "" and structure_line(body, titles) is not None)
        if skip and start is not None:
            runs.append((start, pos))
            start = None
        elif not skip and start is None:
            start = pos
        if body.strip():
            # "text::" (not a directive) opens an rST literal block: the indented lines after it are code
            if body.rstrip().endswith("::") and not _DIRECTIVE.match(body) and not literal:
                literal = True
        pos += len(line)
    if start is not None:
        runs.append((start, hi))
    return runs


def _after_label_line(text: str, s: int, e: int) -> int:
    """Start of a sentence without a leading title line: "Installation\\nRun the installer." (a
    heading only the layout shows, as in PDF text) starts at "Run"."""
    newline = text.find("\n", s, e)
    if newline == -1:
        return s
    first, rest = text[s:newline], text[newline + 1 : e].lstrip()
    if rest[:1].isupper() and _is_label(first) and not has_cjk(first):
        return newline + 1 + (len(text[newline + 1 : e]) - len(text[newline + 1 : e].lstrip()))
    return s


def _is_label(sentence: str) -> bool:
    """A line or sentence that names rather than states: no full stop and only a few words."""
    text = " ".join(_MARKERS.sub("", sentence).split())  # "… safer.[citation needed]" ends with its full stop
    if _END.search(text):
        return False
    if has_cjk(text):
        return len(text) <= 12
    return len(text.split()) <= _LABEL_WORDS or len(text.strip("#*-| ")) < _MIN_CHARS


def _is_title(sentence: str, titles: frozenset[str]) -> bool:
    return bool(titles) and _title(sentence) in titles


def _title(line: str) -> str:
    """A line or title without heading markup, emphasis and case: what a heading line and its
    section title have in common."""
    text = line.strip().strip("#").strip().strip("*_`").strip()
    return " ".join(text.split()).rstrip(":：").casefold()
