"""The headings a sentence is read under: what documentation names its subject by instead of the sentence.

A manual answers "What is the default of X?" with "Default: yes" under the heading "X", and a FAQ answers "How is
the name Valgrind pronounced?" with 'The "grind" is pronounced with a short i' under "Valgrind Frequently Asked
Questions > 1. Background".  Where the answerer measures how much of the question a sentence holds (the decision's
`matched`, `missing_rare`, `missing_name`: docqa.answer.extractive.evidence_features), the headings it sits under
can count as its context: recorded as `…_under` with every answer, and read by the decision itself only when
docqa.answer.extractive.HEADINGS is on (off: measured, it answered as many more near misses on the test split as
answerable questions; benchmarks/RESULTS.md).

Only the section path of a document with sections counts.  Not its title or file name: they name every passage
of the document alike ("Debian Edu / Skolelinux 12 Bookworm 手册", `debian-edu-bookworm-manual.html`), so they tell
the passage that answers from the near miss — a passage of the same manual about the subject but not the fact asked
— no better than nothing (measured on the trust dev set: with them, as many near misses answered as answerable
questions gained; benchmarks/RESULTS.md).  (The question's names that are words are read in the document's name all
the same, where the decision measures `missing_name`: docqa.answer.extractive.TITLES.)  And not the one heading of a text under its title alone (a SQuAD or CMRC
article paragraph under `# Normans`, a README with one heading): a title that names the whole text says what every
sentence of it is about, not which one answers.
"""

from __future__ import annotations

from docqa.types import Hit

_SEPARATOR = " > "


def sections(hit: Hit) -> list[str]:
    """The passage's section path, its headings from the outermost in (an empty heading, a bare `#`, left out)."""
    return [t.strip() for t in hit.section.split(_SEPARATOR) if any(ch.isalnum() for ch in t)] if hit.section else []


def sectioned(hit: Hit) -> bool:
    """The passage sits under a heading of its document's own, not only under the document's title (or file name)."""
    names = {_plain(hit.title), _plain(hit.path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0])}
    return any(_plain(t) not in names for t in sections(hit))


def headings(hit: Hit) -> str:
    """The headings the passage's sentences are read under (see the module docstring): its section path when its
    document has sections; "" otherwise."""
    return "\n".join(sections(hit)) if sectioned(hit) else ""


def _plain(text: str) -> str:
    return " ".join(text.replace("_", " ").split()).casefold()
