"""roff escape sequences to plain text: fonts and sizes dropped, `\\-` and named glyphs mapped.

`Escapes.text` turns one line of roff text into what a reader sees: `\\fB--all\\fR` -> `--all`,
`\\(em` -> an em dash, `\\*(lq` -> the string defined by `.ds` (or a built-in one).  Escapes that
only move the pen or measure (`\\h'..'`, `\\w'..'`, `\\s-1`, `\\kx`) print nothing.  `\\c` (join with
the next line) leaves a marker, JOIN, for the caller.
"""

from __future__ import annotations

import re
import unicodedata

JOIN = "\ue001"  # where `\c` stood: the next input line continues this one without a space

# groff_char(7), the glyphs man pages use; anything else prints nothing.
NAMED: dict[str, str] = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "mi": "-", "-": "-", "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122",
    "aq": "'", "dq": '"', "lq": "\u201c", "rq": "\u201d", "oq": "\u2018", "cq": "\u2019", "Bq": "\u201e",
    "bq": "\u201a", "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039", "fc": "\u203a", "bu": "\u2022", "ci": "\u25cb",
    "sq": "\u25a1", "de": "\u00b0", "mu": "\u00d7", "di": "\u00f7", "+-": "\u00b1", "<=": "\u2264", ">=": "\u2265",
    "!=": "\u2260", "==": "\u2261", "~=": "\u2245", "ap": "~", "->": "\u2192", "<-": "\u2190", "<>": "\u2194",
    "ua": "\u2191", "da": "\u2193", "rA": "\u21d2", "lA": "\u21d0", "tI": "~", "ti": "~", "ha": "^", "a^": "^",
    "a~": "~", "rs": "\\", "sl": "/", "ba": "|", "br": "|", "or": "|", "at": "@", "sh": "#", "Do": "$", "Eu": "\u20ac",
    "eu": "\u20ac", "ct": "\u00a2", "Po": "\u00a3", "Ye": "\u00a5", "ps": "\u00b6", "sc": "\u00a7", "dg": "\u2020",
    "dd": "\u2021", "pl": "+", "eq": "=", "ul": "_", "ru": "_", "12": "\u00bd", "14": "\u00bc", "34": "\u00be",
    "fm": "\u2032", "sd": "\u2033", "aa": "\u00b4", "ga": "`", "ss": "\u00df", "AE": "\u00c6", "ae": "\u00e6",
    "o/": "\u00f8", "O/": "\u00d8", "OE": "\u0152", "oe": "\u0153", "r!": "\u00a1", "r?": "\u00bf", "lB": "[",
    "rB": "]", "lC": "{", "rC": "}", "la": "\u27e8", "ra": "\u27e9", "pc": "\u00b7", "md": "\u22c5", "if": "\u221e",
    "sr": "\u221a", "no": "\u00ac", "AN": "\u2227", "OR": "\u2228", "mo": "\u2208", "es": "\u2205", "sp": " ",
    "nbsp": " ", "u2014": "\u2014", "Sd": "\u00f0", "TP": "\u00de", "Tp": "\u00fe", "-D": "\u00d0", "hA": "\u21d4",
}
_ACCENTS = {"'": "\u0301", "`": "\u0300", ":": "\u0308", "^": "\u0302", "~": "\u0303", ",": "\u0327", "o": "\u030a",
            "v": "\u030c"}
_GREEK = "abgdezyhiklmnxoprstufcqw"  # \(*a .. \(*w, in the order of the Greek alphabet (groff's mnemonic letters)
_GREEK_LOWER = "αβγδεζηθικλμνξοπρστυφχψω"
# built-in strings (\*(lq, \*R ...) that pages use without defining them
BUILTIN_STRINGS = {"lq": "\u201c", "rq": "\u201d", "R": "\u00ae", "Tm": "\u2122", "Aq": "'", "S": "", "HF": "",
                   "Lq": "\u201c", "Rq": "\u201d"}

_NAME = r"(?:\((?P<{0}2>..)|\[(?P<{0}b>[^\]\n]{{0,40}})\]|(?P<{0}1>.))"
_ESCAPE = re.compile(
    r"\\(?:"
    r"(?P<font>f" + _NAME.format("f") + r")"
    r"|(?P<string>\*" + _NAME.format("s") + r")"
    r"|\((?P<glyph2>..)"
    r"|\[(?P<glyphb>[^\]\n]{0,40})\]"
    r"|(?P<size>s[-+]?(?:\(\d\d|\[[^\]\n]{0,20}\]|'[^'\n]{0,20}'|[1-3]\d|\d))"
    r"|(?P<register>n[-+]?" + _NAME.format("n") + r")"
    r"|(?P<named>[CN])(?P<nd>['\"|])(?P<nv>[^\n]{0,40}?)(?P=nd)"
    r"|(?P<delimited>[hvwlLDoxbXZHSRBA])(?P<d>[^\s\w\\])[^\n]{0,200}?(?P=d)"
    r"|(?P<colour>[mMgVYk$]" + _NAME.format("c") + r")"
    r"|(?P<comment>[\"#]).*"
    r"|(?P<single>.)"
    r")"
)
_SINGLE = {"-": "-", "e": "\\", "E": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t", "'": "'", "`": "`",
           ".": ".", "c": JOIN, "_": "_", "|": "", "^": "", "&": "", ")": "", "/": "", ",": "", ":": "", "%": "",
           "{": "", "}": "", "a": "", "p": "", "r": "", "u": "", "d": "", "z": "", "!": "", "?": "", "j": ""}


_ARG = re.compile(r'"((?:[^"]|"")*)"?|((?:\\.|\S)+)')  # `\ ` (an escaped space) does not split


def split_args(text: str) -> list[str]:
    """A request's arguments: space-separated, "quoted" ones may hold spaces ("" is a quote)."""
    return [m[1].replace('""', '"') if m[1] is not None else m[2] for m in _ARG.finditer(text)]


def glyph(name: str) -> str:
    """The character a `\\(xx` or `\\[name]` escape stands for ("" when unknown)."""
    if name in NAMED:
        return NAMED[name]
    if len(name) == 2 and name[0] == "*" and name[1].lower() in _GREEK:
        letter = _GREEK_LOWER[_GREEK.index(name[1].lower())]
        return letter.upper() if name[1].isupper() else letter
    if len(name) == 2 and name[0] in _ACCENTS and name[1].isalpha():
        return unicodedata.normalize("NFC", name[1] + _ACCENTS[name[0]])
    code = re.fullmatch(r"u([0-9A-Fa-f]{4,6})(?:_[0-9A-Fa-f]{4,6})*|char(\d{1,7})", name)
    if code:
        number = int(code[1], 16) if code[1] else int(code[2])
        return chr(number) if number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF else ""
    return ""


def _named(match: re.Match[str], prefix: str) -> str:
    return match[prefix + "2"] or match[prefix + "b"] or match[prefix + "1"] or ""


class Escapes:
    """Escape expansion with the page's own strings (`.ds`)."""

    def __init__(self) -> None:
        self.strings: dict[str, str] = dict(BUILTIN_STRINGS)
        self._depth = 0

    def define(self, name: str, value: str) -> None:
        self.strings[name] = value

    def text(self, line: str) -> str:
        """One line of roff text as plain text (JOIN where `\\c` stood)."""
        if "\\" not in line:
            return line
        return _ESCAPE.sub(self._replace, line)

    def _replace(self, match: re.Match[str]) -> str:
        if match["glyph2"] is not None:
            return glyph(match["glyph2"])
        if match["glyphb"] is not None:
            return glyph(match["glyphb"])
        if match["string"]:
            return self._string(_named(match, "s"))
        if match["named"]:
            value = match["nv"]
            if match["named"] == "N":
                return chr(int(value)) if value.isdigit() and 31 < int(value) < 0x110000 else ""
            return glyph(value)
        if match["single"] is not None:
            char = match["single"]
            return _SINGLE.get(char, char)
        return ""  # fonts, sizes, registers, motions, colours, comments

    def _string(self, name: str) -> str:
        value = self.strings.get(name, "")
        if "\\" not in value or self._depth > 4:  # strings may use strings; a loop must end
            return value
        self._depth += 1
        try:
            return self.text(value)
        finally:
            self._depth -= 1
