"""Segmentation for the full-text index.

SQLite's unicode61 tokenizer splits on spaces and punctuation but keeps a run of Chinese
characters as one token, so Chinese is pre-segmented with jieba's dictionary (via rjieba, the
same segmentation about 35x faster) and the words are joined with spaces, at index time and at
query time alike.  Latin text passes through untouched; FTS5's porter tokenizer stems it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache

from docqa.text.language import HAN, HAN_RUN, has_cjk

_WORD = re.compile(rf"[\w{HAN}]+", re.UNICODE)

# Words too common to help ranking; dropped from queries (kept if nothing else is left).
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    的 了 是 在 和 与 及 或 也 就 都 而 之 其 这 那 有 为 以 于 上 下 中 个 吗 呢 吧 啊 什么 哪 哪些 怎么 如何 多少
    多久 何时 哪里 哪儿 谁 为什么 怎样 是否 请问""".split()
)


# Words that frame a question rather than name its subject ("I want tar to ...", "我想让 tar 顺手把 ...",
# "应该用哪个选项"): dropped from search terms only (`search_terms`), so that a long conversational question's
# framing does not outweigh its subject in BM25.  Answer-type words (option, file, 选项, 文件) stay: they name
# what the passage holds.
QUESTION_FRAME = frozenset(
    """many much kind sort please tell want wanted wants know need needs
    我 我们 你 您 想 想要 要 让 把 被 将 已经 应该 应当 能 能否 可以 可 会 需要 该 这种 那种 这个 那个 哪个 哪种
    哪一个 叫 叫做 一下 时 时候 如果 的话 还 又 再 只 只想 得 地 着 过 给 对 从 到 后 以后 之后 完 请 告诉 知道 用
    是不是 有没有 能不能 会不会 应该怎么 怎么办 做法 办法 最 简单 直接 顺手 然后 先 一般""".split()
)


# A short prefix glued to a number (`RFC8878`, `sha256`, `ISO8859`, `arm64`): a standard or a family and its number.
# The tokenizer keeps it whole, so neither "RFC 8878" nor a question that names only the prefix ("which RFC …?") would
# find it.  Two to four letters and two digits at least: `x86`, `ipv6`, `utf8`, `libtasn1` are names, their pieces
# nothing a reader would search for; a longer word numbered (`subnet00`, `host01`) is an item of a list, whose word
# would match a question about the thing itself (measured: a DHCP listing of `cn=subnet00` put ahead of the answer).
_GLUED = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z]{2,4})([0-9]{2,})(?![A-Za-z0-9_])")


def with_glued_parts(text: str) -> str:
    """`text` with each word of letters glued to a number followed by its two parts (`RFC8878` → `RFC8878 RFC 8878`):
    what the full-text index holds (store.documents.indexed_text), so that the word is found as it is written and
    as its parts are."""
    if not any(c.isdigit() for c in text):
        return text
    return _GLUED.sub(lambda m: f"{m.group()} {m.group(1)} {m.group(2)}", text)


@lru_cache(maxsize=1)
def _rjieba():
    import rjieba

    return rjieba


def _cut(run: str) -> list[str]:
    return _rjieba().cut(run, False)


def segment_for_index(text: str) -> str:
    """`text` with every Chinese run split into words separated by spaces."""
    if not has_cjk(text):
        return text
    return HAN_RUN.sub(lambda m: " " + " ".join(_cut(m.group())) + " ", text)


def segmented_forms(texts: Iterable[str]) -> dict[str, str]:
    """`segment_for_index` of each text with Chinese in it, keyed by the text.  Made where a file is
    parsed, so that the process that writes the index needs no segmenter (~31 MB) and spends no time on it."""
    return {t: segment_for_index(t) for t in texts if t and has_cjk(t)}


def segmenter(known: Mapping[str, str] | None) -> Callable[[str], str]:
    """`segment_for_index`, answered from `known` (`segmented_forms`) where it holds the text."""
    if not known:
        return segment_for_index
    return lambda text: known.get(text) or segment_for_index(text)


def query_words(query: str) -> list[str]:
    """Every word of a query in order, Chinese segmented, lower-cased."""
    return [w.lower() for w in _WORD.findall(segment_for_index(query))]


# A short option as a question writes it: a dash and one letter (`-W`, `-p`), or one letter glued to a number (`-d1`,
# `-O2`); not a long option (`--verify`) nor a single-dash word (`-name`, `-Wall`).  Chinese may touch it ("用-W选项").
SHORT_OPTION = re.compile(r"(?<![A-Za-z0-9_-])-([A-Za-z][0-9]*)(?![A-Za-z0-9_-])")


class OptionTerm(str):
    """A question term that is a short option's letter: equal to the lower-cased term (`query_words`), so that weights
    and sets keyed by terms find it, with `written` the case the question wrote it in.  A short option's case is its
    meaning (`tar -W` is --verify, `tar -w` --interactive; `ls -l`/`-L`), so text holds it only where written alike
    (retrieve/snippet.py, text/exact.py); the full-text index is case-folded and finds both."""

    written: str

    def __new__(cls, written: str) -> OptionTerm:
        term = super().__new__(cls, written.lower())
        term.written = written
        return term


def fold(term: str) -> str:
    """`term` lower-cased, unless it is an `OptionTerm`, whose case stays what the question wrote."""
    return term if isinstance(term, OptionTerm) else term.lower()


def _options(query: str, words: list[str]) -> dict[str, str]:
    """The question's short options (`SHORT_OPTION`) by lower-cased word: each written one way only, and the word
    nowhere else in the question (both `-w` and `-W`, or `-x` beside the word "x", stay case-blind)."""
    found = [m.group(1) for m in SHORT_OPTION.finditer(query)]
    out = {}
    for word in dict.fromkeys(f.lower() for f in found):
        forms = {f for f in found if f.lower() == word}
        if len(forms) == 1 and words.count(word) == sum(f.lower() == word for f in found):
            out[word] = forms.pop()
    return out


def query_terms(query: str) -> list[str]:
    """The distinct search terms of a query, stopwords dropped unless nothing else remains; a short option's letter an
    `OptionTerm`, which keeps its case."""
    words = query_words(query)
    options = _options(query, words) if "-" in query else {}
    terms = [OptionTerm(options[w]) if w in options else w for w in dict.fromkeys(words)]
    content = [t for t in terms if t not in STOPWORDS]
    return content or terms


def search_terms(query: str) -> list[str]:
    """`query_terms` as full-text search wants them: the question's framing dropped (`QUESTION_FRAME`), unless
    nothing else remains.  (Searching a long Chinese word's dictionary parts as well, 当前目录 as 当前 and 目录,
    was measured and lost more questions than it found: benchmarks/RESULTS.md, issue 28 retrieval.)"""
    terms = query_terms(query)
    return [t for t in terms if t not in QUESTION_FRAME] or terms
