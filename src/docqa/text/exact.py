"""Exact tokens: the words of a question that must be found as they are written.

A version (`2.39.5`), a path (`/etc/ssh/sshd_config`), an option (`--depth`), a CVE id
(`CVE-2024-32002`), an error name (`ERR_SSL_PROTOCOL`) or an identifier (`sshd_config`,
`core.hooksPath`, `x86_64`) names one thing, and a near neighbour (`2.39.4`) is another thing.
The full-text tokenizer (`query_words`, FTS5's unicode61) cuts such a token into pieces
(`2`, `39`, `5`), which every sibling version shares, and a dense embedding barely tells the
siblings apart; so the retriever looks for the token itself (retrieve/retriever.py).

`exact_tokens` finds them in any text, Chinese around them included ("git 2.39.5 为什么发布"):
runs of ASCII letters, digits and `_ . / : + -` that the word tokenizer cuts in pieces.  What it
keeps whole (`E0425`, `sha256`, `libtasn1`, `X11`: one term each, which BM25 already matches
exactly) is not an exact token, nor is a plain word, a number, a CamelCase name or a version
family (`2.30.x`).  `holds_exact` checks a text for a token at token boundaries, case ignored:
`2.39.5` is in "Git v2.39.5 Release Notes" and in "RelNotes/2.39.5.txt", not in "2.39.50" or
"12.39.5"; a short option only as written (`-W` is not `-w`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from docqa.text.segment import SHORT_OPTION

# A candidate: an optional option dash or path root, then an ASCII word run with inner separators.
# A comma between digits stays inside: phosphatidylinositol-3,4-bisphosphate is one name, not two.
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_./~,-])(?:--?|~?/)?[A-Za-z0-9_](?:[A-Za-z0-9_.+/:-]|,(?=\d))*")
_TRAILING = ".:/+-"  # sentence punctuation or a dangling separator, not part of the token
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)
_FAMILY = re.compile(r"v?\d+(?:\.\d+)*\.[x*]", re.IGNORECASE)
# A time of day (22:00, 6:30, 23:59:59): a value the user gives, like a number, not the name of one thing
TIME_OF_DAY = re.compile(r"(?<![A-Za-z0-9_:.])(?:[01]?\d|2[0-4]):[0-5]\d(?::[0-5]\d)?(?![A-Za-z0-9_:])")


def exact_tokens(text: str, whole: bool = False) -> list[str]:
    """The distinct exact tokens of `text`, in order, as written; with `whole`, also the identifiers the
    word search keeps whole (`libtasn1`, `X11`, `E0425`: letters and digits in one word)."""
    out: list[str] = []
    for m in _CANDIDATE.finditer(text):
        token = m.group().rstrip(_TRAILING)
        if (_is_exact(token) or (whole and _is_whole(token))) and token.lower() not in (t.lower() for t in out):
            out.append(token)
    return out


def _is_exact(token: str) -> bool:
    body = token.lstrip("-")
    if not body:
        return False
    if token.startswith("-"):  # an option: -l, --depth
        return body[0].isalpha() and len(token) - len(body) <= 2
    if "/" in token:  # a path: rooted, several levels deep, or naming a file
        parts = [p for p in token.split("/") if p]
        return bool(parts) and (token.startswith(("/", "~/")) or len(parts) >= 3 or "." in parts[-1])
    has_digit = any(c.isdigit() for c in token)
    if TIME_OF_DAY.fullmatch(token):  # a time of day: a value like a number
        return False
    if "_" in token.strip("_"):  # sshd_config, LD_LIBRARY_PATH
        return True
    if has_digit:  # 2.39.5, 3.11, CVE-2024-32002; not 2024, E0425 (one term), 2nd, 2.30.x (a family)
        return any(c in ".:-+" for c in token) and not _FAMILY.fullmatch(token)
    if "." in token:  # core.hooksPath, README.Debian; not e.g, i.e
        return all(len(p) >= 2 for p in token.split("."))
    return False


def _is_whole(token: str) -> bool:
    return token.isalnum() and any(c.isdigit() for c in token) and any(c.isalpha() for c in token) \
        and not _ORDINAL.fullmatch(token)


def holds_exact(text: str, token: str) -> bool:
    """Whether `text` holds `token` at token boundaries (case ignored, but for a short option's: `SHORT_OPTION`)."""
    if token.lower() not in text.lower():  # a plain scan first: ~10x faster than the pattern on a miss
        return False
    return _pattern(token).search(text) is not None


@lru_cache(maxsize=512)
def _pattern(token: str) -> re.Pattern:
    first, last = token[0], token[-1]
    if first.isdigit():  # v2.39.5 and 发布2.39.5 hold 2.39.5; 12.39.5 and 1.2.39.5 do not
        start = r"(?<![0-9])(?<![0-9]\.)"
    elif first.isalnum() or first == "_":
        start = r"(?<![A-Za-z0-9_])"
    else:  # an option's dash or a path's slash
        start = r"(?<![A-Za-z0-9_-])"
    if last.isdigit():  # 2.39.5.txt and "2.39.5." hold 2.39.5; 2.39.50 and 2.39.5.1 do not
        end = r"(?![0-9])(?!\.[0-9])"
    else:  # an option goes on past a dash: --depth is not --depth-limit
        end = r"(?![A-Za-z0-9_])" + (r"(?!-[A-Za-z0-9])" if first == "-" else "")
    # a short option's case is its meaning: `-W` (tar --verify) is not `-w` (--interactive); a long one's is not
    return re.compile(start + re.escape(token) + end, 0 if SHORT_OPTION.fullmatch(token) else re.IGNORECASE)
