"""What a question and a sentence in different languages can share: the tokens both languages write alike.

Across languages (a Chinese question over English text, or the reverse) the question's words cannot be
looked for in the sentence, so the answer-or-abstain decision had only the embedding to go by there.
But documentation writes its technical tokens the same in every language: commands and programs
(`tar`, `git shell`, `journald`), options and settings (`--priority`, `MaxFileSec=`), paths, versions,
identifiers (`CVE-2023-25652`, `max_connections`) and names (`Memcheck`, `LilyPond`).  A question that
names `Callgrind` is not answered by a sentence about Helgrind in the other language, however close their
embeddings are.

The question's **language-neutral tokens** are its words in Latin letters or digits that the Chinese side
writes as they are: for a Chinese question all of its Latin words and numbers (`CVSS`, `render`, `GID`);
for an English question those of its technical words (an exact token, or a word rare in English: `tar`, `ustar`,
`LilyPond`) that the Chinese candidate sentences also write, so that its ordinary words ("largest", "file", "number"),
which a Chinese text translates, do not count.

`features` gives, for a sentence in the other language than the question, the share of these tokens that
neither the sentence's window nor its passage's title, section or file name holds (`neutral_missing`), and
whether the question names any (`neutral_count`, capped); both are 0 within one language, so a decision
fitted with them is unchanged for questions in the documents' own language (SQuAD, CMRC).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.answer.facts import normalise
from docqa.text.background import rarity
from docqa.text.exact import exact_tokens, holds_exact
from docqa.text.language import HAN, has_cjk
from docqa.text.segment import SHORT_OPTION, STOPWORDS

# A word of Latin letters or digits, joined over . _ - + (an option's dashes and a setting's = kept out)
_LATIN = re.compile(rf"(?<![^\W{HAN}])[A-Za-z0-9]+(?:[._+-][A-Za-z0-9]+)*")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
# An English word this rare in the language (docqa.text.background: names, jargon, programs: `groff`, `journalctl`,
# `ustar`) is a technical token; everyday words ("number", "pages", "format") that a Chinese text happens to write in a
# URL or an example are not.
RARE = 0.9
_COUNT_CAP = 4  # more neutral tokens than this say no more about the question


def tokens(question: str, other: Iterable[str] = ()) -> list[str]:
    """The question's language-neutral tokens (see the module docstring), lower-cased but a short option (`-W` is not
    `-w`), in order: all its Latin words and numbers for a Chinese question; for another, those the Chinese texts
    `other` also write (whole words)."""
    text = _POSSESSIVE.sub("", normalise(question))
    # an option or a path as a whole: `--remove-files`, not `remove-files`; a short option in its case (`-W` is not `-w`)
    exact = [t if SHORT_OPTION.fullmatch(t) else t.lower() for t in exact_tokens(text)]
    words = [m.group().lower() for m in _LATIN.finditer(text)]
    words = [w for w in words if w not in STOPWORDS and not (len(w) == 1 and w.isalpha()) and not any(w in t for t in exact)]
    out = list(dict.fromkeys([*exact, *words]))
    if has_cjk(question):
        return out
    chinese = "\n".join(t for t in other if has_cjk(t))
    rare = dict(zip(out, rarity(out)))
    return [w for w in out if (w in exact or rare[w] >= RARE) and holds_exact(chinese, w)]


def missing(neutral: list[str], held: str) -> float:
    """The share of `neutral` tokens that `held` (a sentence's window with its passage's names) does not hold."""
    if not neutral:
        return 0.0
    text = normalise(held)
    return sum(not holds_exact(text, t) for t in neutral) / len(neutral)


def features(question: str, held: str, crossing: bool, neutral: list[str]) -> dict[str, float]:
    """`neutral_missing` and `neutral_count` for a sentence whose window and names are `held` (0 within one
    language: `crossing` False)."""
    if not crossing:
        return {"neutral_missing": 0.0, "neutral_count": 0.0}
    return {"neutral_missing": missing(neutral, held), "neutral_count": min(len(neutral), _COUNT_CAP) / _COUNT_CAP}
