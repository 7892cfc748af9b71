"""What a collection may be called: letters (any script, CJK included), digits, `-`, `_` and `.`;
not starting with a dot; at most 64 characters.  A name that would be a path (`team/ops`, `..`),
carry a control character (`a\\0b`) or look like a hidden file is refused when a collection is made.
Names stored before this rule stay reachable: they can still be listed, searched and removed."""

from __future__ import annotations

import unicodedata

from docqa.errors import InputError

MAX_CHARS = 64
_PUNCTUATION = "-_."
_LETTER_OR_DIGIT = {"Lu", "Ll", "Lt", "Lm", "Lo", "Nd"}


def is_valid(name: str) -> bool:
    """True when `name` may be given to a new collection."""
    return (0 < len(name) <= MAX_CHARS and not name.startswith(".")
            and all(ch in _PUNCTUATION or unicodedata.category(ch) in _LETTER_OR_DIGIT for ch in name))


def check_collection(name: str) -> str:
    """`name` when a new collection may be called so; else InputError saying what is allowed."""
    if not is_valid(name):
        raise InputError(f"{name!r} cannot name a collection: use letters, digits, '-', '_' and '.' (CJK too), "
                         f"not starting with '.', at most {MAX_CHARS} characters — e.g. 'team-ops'")
    return name



def check_nul(text: str | None, what: str) -> str | None:
    """`text`, unless it holds a NUL character (no database stores it; InputError naming `what`)."""
    if text is not None and "\x00" in text:
        raise InputError(f"the {what} holds a NUL character (\\0): remove it")
    return text
