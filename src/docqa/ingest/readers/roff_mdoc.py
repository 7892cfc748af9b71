"""The common mdoc(7) macros (BSD-style pages) as text: `.Fl a Ar file` -> `-a file`,
`.Xr ls 1` -> `ls(1)`, `.Op ...` -> `[...]`, quotes and lists; the rest print their arguments."""

from __future__ import annotations

from typing import Protocol

from docqa.ingest.readers.roff_escapes import Escapes, split_args


class Output(Protocol):
    """What the mdoc macros write to: the man converter's paragraph builder."""

    esc: Escapes
    section_name: str  # the open .SH/.Sh heading

    def emit(self, text: str, spaced: bool = True) -> None: ...
    def paragraph(self) -> None: ...
    def line_break(self) -> None: ...
    def block_break(self, name: str) -> None: ...

_ENCLOSE = {"Op": ("[", "]"), "Dq": ("\u201c", "\u201d"), "Qq": ('"', '"'), "Sq": ("\u2018", "\u2019"),
            "Pq": ("(", ")"), "Bq": ("[", "]"), "Aq": ("<", ">"), "Brq": ("{", "}"), "Ql": ("\u2018", "\u2019")}
_OPEN = {"Oo": "[", "Do": "\u201c", "Qo": '"', "So": "\u2018", "Po": "(", "Bo": "[", "Ao": "<", "Bro": "{"}
_CLOSE = {"Oc": "]", "Dc": "\u201d", "Qc": '"', "Sc": "\u2019", "Pc": ")", "Bc": "]", "Ac": ">", "Brc": "}"}
_WORDS = {"Ar", "Cm", "Em", "Sy", "Li", "Pa", "Ev", "Va", "Dv", "Er", "Ic", "Ad", "Ms", "Sx", "Tn", "Fa", "Ft", "Fd",
          "Vt", "Lk", "Mt", "Cd", "An", "No", "Nx", "Ox", "Fx", "Bx", "At", "Bsx", "Dx", "St", "Lb", "Fn", "In",
          "Ot", "Ex", "Rv", "Ta", "Ap", "Ns", "Fl", "Xr", "Nm", "Ux", "Eo", "Ec", "Es", "En", "Sm"}
_BLOCKS = {"Pp", "Lp", "Bl", "El", "Bd", "Ed", "It", "Nd", "D1", "Dl", "Dd", "Os", "Bk", "Ek", "Bf", "Ef", "Rs", "Re",
           "%A", "%T", "%B", "%J", "%D", "%N", "%O", "%P", "%V", "%I", "%Q", "%R", "%U"}
LITERAL = "\ue002"
_CLOSING_PUNCT = {".", ",", ";", ":", ")", "]", "?", "!"}
_OPENING_PUNCT = {"(", "["}


class Mdoc:
    """mdoc requests for one page; the converter owns the output."""

    MACROS = frozenset(_WORDS | _BLOCKS | set(_ENCLOSE) | set(_OPEN) | set(_CLOSE))

    def __init__(self, converter: Output) -> None:
        self.conv = converter
        self.name: str | None = None

    def request(self, name: str, rest: str) -> None:
        # `\&.` is a literal dot, not punctuation: LITERAL keeps it from being taken for one
        args = [(LITERAL if a.startswith("\\&") else "") + self.conv.esc.text(a) for a in split_args(rest)]
        if name in ("Pp", "Lp", "Bl", "El", "Rs", "Re"):
            self.conv.paragraph()
        elif name in ("Bd", "Ed"):
            self.conv.block_break(name if name == "Ed" or "-literal" in args or "-unfilled" in args else "Pp")
        elif name == "It":
            self.conv.paragraph()
            if args:
                self.conv.emit(self.phrase(args))
                self.conv.line_break()
        elif name in ("D1", "Dl"):
            self.conv.paragraph()
            self.conv.emit(self.phrase(args))
            self.conv.paragraph()
        elif name == "Nd":
            self.conv.emit("\u2014 " + self.phrase(args))
        elif name in ("Dd", "Os", "Bk", "Ek", "Bf", "Ef"):
            return
        elif name == "Nm" and self.conv.section_name == "SYNOPSIS":  # each synopsis form on its own line
            self.conv.line_break()
            self.conv.emit(self.phrase([name, *args]))
        elif name.startswith("%"):
            self.conv.emit(self.phrase(args))
        else:
            self.conv.emit(self.phrase([name, *args]))

    def phrase(self, tokens: list[str]) -> str:
        """Words of one mdoc line, callable macros applied, punctuation attached."""
        out: list[str] = []
        glue = [True]  # whether a space goes before the next word
        self._walk(tokens, out, glue)
        return "".join(out).replace(LITERAL, "").strip()

    def _walk(self, tokens: list[str], out: list[str], glue: list[bool]) -> None:
        i = 0
        while i < len(tokens):
            token = tokens[i]
            i += 1
            if token in _ENCLOSE:
                end = len(tokens)
                while end > i and tokens[end - 1] in _CLOSING_PUNCT:
                    end -= 1
                opener, closer = _ENCLOSE[token]
                self._word(opener, out, glue, after=False)
                self._walk(tokens[i:end], out, glue)
                self._word(closer, out, [False])
                glue[0] = True
                i = end
            elif token in _OPEN:
                self._word(_OPEN[token], out, glue, after=False)
            elif token in _CLOSE:
                self._word(_CLOSE[token], out, [False])
                glue[0] = True
            elif token == "Ns":
                glue[0] = False
            elif token == "Fl":
                self._word("-", out, glue, after=False)
                if i < len(tokens) and tokens[i] not in self.MACROS and tokens[i] not in _CLOSING_PUNCT:
                    self._word(tokens[i], out, glue)
                    i += 1
                else:
                    glue[0] = True
            elif token == "Xr" and i < len(tokens):
                page = tokens[i] + (f"({tokens[i + 1]})" if i + 1 < len(tokens) else "")
                self._word(page, out, glue)
                i += 2
            elif token == "Nm":
                if i < len(tokens) and tokens[i] not in self.MACROS and tokens[i] not in _CLOSING_PUNCT:
                    self.name = self.name or tokens[i]
                    self._word(tokens[i], out, glue)
                    i += 1
                elif self.name:
                    self._word(self.name, out, glue)
            elif token == "Ux":
                self._word("UNIX", out, glue)
            elif token == "Ta":
                self._word("\t", out, [False], after=False)
            elif token in self.MACROS:
                continue  # a macro that only styles its arguments
            else:
                self._word(token, out, glue)

    @staticmethod
    def _word(word: str, out: list[str], glue: list[bool], after: bool = True) -> None:
        space = out and glue[0] and word not in _CLOSING_PUNCT and not out[-1].endswith((" ", "\t"))
        out.append((" " if space else "") + word)
        glue[0] = after and word not in _OPENING_PUNCT
