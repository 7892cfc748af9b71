"""The passages an answer reads: the best hits, not the same passage many times.

A search ranks chunks one by one, so one long file (a manual page cut into twenty option chunks, a PDF) or many
near-identical files (the release notes of ten maintenance releases that each merge up the same fix, the title
page every page of an HTML manual repeats) can fill all the hits an answer reads, and the passage that answers —
in another file, or the one file of the set that differs — is ranked just below them and never read.

`spread` takes the hits of a deeper search in rank order and defers a hit whose text is near-identical to a hit
taken (the same words once numbers are left out) unless it holds an exact token of the question (a version, a path,
an option) the other does not; deferred hits fill the places left, in rank order.  The first hit is always the
search's first.  (A cap of hits per file is there too, off: measured worse.)
"""

from __future__ import annotations

import re

from docqa.retrieve import SearchResults
from docqa.text import exact_tokens, holds_exact
from docqa.answer.release import SERIES
from docqa.text.language import HAN
from docqa.types import Hit

# The search reads this many times the hits an answer reads, the deeper ones as stand-ins for deferred hits (1: off, the
# search's own hits in its order).  Off: on the trust dev split (main 1ee16e2's kb) a depth of 2 put a right chunk among
# the hits read for one more answerable question (118 against 117 of 130) and changed 3 answers (81/130 & 55/63 against
# 80/130 & 56/63: git-relnotes-007 right, git-relnotes-037 wrong -> not found, debian-edu-zh-041 a near miss answered);
# on test 75/173 & 32/51 against 76 & 32 (git-relnotes-031: the sentence judged changed with the pool).  A wash, so
# left off; the decision and the sentence ranking were fitted on the search's own hits (benchmarks/RESULTS.md,
# issue 28, `recall4`).
DEPTH = 1
PART_DEPTH = 1  # the same for the search of each part of a question of several parts
# Hits of one file taken before the others' (0: no cap).  Off: on the trust dev split a cap of 3 put a right chunk among
# the hits read for fewer answerable questions (115 against 117 of 130; 78/130 against 80), a cap is no general rule: one
# manual page's option chunks often hold the answer a few chunks apart.
FILE_CAP = 0
SAME = 0.8  # two chunks whose word sets (numbers left out) overlap this much (Jaccard) say the same thing (> 1: off)

_WORD = re.compile(rf"[^\W\d_]+|[{HAN}]")  # words without digits; a CJK character is a word


def words(text: str) -> frozenset[str]:
    """The words of a chunk's text, lower-cased, numbers left out (`v2.31.8` and `v2.32.7` read the same)."""
    return frozenset(w.lower() for w in _WORD.findall(text))


def alike(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two chunks say the same thing: their word sets overlap by `SAME` or more."""
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= SAME


def order(hits: list[Hit], count: int, query: str = "") -> list[Hit]:
    """The `count` hits to read: in rank order, a hit deferred when its file already gave `FILE_CAP` of those taken
    or its text is near-identical to one taken that holds every exact token of `query` (text/exact.py: a version, a
    path, an option) it holds; deferred hits fill what is left, in rank order."""
    tokens = exact_tokens(query)
    taken: list[Hit] = []
    deferred: list[Hit] = []
    per_file: dict[str, int] = {}
    seen: list[tuple[frozenset[str], frozenset[str]]] = []
    for hit in hits:
        if len(taken) >= count:
            break
        w = words(hit.text)
        held = frozenset(t for t in tokens if holds_exact(hit.text, t))
        capped = FILE_CAP and per_file.get(hit.path, 0) >= FILE_CAP
        if taken and (capped or any(held <= h and alike(w, s) for s, h in seen)):
            deferred.append(hit)
            continue
        taken.append(hit)
        per_file[hit.path] = per_file.get(hit.path, 0) + 1
        seen.append((w, held))
    return taken + deferred[: count - len(taken)]


def spread(results: SearchResults, count: int, depth: int = 2) -> SearchResults:
    """`results` (a search `depth` times deeper than `count`) cut to the `count` hits an answer reads (`order`);
    `results` as they are when `depth` is 1 or less (off)."""
    if depth <= 1:
        return results
    hits = order(list(results), count, results.query)
    out = SearchResults(hits, results.query, results.mode, low_relevance=results.low_relevance, threshold=results.threshold)
    out.rerank = results.rerank
    kept = {h.chunk_id for h in hits}
    out.without_vectors = [c for c in results.without_vectors if c in kept]
    return out


# -- a release series the question names ----------------------------------------------------------------------------
# "Which 2.39.x release carries the fix for CVE-2023-29007?": the maintenance releases of every other series merge the
# same fix in the same words (2.31.8, 2.32.7, … 2.37.7), rank first and fill the hits, and the notes of the series asked
# (`RelNotes/2.39.3.txt`) are never read.  When no hit is from a file named by a release of the series, one more search,
# scoped to such files, puts its best hits in the last places.
SERIES_SEARCH = True  # (dev figures: benchmarks/RESULTS.md, 2026-12-06, `hop2`)
SERIES_HITS = 2  # at most this many hits of the series' own files take the last places
_RELEASE = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+)")


def series(query: str) -> str | None:
    """The prefix of the first release series `query` names ("2.39." for "2.39.x"), or None."""
    m = SERIES.search(query)
    return f"{m.group(1)}." if m else None


def series_glob(prefix: str) -> str:
    """A path glob of the files whose path holds a release of the series (`*2.39.*`; `in_series` checks the name)."""
    return f"*{prefix}*"


def in_series(hit: Hit, prefix: str) -> bool:
    """Whether the hit's file is named by a release of the series (`RelNotes/2.39.3.txt` for "2.39.")."""
    name = hit.path.replace("\\", "/").rsplit("/", 1)[-1]
    return any(m.group(1).startswith(prefix) for m in _RELEASE.finditer(name))


def with_series(results: SearchResults, found: list[Hit], prefix: str) -> SearchResults:
    """`results` with the best SERIES_HITS of `found` (a search scoped to the series' files) in its last places, when
    none of `results` is from the series' files; `results` as they are else."""
    own = [h for h in found if in_series(h, prefix) and h.chunk_id not in {x.chunk_id for x in results}][:SERIES_HITS]
    if not own or any(in_series(h, prefix) for h in results):
        return results
    hits = list(results)[: max(len(results) - len(own), 0)] + own
    out = SearchResults(hits, results.query, results.mode, low_relevance=results.low_relevance, threshold=results.threshold)
    out.rerank = results.rerank
    kept = {h.chunk_id for h in hits}
    out.without_vectors = [c for c in results.without_vectors if c in kept]
    return out
