"""A second hop for the extractive answerer (issue 28, item 4): a question whose answer sits in two files.

Release notes say "This release merges the fixes that appear in v2.30.9 ... CVE-2023-29007; see the release notes
for these versions for details"; a man page says "/run/nologin is created five minutes before shutdown".  A
question that asks on ("... what could an attacker achieve with that bug?") is answered by the file the sentence
names, not by the sentence.  When a pick names a version or a path that the question does not, while the question
names one of the same kind, and at least two of the question's terms are in none of the quoted sentences, the
answerer searches once more for that entity, the question's names the linking sentence holds too and the uncovered
terms, through the run's own scoped search (the caller's collections only), keeps the passages of the entity's own
file (`2.30.9.txt`, `nologin.5.gz`) and quotes its best sentence that is no repeat of the quoted ones, when the
evidence model accepts the hop's question there.  One search and one extraction at most: the hop is bounded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from docqa.answer.extractive import Sentence
from docqa.answer.parts import sentences
from docqa.answer.support import content_tokens
from docqa.text.exact import exact_tokens, holds_exact
from docqa.text.language import HAN, has_cjk
from docqa.text.segment import query_terms, query_words
from docqa.types import Hit

HOP = True  # the second hop is on (dev figures: benchmarks/RESULTS.md, 2026-12-06 "multi-hop")
HOP_TERMS = 6  # at most this many of the question's uncovered terms go into the hop's query
HOP_MIN_REST = 2  # ... and at least this many must be uncovered: one missing word is a paraphrase, not a second hop
HOP_DEPTH = 2  # the hop searches this many times the run's top_k passages (the entity's own file may rank low)
HOP_PICKS = 3  # the hop quotes one of its best few sentences: the first that is no repeat of the quoted ones
REPEAT = 0.6  # a hop sentence with this share of its content words in the quoted ones repeats them
# what a link may be: a version (release notes of one version a file) or a path (a file's own manual page), and only
# when the question names one of the same kind; an option, a CVE or an identifier names no file of its own
LINKS = frozenset({"version", "path"})
_VERSION = re.compile(r"v?\d+(?:\.\d+)+[a-z0-9~+-]*", re.IGNORECASE)
_ASKED = re.compile(r"\b(?:which|what)\s+([A-Za-z][\w-]*)|(?:哪个|哪些|哪种|什么)([" + HAN + r"]{2})", re.IGNORECASE)
# words that frame what a question says rather than what it asks about
_FRAME = frozenset("says say said tells told mentions release releases version one which what".split())


@dataclass(frozen=True, slots=True)
class Bridge:
    entity: str  # what a quoted sentence names and the question does not ("v2.30.9", "/run/nologin")
    asks: tuple[str, ...]  # the nouns the question asks for ("cves", "cve"): the hop's sentence must hold one; () any
    rest: tuple[str, ...]  # the question's terms that no quoted sentence holds
    query: str  # the hop's search query, and the question its sentence is judged against


def bridge(question: str, quoted: Sequence[str], weights: Mapping[str, float] | None = None) -> Bridge | None:
    """The link to follow from the picks (best first), or None: the question's terms are covered, or no pick names
    a version or path the question does not while the question names one of that kind.  `weights`: the terms'
    IDF (the rarest uncovered ones go into the hop's query)."""
    joined = " ".join(quoted)
    said = set(query_words(joined))
    named = exact_tokens(question)
    rest = [t for t in query_terms(question) if t not in said and _content(t) and not any(t in n.lower() for n in named)]
    if len(rest) < HOP_MIN_REST:
        return None
    rest.sort(key=lambda t: -(weights or {}).get(t, 0.0))
    kinds = {_kind(n) for n in named} & LINKS
    links = [t for text in quoted for t in exact_tokens(text)
             if _kind(t) in kinds and not holds_exact(question, t) and not _given(t, question)]
    if not links:
        return None
    link = links[0]
    source = next(text for text in quoted if link in exact_tokens(text))
    # the question's names that the linking sentence holds too are what the link is about ("CVE-2023-29007" beside
    # "v2.30.9"); those it does not hold name the first file ("Git 2.35.8"), not the second
    about = [n for n in named if holds_exact(source, n)]
    terms = tuple(rest[:HOP_TERMS])
    # what the question asks for ("which CVEs"): the linking sentence may say it ("four CVEs") without naming them
    asks = [w for w in asked_nouns(question) if w not in terms]
    # ... and what it asks for is the hop's question: the rest of its words, said in the first file, are paraphrased
    # there ("hardening" for "defense in depth") and not said again in the second
    query = " ".join((_bare(link), *about, *(asks or terms)))
    return Bridge(link, tuple(asks), terms, query)


def asked_nouns(question: str) -> list[str]:
    """The noun a "which/what X" or 哪个X/什么X asks for ("CVEs", "setting", "文件"), lower-cased; [] when none."""
    found = [(m.group(1) or m.group(2)).lower() for m in _ASKED.finditer(question)]
    nouns = [w for w in dict.fromkeys(found) if _content(w) and w in query_terms(question)]
    # a plural asks for the thing its singular names in the text ("which CVEs" -> "CVE-2024-32002")
    return [x for w in nouns for x in ((w, w[:-1]) if w.endswith("s") and not w.endswith("ss") and w.isascii() else (w,))]


def _content(term: str) -> bool:
    """A term worth searching for: not a number's fragment, not a lone letter, not a frame word."""
    return not term.isdigit() and (len(term) > 1 or has_cjk(term)) and term not in _FRAME


def _kind(token: str) -> str:
    """version, option, path or name: what kind of entity an exact token is."""
    if token.startswith("-"):
        return "option"
    if "/" in token:
        return "path"
    return "version" if _VERSION.fullmatch(token) else "name"


def _given(token: str, question: str) -> bool:
    """Whether the question already names the token in another spelling (`v2.39.4` for `2.39.4`)."""
    bare = token.lstrip("vV")
    return bare != token and holds_exact(question, bare)


def own(hits: list[Hit], entity: str) -> list[Hit]:
    """The hop's passages from the entity's own file (`2.30.9.txt` for `v2.30.9`, `nologin.5.gz` for
    `/run/nologin`): a sibling that repeats the first file's sentence ("merges the fixes that appear in v2.30.9")
    is the same link again, not its answer; no own file, no hop."""
    stem = _stem(entity)
    return [h for h in hits if holds_exact(_name(h.path), stem)]


def named_glob(entity: str) -> str:
    """A path glob of the files whose name holds what names the entity's own file (`*2.30.9*` for `v2.30.9`)."""
    return f"*{own_glob(_stem(entity))}*"


def _stem(entity: str) -> str:
    """What the entity's own file is named by: a version without its `v`, a path's last part."""
    last = entity.rstrip("/").rsplit("/", 1)[-1] if "/" in entity else entity
    return _bare(last) or entity


def _bare(entity: str) -> str:
    return entity[1:] if entity[:1] in "vV" and entity[1:2].isdigit() else entity


def _name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def repeats(sentence: str, quoted: Sequence[str]) -> bool:
    """Whether the hop's sentence says little the quoted ones do not ("This release addresses the security issues
    CVE-2023-25652, ..." after "... merges the fixes that appear in v2.30.9 to address the security issues ...")."""
    words = content_tokens(sentence)
    said = content_tokens(" ".join(quoted))
    return not words or len(words & said) / len(words) >= REPEAT


def pick(ranked: Sequence[Sentence], candidates: Sequence[Sentence], quoted: Sequence[str],
         asks: Sequence[str] = ()) -> Sentence | None:
    """The hop's sentence: the best ranked one that says something the quoted ones do not (and, given `asks`, that
    names one of them: what the question asks for); a lead-in that ends with a colon ("* CVE-2023-29007:") is taken
    with the sentence after it in its passage."""
    for best in ranked:
        after = _next(best, candidates) if best.text.rstrip().endswith((":", "：")) else None
        if after is not None:
            best = Sentence(best.n, best.start, after.end, f"{best.text} {after.text}", score=best.score)
        if (not asks or set(asks) & set(query_words(best.text))) and not repeats(best.text, quoted):
            return best
    return None


def _next(sentence: Sentence, candidates: Sequence[Sentence]) -> Sentence | None:
    following = [c for c in candidates if c.n == sentence.n and c.start >= sentence.end]
    return min(following, key=lambda c: c.start, default=None)


# -- a question that names two things, each with a file of its own -----------------------------------------------------
# "kill 不指定信号时发出的信号，和 timeout 超时后默认发出的信号，是同一个吗？" names two commands, each with its own manual
# page (kill.1.gz, timeout.1.gz): one search over the whole knowledge base finds one of them; the answer needs both.
SUBJECTS = True  # one scoped search per named subject (dev figures: benchmarks/RESULTS.md, 2026-12-06 "multi-hop ... subjects")
MAX_SUBJECTS = 3  # a question naming more things than this is a list, not two hops
_WORD = re.compile(r"(?<![\w./=-])[A-Za-z][\w+-]*(?![\w/=-]|\.\w)")  # a word as written: not part of a path, option or file name


@dataclass(frozen=True, slots=True)
class Subject:
    term: str  # what the question calls it ("kill")
    path: str  # the one document named after it (".../man1/kill.1.gz")


def subjects(question: str, paths: Sequence[str]) -> list[Subject]:
    """The things the question names that each have one document named after them (a command's manual page, a
    program's README named `<program>.md`), when there are two or more of them (and at most MAX_SUBJECTS); [] else.
    A word that names no document, or several (`README`), or that is a search's stop word (`at`), is no subject;
    the file's name is matched as written."""
    owners: dict[str, list[str]] = {}
    for path in paths:
        owners.setdefault(_name(path).split(".", 1)[0], []).append(path)
    found: dict[str, Subject] = {}
    for word in names(question):
        own = owners.get(word, [])
        if len(own) == 1 and own[0] not in found:
            found[own[0]] = Subject(word, own[0])
    return list(found.values()) if 2 <= len(found) <= MAX_SUBJECTS else []


def names(question: str) -> list[str]:
    """The words that may name a thing with a file of its own: plain ASCII words that are search terms, as written
    (a file is named `kill.1.gz`; "KILL" is a signal), where the question asks.  A command named only in a statement
    that sets the scene ("我用 find 找出一批日志再通过 xargs rm 删除。") is how the asker got there, not what is asked about."""
    terms = set(query_terms(question))
    asks = " ".join(x for x in sentences(question) if x.endswith(("?", "？"))) or question
    return [w for w in dict.fromkeys(_WORD.findall(asks)) if w.lower() in terms]


def own_glob(path: str) -> str:
    """A path glob that matches exactly `path` (its glob characters escaped)."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def uncited(found: Sequence[Subject], cited: Sequence[str]) -> list[Subject]:
    """The subjects whose own document no citation of the answer is in."""
    return [s for s in found if s.path not in set(cited)]


# -- a later part of a question asks about what the earlier part's answer names ----------------------------------------
# "靠的是什么文件？这种文件存在时还有谁能登录？": the first part's answer names /run/nologin ("… 将会创建 /run/nologin 文件"),
# the second asks about "这种文件", which its own words never name; ranked with the part before it, it quotes the first
# part's sentence again.  "Which 2.39.x release carries the fix for CVE-2023-29007, and what kind of attack did that bug
# allow?": the first part's answer names v2.30.9, whose notes say what the bug allowed.  Such a part is asked once more
# in the file the earlier answer names (as the second hop is), with that entity, and quotes what it says there.
PART_HOP = True  # a later part referring back follows the entity the earlier part's answer names (dev: RESULTS.md, `hop2`)
# what refers back to an earlier part: "that bug", "this option", "it"; 这种文件, 那个选项, 它 (not 应该, 活该)
_REFERS = re.compile(r"\b(?:that|this|these|those|it|its|they|them)\b|[这那][种个些类条项份样]|它|(?<![应活])该", re.IGNORECASE)


def refers_back(question: str) -> bool:
    """Whether a part of a question refers to something an earlier part asked or answered ("that bug", 这种文件)."""
    return _REFERS.search(question) is not None


def part_link(question: str, earlier: str, quoted: Sequence[str], files: Sequence[str] = ()) -> Bridge | None:
    """The entity to ask a later part `question` about: the first version or path the earlier part's quoted sentences
    (`quoted`, best first) name that neither part does, when the later part refers back; None else.  An entity that
    names a file the earlier part quotes from (`files`: "Git v2.39.3 Release Notes" in `2.39.3.txt`) is where the
    earlier answer is, not where it leads.  The hop's query is that entity, the earlier part's names its sentence holds
    too ("CVE-2023-29007" beside "v2.30.9": what the link is about) and the later part as asked."""
    if not refers_back(question):
        return None
    asked = f"{earlier} {question}"
    links = [t for text in quoted for t in exact_tokens(text)
             if _kind(t) in LINKS and not holds_exact(asked, t) and not _given(t, asked)
             and not any(holds_exact(_name(f), _stem(t)) for f in files)]
    if not links:
        return None
    link = links[0]
    source = next(text for text in quoted if link in exact_tokens(text))
    about = [n for n in exact_tokens(earlier) if holds_exact(source, n)]
    return Bridge(link, (), (), " ".join((_bare(link), *about, question)))


def said_again(picks: Sequence[str], quoted: Sequence[str]) -> bool:
    """Whether a later part's best pick (`picks`, best first) only says again what the earlier part quotes: it found
    nothing of its own (ranked with the part before it, it ranks that part's answer first).  No picks: nothing of its own."""
    return not picks or picks[0] in quoted or repeats(picks[0], quoted)
