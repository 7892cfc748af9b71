"""roff man pages (man and mdoc macros) to plain text with headings, without running groff.

`convert(source)` walks the page once, line by line: `.TH`/`.Dt` give the title, `.SH`/`.SS`
(`.Sh`/`.Ss`) open sections, `.PP`/`.TP`/`.IP`/`.RS`/`.sp` and blank lines end paragraphs, text
lines are filled (joined with a space, or with none between two CJK characters) except inside
`.nf`/`.EX`; font macros keep their text (`.BR a b` -> `ab`), conditionals take the nroff branch,
macro definitions, `.ig` blocks, comments and layout requests print nothing.  Work is linear in
the page's size.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from docqa.ingest.readers import roff_mdoc
from docqa.ingest.readers.roff_escapes import JOIN, Escapes, split_args
from docqa.text.language import WIDE
from docqa.types import HEADING, PARAGRAPH

# Requests that print their arguments (joined by a space) in the current paragraph.
_TEXT = {"B", "I", "SM", "SB", "R", "CW"}
# Font-alternating macros: their arguments joined without spaces.
_ALTERNATING = {"BR", "BI", "IB", "IR", "RB", "RI"}
_BREAK = {"PP", "LP", "P", "HP", "RS", "RE", "sp", "Sp", "ne", "bp", "SY", "YS", "in", "ti", "Pp", "Lp", "Bd", "Ed",
          "Bl", "El", "EX", "EE", "Vb", "Ve", "nf", "fi", "ce", "D1", "Dl"}
_NOFILL_ON = {"nf", "EX", "Vb", "Bd"}
_NOFILL_OFF = {"fi", "EE", "Ve", "Ed"}
_CJK = re.compile(f"[{WIDE}]")  # wide characters: two of them join with no space between
_CONTROL = re.compile(r"^[.'][ \t]*([^\s\\]*)[ \t]*(.*)$")  # `.el\{` is `el` and `\{`
_TITLE_MACRO = re.compile(r"^[.'][ \t]*(TH|Dt)[ \t]")
_DEFINITION = re.compile(r"^[.'][ \t]*(de1?|am1?|dei|ig)\b[ \t]*(?:(\S+)[ \t]*(\S+)?)?")


@dataclass(slots=True)
class _Table:
    """A tbl(1) table being read: its format lines are skipped, each row is one line, cells joined by " | "."""

    tab: str = "\t"
    stage: str = "format"  # "format" (options and format lines) or "rows"
    block: bool = False  # inside a T{ ... T} text cell
    nofill: bool = False  # the fill mode to restore at .TE


@dataclass(slots=True)
class Page:
    """A converted page: its title ("ls(1)"), manual section and text parts in order."""

    title: str | None = None
    section: str | None = None
    parts: list[tuple[str, int, str]] = field(default_factory=list)  # (kind, level, text)


def is_roff(text: str) -> bool:
    """True when a `.TH` or `.Dt` line comes before any text line: above it only requests, comments,
    macro definitions, blank lines and lines that print nothing (`\\t`, `\\}`)."""
    end = ""
    for line in logical_lines("\n".join(text.split("\n", 600)[:600])):
        if end:
            end = "" if line.rstrip() == end else end
        elif _TITLE_MACRO.match(line):
            return True
        elif (match := _DEFINITION.match(line.split('\\"', 1)[0])) is not None:
            end = "." + ((match[3] if match[1] != "ig" else match[2]) or ".")
        elif not line.startswith((".", "'")) and Escapes().text(line).strip():
            return False
    return False


def logical_lines(text: str) -> list[str]:
    """Source lines with escaped newlines (a line ending in an odd number of backslashes) joined."""
    out: list[str] = []
    pending = ""
    for line in text.split("\n"):
        line = pending + line
        tail = len(line) - len(line.rstrip("\\"))
        if tail % 2:
            pending = line[:-1]
            continue
        pending = ""
        out.append(line)
    if pending:
        out.append(pending)
    return out


class _Converter:
    """One pass over the lines of a page."""

    def __init__(self) -> None:
        self.page = Page()
        self.esc = Escapes()
        self.lines: list[list[str]] = []  # output lines of the open paragraph, as pieces (appending stays linear)
        self.nofill = False
        self.join_next = False  # `\c`: the next text continues the current word
        self.heading_next = 0  # .SH without arguments: the next text line is the heading (its level)
        self.tag_next = False  # .TP: the next text line is the tag, the body starts on a new line
        self.conditions: list[bool] = []  # .ie results, for .el
        self.skip_until = ""  # ".." ends .de/.ig, or "" when not skipping
        self.brace_skip = 0  # depth of a false \{ ... \} block being skipped
        self.translate: dict[int, str] = {}
        self.link: str | None = None
        self.section_name = ""
        self.table: _Table | None = None
        self.mdoc = roff_mdoc.Mdoc(self)

    # ---- output
    def emit(self, text: str, spaced: bool = True) -> None:
        """Add text to the open paragraph (filled or as its own line in no-fill mode)."""
        if self.translate:
            text = text.translate(self.translate)
        joined = JOIN in text
        text = text.replace(JOIN, "")
        if self.heading_next:
            self.heading(text, self.heading_next)
            return
        if self.lines and not self.lines[-1]:  # the line a break opened
            self.lines[-1].append(text)
        elif not self.lines or self.nofill and not self.join_next:
            self.lines.append([text])
        elif text:
            line = self.lines[-1]
            last = next((piece[-1] for piece in reversed(line) if piece), "")
            in_cell = self.table is not None and self.table.block
            glue = "" if (self.join_next and not in_cell or not spaced or last in ("", " ", "\t")
                          or _CJK.match(last) and _CJK.match(text[0])) else " "
            line.append(glue + text)
        self.join_next = joined or (self.table is not None and self.table.block)
        if self.tag_next and not self.join_next:
            self.tag_next = False
            self.line_break()

    def line_break(self) -> None:
        """End the output line: the next text starts a new one (an empty list until it comes)."""
        if self.lines and any(piece.strip() for piece in self.lines[-1]):
            self.lines.append([])

    def paragraph(self) -> None:
        text = textwrap.dedent("\n".join("".join(line).rstrip() for line in self.lines)).strip("\n")
        if text.strip():
            self.page.parts.append((PARAGRAPH, 0, text))
        self.lines = []
        self.join_next = False

    def heading(self, text: str, level: int) -> None:
        self.paragraph()
        self.heading_next = 0
        text = " ".join(text.replace(JOIN, "").split())
        if level == 1:
            self.section_name = text
        if text:
            self.page.parts.append((HEADING, level, text))

    # ---- input
    def feed(self, line: str) -> None:
        if self.skip_until:
            if line.rstrip() == self.skip_until or line.startswith(self.skip_until + " "):
                self.skip_until = ""
            return
        if self.brace_skip:
            self.brace_skip += line.count("\\{") - line.count("\\}")
            self.brace_skip = max(self.brace_skip, 0)
            return
        if line.startswith((".\\\"", "'\\\"", '\\"')):
            return  # a comment line
        if self.table is not None and self.table_line(line):
            return
        if line.startswith((".", "'")):
            self.request(line)
        elif not line.strip():
            if not self.nofill:
                self.paragraph()
            elif self.lines:
                self.lines.append([""])  # a blank line kept in no-fill text
        else:
            if line[0] in " \t" and not self.nofill:
                self.line_break()
            self.emit(self.esc.text(line))

    def request(self, line: str) -> None:
        match = _CONTROL.match(line)
        if match is None:
            return
        name, rest = match[1], match[2]
        if "\\\"" in rest:
            rest = rest[:rest.index("\\\"")]
        if name in ("if", "ie", "el"):
            self.conditional(name, rest)
        elif name in ("de", "de1", "am", "am1", "dei", "ig"):
            args = split_args(rest)
            end = args[0] if name == "ig" and args else args[1] if name != "ig" and len(args) > 1 else "."
            self.skip_until = "." + end
        elif name == "ds" or name == "ds1":
            key, _, value = rest.partition(" ")
            self.esc.define(key, value.removeprefix('"'))
        elif name == "tr":
            self.set_translation(self.esc.text(rest))
        elif name == "TH" or name == "Dt":
            self.title(split_args(rest))
        elif name in ("SH", "SS", "Sh", "Ss"):
            self.section(name, rest)
        else:
            self.macro(name, rest)

    def macro(self, name: str, rest: str) -> None:
        if name in self.mdoc.MACROS:
            self.mdoc.request(name, rest)
        elif name in _TEXT:
            words = split_args(rest)
            if words:  # without words, the next text line carries them and is emitted as text
                self.emit(self.esc.text(" ".join(words)))
        elif name in _ALTERNATING:
            self.emit(self.esc.text("".join(split_args(rest))))
        elif name in ("TP", "TQ"):
            if name == "TP":
                self.paragraph()
            else:
                self.line_break()
            self.tag_next = True
        elif name == "IP":
            self.item(split_args(rest))
        elif name == "br":
            self.line_break()
        elif name in ("UR", "MT"):
            self.link = self.esc.text(split_args(rest)[0]) if rest.strip() else None
        elif name in ("UE", "ME"):
            self.close_link(split_args(rest))
        elif name == "OP":
            self.emit("[" + self.esc.text(" ".join(split_args(rest))) + "]")
        elif name == "so":
            self.emit("See " + rest.strip() + ".")
        elif name == "TS":
            self.paragraph()
            self.table = _Table(nofill=self.nofill)
            self.nofill = True
        elif name == "TE" and self.table is not None:
            self.paragraph()
            self.nofill, self.table = self.table.nofill, None
        elif name in _BREAK:
            self.block_break(name)

    def table_line(self, line: str) -> bool:
        """Handle one line inside .TS/.TE; False leaves it to the usual path (requests, text in a T{ cell)."""
        table = self.table
        assert table is not None
        if table.stage == "format":
            if (tab := re.search(r"\btab\s*\((.)\)", line)) and line.rstrip().endswith(";"):
                table.tab = tab[1]
            table.stage = "rows" if line.rstrip().endswith(".") else "format"
            return True
        if table.block and not line.startswith("T}"):
            return not line.strip()  # blank lines inside a cell end nothing
        if line.startswith((".", "'")):
            table.stage = "format" if line.startswith(".T&") else table.stage
            return line.startswith(".T&")
        if line.strip() in ("_", "=", "\\_"):
            return True
        if line.startswith("T}"):
            table.block, line, self.join_next = False, line[2:], True
        opens = line.rstrip().endswith("T{")
        line = line.rstrip()[:-2] if opens else line
        self.emit(self.esc.text(line).replace(table.tab, " | "))
        table.block = self.join_next = opens
        return True

    def block_break(self, name: str) -> None:
        if name in ("sp", "Sp") and self.nofill:
            self.lines.append([""])
            return
        self.paragraph()
        if name in _NOFILL_ON:
            self.nofill = True
        elif name in _NOFILL_OFF:
            self.nofill = False
        if name == "SY":
            self.tag_next = False

    def item(self, args: list[str]) -> None:
        self.paragraph()
        tag = self.esc.text(args[0]).replace(JOIN, "") if args else ""
        if not tag.strip():
            return
        if len(tag) <= 4:  # a bullet or "1.": on the line of the item's text
            self.lines.append([tag + " "])
        else:
            self.emit(tag)
            self.line_break()

    def close_link(self, args: list[str]) -> None:
        if self.link and not (self.lines and self.link in "".join(self.lines[-1])):
            self.emit("<" + self.link + ">")
        if args:
            self.emit(self.esc.text(args[0]), spaced=False)
        self.link = None

    def title(self, args: list[str]) -> None:
        if self.page.title is None and args:
            name = self.esc.text(args[0]).replace(JOIN, "").strip()
            section = self.esc.text(args[1]).replace(JOIN, "").strip() if len(args) > 1 else ""
            self.page.title = f"{name}({section})" if section else name
            self.page.section = section or None

    def section(self, name: str, rest: str) -> None:
        level = 1 if name in ("SH", "Sh") else 2
        self.nofill = False
        self.tag_next = False
        if rest.strip():
            self.heading(self.esc.text(" ".join(split_args(rest))), level)
        else:
            self.paragraph()
            self.heading_next = level

    def set_translation(self, pairs: str) -> None:
        for i in range(0, len(pairs) - 1, 2):
            self.translate[ord(pairs[i])] = pairs[i + 1]

    # ---- conditionals: the nroff branch of `.if n`/`.ie n`; unknown conditions are false
    def conditional(self, name: str, rest: str) -> None:
        if name == "el":
            holds, body = (not self.conditions.pop() if self.conditions else False), rest
        else:
            holds, body = _condition(rest)
            if name == "ie":
                self.conditions.append(holds)
        body = body.lstrip()
        opens = body.startswith("\\{")
        if opens:
            body = body[2:].lstrip()
        if not holds:
            if opens:
                self.brace_skip = max(body.count("\\{") - body.count("\\}") + 1, 0)
            return
        body = body.replace("\\}", "").replace("\\{", "")
        if body.strip():
            self.feed(body)


_COND = re.compile(r"""!?(?:[ntoevcdmrF](?![\w(])|'[^']*'[^']*'|"[^"]*"[^"]*"|\S+)""")


def _condition(rest: str) -> tuple[bool, str]:
    """(holds, body) of `.if COND BODY`: n, o and their negations are known; anything else is false."""
    rest = rest.lstrip()
    match = _COND.match(rest)
    if match is None:
        return False, ""
    cond, body = match[0], rest[match.end():]
    negate = cond.startswith("!")
    cond = cond[1:] if negate else cond
    if cond in ("n", "o"):
        holds = True
    elif cond in ("t", "e", "v"):
        holds = False
    elif cond[:1] in "'\"" and len(cond) > 2:
        first, _, second = cond[1:-1].partition(cond[0])
        holds = first == second
    elif re.fullmatch(r"\d+", cond):
        holds = int(cond) > 0
    else:
        return False, body
    return holds != negate, body


def convert(source: str) -> Page:
    """The page's title and text parts (headings and paragraphs)."""
    converter = _Converter()
    for line in logical_lines(source):
        converter.feed(line)
    converter.paragraph()
    return converter.page
