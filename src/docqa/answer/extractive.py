"""The extractive answerer: with no chat model, answer with the best supporting sentences.

Candidate sentences come from the top hits (an option's label line joins the first sentence of
its description).  Each has a base score: how much of the question's IDF-weighted terms it holds,
its embedding similarity to the question, and its chunk's retrieval score.  With an embedder, the
sentences are ranked by a small logistic model instead (`SELECT_MODEL`, P(the sentence answers the
question), fitted on the dev split of the trust dev set by `benchmarks/trust/fit_select.py`): the
base features, how far each falls behind the best candidate's, the chunk's rank, BM25 rank and
heading, whether its document's name (title, file name, folder) holds what tells the hits' documents apart
(`named`: the question names which of several sibling files it asks about), whether the sentence (and its paragraph
up to it) holds the question's exact tokens and the kind of token it asks for (a number, a version, a path, a
command; a file, package or variable; for "how much", a quantity with its unit, `amount`), for
a release question whether a heading or the file name names its release (docqa.answer.release), how much of
the sentence is about the question (`echo`), whether it names several things for a question asking for several
(`enumerates`), its similarity to the question as a reader meets it (under its heading, its option's label, a list
item's lead-in: `dense_headed`), and its length.  The best
few are chosen with maximal marginal relevance, so a repeated sentence does not crowd out a
second fact.

Whether to answer at all is a separate question: the evidence is the probability, from a small
logistic model over what the answer leads with (the best sentence by the base score, the one it was
fitted with, a second opinion beside the learned ranking's; and the next one when the best only leads up to
it; or, for a decision fitted so, `judge_picked`, the ranking's best pick and the sentence shown with it: what
is quoted), that answering is right; the ranking weighs in by its probability for its best pick
(`select_best`, under the ranking weights the decision was fitted with, `DECISION_SELECT`, so that a refit of
the ranking changes what is quoted and not whether), which the shipped decision reads beside the features of the base
score's sentence.  Its features (`evidence_features`) ask what a
careful reader would: is the sentence about the question (its embedding similarity, the retrieval
score, how many question terms it holds and how much of their weight), does it miss the question's
rarest term or one of its names or numbers, and does it say the opposite (the question is negated
and the sentence is not, or it holds an antonym of a question word instead of the word); and the
further ones of docqa.answer.answerability.  The terms are weighed so that a folder of a few files
is judged like a large knowledge base (answerability.evidence_weights).  Under the abstain
threshold the answerer says the documents do not hold the answer instead of quoting something
unrelated; the model and its threshold are fitted data (answerability, decision.json).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field, replace

import numpy as np

from docqa.answer import answerability, bilingual, clause, defined, meaning, neutral, option, quantity, release, rows, who
from docqa.answer.facts import normalise
from docqa.answer.headings import headings
from docqa.answer.shape import Shape, answered_words, asks_for, asks_several, holds_type, shape
from docqa.answer.sources import Source, SourceSet
from docqa.answer.statement import quotable_spans
from docqa.answer.support import content_tokens, jaccard
from docqa.retrieve.retriever import chunk_name
from docqa.retrieve.snippet import coverage
from docqa.text.background import rarity
from docqa.text.exact import TIME_OF_DAY, exact_tokens, holds_exact
from docqa.text.language import HAN, has_cjk
from docqa.text.segment import QUESTION_FRAME, STOPWORDS, fold, query_terms, query_words
from docqa.types import Hit

# Ranking weights of a candidate sentence.
W_TERMS, W_DENSE, W_RETRIEVAL = 0.45, 0.35, 0.20
MMR_LAMBDA = 0.7
_HITS = 5  # hits whose sentences are candidates (and, with the learned ranking, whose sentences the decision weighs)
SELECT_HITS = 6  # with the learned ranking: every hit answer.top_k (6) retrieves by default
# The answerer's own rules: each abstains whatever the evidence, when what the question asks for is not in what the
# answer would quote (a release or a date, docqa.answer.release; a quantity, docqa.answer.quantity; a name, docqa.answer.who;
# an option of the command asked, docqa.answer.option).
RULES = ("release_unnamed", "quantity_unstated", "person_unnamed", "option_elsewhere")
_MIN_CHARS = 12
# The sentence ranking: P(a candidate sentence is right) = sigmoid(bias + SELECT_MODEL . selection_features), fitted by
# `benchmarks/trust/fit_select.py fit` (numpy Newton, L2 3, each question's candidates weighted alike) on the dev
# split's answerable questions (130; a sentence is right when it lies in an evidence file and overlaps a gold quote or
# holds the answer).  Held out by documentation set: a right sentence among the three best for 79 of 129 and the best
# one right for 53, against 73 and 51 without `named` and `amount` (2026-12-06 refit, `fit_select.py dump` then
# `fit --l2 3`; 74 and 53 in the refit before, on a knowledge base built by older code).  Used only with an embedder
# (the base score ranks without one).
SELECT_MODEL: dict[str, float] = {"terms": 2.538, "dense": 2.813, "dense_gap": -1.841, "terms_gap": -2.21,
                                  "retrieval": 1.597, "chunk_dense": 0.581, "bm25": 1.124, "rank": 1.066, "heading": 0.642,
                                  "named": 0.765, "rare": -0.448, "exact": -0.52, "exact_paragraph": 1.303, "type": -0.101,
                                  "type_missing": -1.212, "thing": 1.463, "amount": 1.768, "short": -0.288, "long": -1.862,
                                  "first": 0.185, "lead_in": -0.917, "crossing": 1.047, "cross_dense": -0.727,
                                  "release": 0.239, "bias": -6.859}
# The ranking the shipped decision (decision.json) was fitted with: its `select_best` is the best candidate's probability
# under these weights, so that a refit of SELECT_MODEL changes what is quoted and not, through the scale of that
# probability, whether to answer (the 2026-12-06 refit lowered it on SQuAD 2.0 and moved answers across the threshold).
# None once the decision is refitted on select_best as SELECT_MODEL computes it (benchmarks/trust/refit_kind.py).
DECISION_SELECT: dict[str, float] | None = {
    "terms": 2.435, "dense": 2.566, "dense_gap": -2.34, "terms_gap": -2.158, "retrieval": 1.535, "chunk_dense": 0.645, "bm25": 1.358,
    "rank": 0.784, "heading": 0.989, "rare": -0.308, "exact": -0.713, "exact_paragraph": 1.48, "type": 0.73, "type_missing": -1.262,
    "thing": 1.039, "short": -0.031, "long": -2.142, "first": 0.223, "lead_in": -1.117, "crossing": 1.111, "cross_dense": -0.565,
    "release": 0.313, "bias": -6.28}
# A list item's question terms are counted with the line that introduces its list (rows.lead_in): "- LTSP 服务器：40 GiB。"
# answers "how much disk space …" because "最低限度的磁盘空间需求取决于所安装的设定：" says what the list is about.
# Off: on the trust dev split 1 better, 1 worse (the terms feed the decision's `select_best` too; benchmarks/RESULTS.md,
# `steps2`), kept for a ranking refit to weigh.
LEAD_TERMS = False
# The decision reads a list item under its lead-in (rows.lead_in) where it measures the question's terms and names:
# "Firefox 60.7 ESR 和 Chromium 73.0" is an item of "Debian 10 Buster 中所有新的部分，例如：", which names the release.
LEAD_DECISION = True
SELECT_WINDOWS = False  # a `dense_window` feature (question against the sentence and its neighbours): no gain measured
# a `dense_headed` feature (the question against the sentence under its section's heading and its option's label): computed
# when SELECT_MODEL weighs it or while fit_select.py dumps the candidates (held out by documentation set on dev, the best
# sentence right for 61 of 130 questions against 57 without it; not yet in SELECT_MODEL: see RESULTS.md, `recall2`)
SELECT_HEADED = False
SELECT_MMR = 1.0  # probabilities need no diversity trade: only near-repeats are skipped
SELECT_FLOOR = 0.0  # later picks need no share of the best's probability (dev: 0.6 and 0.3 quote fewer right ones)
SELECT_MIN = 0.1  # ... but a model's claim rests only on picks at least this likely (Extract.supporting)
# A term only the scene of a long question names (a statement before or after the sentence that asks, clause.asked)
# weighs this share of its rarity in the decision's `missing_rare` when the sentence lacks it (scene_terms).  Off (1):
# at 0.5 the dev split 6 better, 1 worse (220/372 against 214, near misses 116/147 unchanged), but valid 0 better, 1 worse
# (45/89 and 20/31 unchanged; a false abstention answered wrong) and test 2 better, 3 worse (79/173 against 77, near
# misses 30/51 against 31): benchmarks/RESULTS.md, "long conversational questions: the scene weighed less".
SCENE_SHARE = 1.0
# ... and a name (a word with a capital, a digit, an underscore) only its scene writes counts this much for `missing_name`
# (1: as any other; dev long questions: 0 gave 4 better, 3 worse against 3 and 1 with SCENE_SHARE alone, 0.5 with the
# Chinese scene clauses 1 better, 4 worse, a near miss answered)
SCENE_NAMES = 1.0
# ... and in the ranking's term measures (`terms`, `heading`, `named`, `rare`: rank; off: full dev 3 better, 7 worse:
# the learned ranking reads the scene as the subject)
SCENE_RANK = False
_LATER_PICKS = 0.6  # a second or third sentence must rank at least this share of the first's score
# With the learned ranking, a best pick at least SELECT_SURE likely to be right can be quoted alone but for the later
# picks that bear something of their own: one at least SELECT_LATER likely itself, the one that continues it in its
# paragraph (a list's next item, the rest of what it says), or one holding the kind of token the question asks for that
# the best lacks (`_bearing`).  Off (None): fitted on the trust dev split at 0.45 and 0.25 (2026-12-06, `precision`),
# 18 of its 108 answers quoted fewer sentences and no outcome changed (citation precision 52 % -> 53 %, within the right
# answers 72 % -> 76 %; SQuAD 2.0 the same, CMRC +1 question), but on the test split it turned 4 right answers wrong or
# uncited for 1 it made right (75 -> 72 of 173; precision 53 % -> 52 %): a best pick the ranking puts at 0.5-0.65 is
# not the answer often enough for the sentence that is to be left out (benchmarks/RESULTS.md).
SELECT_SURE: float | None = None
SELECT_LATER = 0.25

# The evidence model, the one answer-or-abstain decision of every mode and language pair: P(answering is right), a
# logistic model over `evidence_features`, fitted on real documentation and SQuAD 2.0; its coefficients, threshold
# and confidence bands are data (docqa.answer.answerability, decision.json).
EVIDENCE_FEATURES = tuple(answerability.decision()["features"])
# The section headings a sentence sits under count as its context where the decision measures its coverage of the
# question (answer/headings.py).  Off: on the trust dev split it gained 3 answerable questions at the same near-miss
# abstention, but on test it answered 4 near misses more for 1 answerable question (benchmarks/RESULTS.md); what
# reading under the headings changes is recorded either way (`under_…`, _evidence_under), for a refit to weigh.
HEADINGS = False
# With TITLES on, a name of the question that the passage's document is named by (its title, file name or folder:
# `_name`) counts as held where the decision measures `missing_name`: documentation names its subject once, where it
# says what it is about ("Valgrind" in "Valgrind Frequently Asked Questions", "LilyPond" in "LilyPond 学习手册: 2.2.2
# 处理输入文件", "Debian Edu" in its manual's title, the package `openssh-client` a README.Debian sits in), and its
# sentences do not repeat it.  Only a word: a number, version, option or identifier the document's name holds is not
# the one asked (the manual of Debian Edu 11 is not about Debian Edu 12; a release's notes are given their version
# exactly by `_exact_given`).  Question terms (`matched`, `missing_rare`) are not read in the name: a man page's
# program ("du" in DU(1)) names its near misses as much as its answers.  Off: on the trust dev split it gained 3
# answerable questions for 1 near miss answered, on the test split (read once) 3 for 3 near misses answered and 2
# false abstentions answered wrong — the title names a manual's near misses as it names its answers
# (benchmarks/RESULTS.md).  What reading the question's names and terms there changes is recorded either way
# (`about_name`, `about_matched`, `about_rare`: _evidence_under) for a refit to weigh.
TITLES = False
# For a number question the ranking's `type` and `amount` read a sentence without the numbers the question writes
# itself (`_unwritten_numbers`): on main a sentence repeating the question's "Python 3.11" or "512 字节" was taken
# for one that states the quantity asked (benchmarks/RESULTS.md, `wrong5`).
UNWRITTEN_NUMBERS = True
# A sentence broken by the example it displays ("add\n\n    let g:skip_defaults_vim = 1\n\nto /etc/vim/vimrc.") is one
# candidate, the example in it (rows.carried); False: its halves are read as two sentences and the example is lost.
CARRIED = True
# A sentence ending with a colon is quoted with the lines it displays under it (rows.introduced_lines: "add the following
# line to /etc/resolv.conf:" then "options trust-ad"), for every question; False: the lead-in alone, the line never.
DISPLAYED = True
# The one sentence between two quoted sentences of a paragraph is quoted too (`holes`): what is quoted, not whether.
HOLES = True
OPTION_WHOLE = 400  # an option's description up to this many characters (its label included) is one candidate (0: none)
_MATCHED_CAP = 6  # more matched terms than this add no evidence
SCENE_EXAMPLES = True  # `exact_missing` leaves out an option, path or file name only a statement before the question holds
# With SCENE_VALUES on, `missing_name` leaves out a number the question writes only inside a quoted value of a statement
# before what it asks (`_scene_values`): the user's own setting or argument ("my GREP_COLOR='01;32' setting is
# obsolescent. What should the setting look like instead?", "find now exits with an error on `-perm +022`-style modes.
# What syntax …?"), which the answer replaces and need not repeat.  A number the question asks about stays.
SCENE_VALUES = True
# With FORBIDS on, a sentence that forbids (禁止, "refused") states a negated fact for `contradiction` (`_FORBIDS`).  Off:
# on the trust dev split it lifted one false abstention (manpages-zh-057, "…登录不进来了？" against "…以禁止用户登录。",
# then answered for two of its three parts: wrong), and on SQuAD 2.0 it answered a negated near miss ("What the the EU
# not manage from non-member states?" against "The EU manages imports from non-member states, duties between member
# states are prohibited, …": the sentence forbids something else), abstention 0.588 -> 0.578, under the issue's floor
# (benchmarks/RESULTS.md, `falseabs5`).  What a sentence forbids would have to be what the question negates.
FORBIDS = False
MISSING_FRAME = True  # `missing_rare` leaves out the question's framing words (QUESTION_FRAME: 我, 想, 把, 用, 时, …)

# Words that frame a question rather than name its subject: an answer seldom repeats them.
_FRAME = frozenset("""year years name named called kind type types many much long percentage percent number
    term word date century decade people person often far old large big supposed
    年 年份 名字 名称 叫 叫作 叫做 称为 称作 被称为 类型 种类 数量 时间 地方 位置 定义 意思""".split())
# The words naming a version: a sentence that holds one (`6.1`) answers them for a question asking for a version.
_VERSION_WORDS = frozenset("version versions 版本".split())
# A Chinese question word ("哪一年", "是谁", "多少", "什么样", "第几") is one segment with them.
_FRAME_CJK = re.compile(r"哪|什么|谁|几|怎|何|多少|多久|多长|多大|多高|多远|多重")
# Negation in a question or a sentence ("not", "never", "不", "没有", ...).  Chinese compounds
# that only look negative (不同 different, 非常 very, 无线 wireless, 未来 future) do not count.
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|cannot)\b|n['\u2019]t\b"  # doesn't, doesn’t (typeset text curls the apostrophe)
    r"|不(?![同仅但断久少过论管如足错利])|没|未(?!来)|无(?![线论])|并非|非(?![常])", re.IGNORECASE)
# What a sentence forbids it negates ("以禁止用户登录" says users cannot log in; "root logins are refused"): a question
# that asks a negated fact ("什么时候开始就登录不进来了？") is not contradicted by it (`_contradicts`).  The sentence's
# side only: a question's "why is X prohibited" asks about the prohibition, it does not negate what it asks.
_FORBIDS = re.compile(r"\b(?:prohibit|forbid|disallow|refuse|den(?:y|ie))\w*|禁止|拒绝|阻止|不得|严禁", re.IGNORECASE)
# A question's negation as a term ("不", "没有", "不要"): whether the sentence states the negated fact is what
# `contradiction` measures; as a missing content term it is counted a second time, and only in Chinese (English "not",
# "no", "nor" are stop words, never terms: docqa.text.segment.STOPWORDS).
_NEGATION_TERMS = frozenset("不 没 没有 未 无 非 并非 别 勿 不要 不用 不能 不会 不想 不可 不可以 不必 不需要 无法 没法 never cannot".split())
# Chinese words that are English stop words ("里" is "in", "一个" is "a"; 中, 上, 的 already are stop words): a sentence
# need not repeat them, so their absence is no missing content.
_FUNCTION_TERMS = frozenset("里 一个".split())
# An English clitic the tokenizer cuts off a word ("Debian's" -> "debian" "s", "don't" -> "don" "t", "I'm" -> "m"):
# neither piece is a word of the question, so neither is a term held or missing ("it's" in a sentence holds no "s").
_CLITIC = re.compile(r"\b(\w+n)['\u2019]t\b|\b\w+['\u2019](s|m|re|ve|ll|d)\b", re.IGNORECASE)
_ANTONYMS = """first last|most least|more less|more fewer|before after|increase decrease|increased decreased|
    higher lower|high low|largest smallest|larger smaller|early late|earlier later|earliest latest|oldest newest|
    internal external|inside outside|positive negative|minimum maximum|min max|true false|start end|started ended|
    began ended|enable disable|enabled disabled|allow prohibit|allowed prohibited|allow forbid|success failure|
    succeeded failed|accept reject|accepted rejected|include exclude|included excluded|upper lower|
    best worst|better worse|stronger weaker|strongest weakest|longest shortest|rise fall|rose fell|gain loss|
    won lost|public private|direct indirect|directly indirectly|always never|common rare|open closed|
    add remove|added removed|above below|fast slow|faster slower|inner outer|major minor|majority minority|
    legal illegal|possible impossible|known unknown|dependent independent|import export|imports exports|
    supported opposed|agree disagree|cheap expensive|rich poor|hot cold|wet dry|deep shallow|wide narrow|
    victory defeat|offense defense|domestic foreign|encrypt decrypt|connect disconnect|synchronous asynchronous|
    required optional|mandatory optional|
    最大 最小|之前 之后|以前 以后|增加 减少|启用 禁用|允许 禁止|第一 最后|开始 结束|内部 外部|上升 下降|提高 降低|
    最高 最低|最早 最晚|成功 失败|接受 拒绝|支持 反对|包括 排除|必需 可选|同步 异步"""
_OPPOSITE: dict[str, set[str]] = {}
for _pair in _ANTONYMS.split("|"):
    _a, _b = _pair.split()
    _OPPOSITE.setdefault(_a, set()).add(_b)
    _OPPOSITE.setdefault(_b, set()).add(_a)
# Words of alphabetic scripts and numbers (a Chinese run is not one): candidates for names.
_LETTERS = rf"[^\W{HAN}]"
_TOKEN = re.compile(rf"{_LETTERS}+(?:[.'_-]{_LETTERS}+)*")
_INITIALS = re.compile(r"[A-Z][\w'-]*")


@dataclass(slots=True)
class Sentence:
    n: int  # source number
    start: int  # span in the chunk text
    end: int
    text: str
    terms: float = 0.0
    dense: float = 0.0
    score: float = 0.0  # the ranking score
    base: float = 0.0  # the base score: terms, embedding and retrieval (what the evidence model's sentence is chosen by)
    features: dict[str, float] = field(default_factory=dict)  # what the score weighs (selection_features)
    header: tuple[int, int] | None = None  # a table row's header row, quoted on a line of its own before it (answer/rows.py)
    term: str = ""  # the option label whose description the sentence is part of, its subject (answer/defined.py)
    label: tuple[int, int] | None = None  # ... and its span in the chunk, quoted on a line of its own before it
    above: bool = False  # a release heading in the lines above its chunk (Source.above): start and end are in those
    pieces: tuple[tuple[int, int], ...] = ()  # an option's description read whole: its sentences' spans, each cited


@dataclass(slots=True)
class Extract:
    chosen: list[Sentence]
    _: KW_ONLY
    evidence: float  # P(answerable) from the best sentence: what the abstain threshold is compared with
    abstained: bool
    features: dict[str, float] = field(default_factory=dict)  # the evidence model's inputs (for evaluation)
    ranked: list[Sentence] = field(default_factory=list)  # the best sentences even when it abstained
    shape: Shape | None = None  # a typed question's lead or a procedure's steps (answer/shape.py); None: `chosen`
    release: str | None = None  # for a release question, the line naming the release when no quoted heading does (answer/release.py)
    heading: Sentence | None = None  # ... or the heading line naming it, quoted first (`shape` leads with it)
    # ... and for each later pick from another release, the heading line naming that one, quoted before it (`release_heads`)
    heads: list[tuple[Sentence, Sentence]] = field(default_factory=list)
    candidates: list[Sentence] = field(default_factory=list)  # every scored candidate sentence (for evaluation)
    supporting: list[Sentence] = field(default_factory=list)  # the picks a model's claim may rest on (answer/accept.py)
    rule: str = ""  # the answerer's own rule it abstained by, whatever the evidence: one of RULES
    several: bool = False  # the question asks for several things: a quoted list item is read with its list (shape.enumerated)


def extract(question: str, sources: SourceSet, weights: dict[str, float],
            embed: Callable[[list[str], str], np.ndarray] | None, count: int = 3, threshold: float = 0.5,
            chunks: int = 0, quoted: int | None = None, whole: bool = True) -> Extract:
    """The best `count` sentences for `question`, or an abstention when the evidence is under `threshold`.
    `weights`: the question terms' IDF over the knowledge base's `chunks` chunks (0: unknown, taken as large);
    `quoted`: how many of them the answer quotes (None: `count`), of which one must state the quantity a "how many"
    question asks for (docqa.answer.quantity); `whole`: an option's short description is one candidate (OPTION_WHOLE)."""
    learned = embed is not None and bool(SELECT_MODEL)
    candidates = _candidates(sources, SELECT_HITS if learned else _HITS, question, whole)
    if not candidates:
        return Extract([], evidence=0.0, abstained=True)
    # an option read whole changes what is quoted, not whether to answer: the decision (fitted on sentences) and the
    # answerer's rules judge the question as they do with every option's description read sentence by sentence
    judge = (extract(question, sources, weights, embed, count, threshold, chunks, quoted, whole=False)
             if any(s.pieces for s in candidates) else None)
    if judge is not None and judge.abstained:
        return judge
    terms = query_terms(question)
    given = _exact_given(question, sources)
    rank(question, candidates, sources, weights, embed, given)
    retrieval = {source.n: source.hit.score for source in sources.sources}
    share = SELECT_FLOOR if learned else _LATER_PICKS
    ranked = _mmr(candidates, count, SELECT_MMR if learned else MMR_LAMBDA)
    chosen = _complete(ranked, candidates, question, share)
    # Whether to answer is the evidence model's decision, over the sentence it was fitted with: the best by the
    # base score (terms, embedding, retrieval) among the first _HITS hits' sentences, an opinion independent of the
    # learned ranking's (whose confidence, `select_best`, the decision reads too); or, when the decision was fitted so
    # (`judge_picked`), over what is quoted: the ranking's best pick and the sentence shown with it.
    picked_judge = learned and bool(answerability.decision().get("judge_picked"))
    searched = [s for s in candidates if s.n <= _HITS and not sources.get(s.n).beside]  # type: ignore[union-attr]
    pool = ([replace(s, score=s.base) for s in searched] or [replace(s, score=s.base) for s in candidates]
            if learned and not picked_judge else candidates)
    judged = _complete(_mmr(pool, count), pool, question) if learned and not picked_judge else chosen
    best = judged[0]
    # what the answer leads with: the best sentence and, when it only leads up to the answer, the next one
    follower = (_follower(pool, best, question) if picked_judge or answerability.decision().get("lead_with_follower")
                else None)
    leading = best.text if follower is None else f"{best.text} {follower.text}"
    window = _window(pool, best)
    hit = sources.get(best.n).hit  # type: ignore[union-attr]
    weighed = answerability.evidence_weights(terms, weights, chunks)
    features = _evidence_under(question, _with(_as_item(hit.text, best.start, leading), _given(best, given)),
                               _with(_as_item(hit.text, best.start, " ".join(s.text for s in window)), _given(best, given)), terms, weighed,
                               best.dense if embed is not None else None, retrieval[best.n], hit, embed)
    features.update(_support_features(question, judged, terms, weighed, _with(leading, _given(best, given))))
    features.update(answerability.size_features(features, chunks))
    features.update(_kind_features(question, leading, best, chosen, candidates, sources))
    features.update(_neutral_features(question, (best, pool), (chosen[0], candidates), sources, given))
    if learned:  # the ranking's confidence in its pick (the shipped decision weighs `select_best`), and for refits
        features.update(select_best=_decision_select(chosen, candidates), select_same=float((best.n, best.start) == (chosen[0].n, chosen[0].start)),
                        select_margin=chosen[0].score - (chosen[1].score if len(chosen) > 1 else 0.0))
        # for a name question the ranking weighs whether a sentence holds a token of the asked type (`thing`, `type`):
        # its confidence says more there than for a fact question (`select_name`, recorded for refits)
        features["select_name"] = features["select_best"] * float(answerability.asks_name(question))
        features.update(_pick_features(question, chosen[0], candidates, sources, terms, weighed, given))
    evidence = evidence_probability(features)
    features["release_unnamed"] = float(_release_unnamed(question, chosen[0], sources))
    # a "how many / how long" question that no quoted sentence states a quantity for (docqa.answer.quantity)
    # (across languages a sentence's passage must write the question's language-neutral tokens)
    quotes = chosen[: quoted or count]
    features["quantity_unstated"] = float(quantity.unanswered(
        question, (s.text for s in quotes), (_passage(s, sources, given) for s in quotes),
        neutral.tokens(question, (source.hit.text for source in sources.sources)) if quantity.asks(question) else ()))
    # a question that asks who found, wrote, fixed ... something, quoted with no name (docqa.answer.who)
    features["person_unnamed"] = float(who.unanswered(question, (s.text for s in quotes)))
    # a question that asks which option of a command it names, quoted only from other commands' manual pages
    features["option_elsewhere"] = float(option.unanswered(question, (sources.get(s.n).hit.path for s in quotes)))  # type: ignore[union-attr]
    rule = next((name for name in RULES if features[name]), "")
    if judge is not None:
        evidence, features, rule = judge.evidence, judge.features, ""
    if evidence < threshold or rule:
        return Extract([], evidence=evidence, abstained=True, features=features, ranked=chosen, candidates=candidates, rule=rule)
    floor = chosen[0].score * share  # later picks must still be real evidence
    added = {id(s) for s in chosen} - {id(s) for s in ranked}  # the sentence _complete joined to the best: always shown
    picked = [s for i, s in enumerate(chosen) if i == 0 or ((s.score >= floor or id(s) in added) and s.header is None)]
    picked = _bearing(question, picked, added, sources) if learned else picked
    # what a model's claim may rest on (docqa.answer.accept): a later pick likely enough to be right in itself
    supporting = [s for i, s in enumerate(picked) if i == 0 or not learned or s.score >= SELECT_MIN or id(s) in added]
    shown = shape(question, candidates, picked, floor, lambda n: sources.get(n).hit.text)
    shown, named, heading = _with_release(question, picked, shown, sources)
    heads = release_heads(question, picked, heading, sources)
    # a table row leads: its header row first, on a line of its own; a sentence of an option's description: its label
    above = picked[0].header or _label_unquoted(picked[0], picked)
    if heading is None and above is not None:
        (hs, he), chunk = above, sources.get(picked[0].n).hit.text  # type: ignore[union-attr]
        heading = Sentence(picked[0].n, hs, he, chunk[hs:he], score=picked[0].score)
        shown = Shape([heading, *(shown.sentences if shown is not None else picked)], steps=False)
    return Extract(picked, evidence=evidence, abstained=False, features=features, ranked=chosen, shape=shown,
                   candidates=candidates, supporting=supporting, release=named, heading=heading, heads=heads,
                   several=asks_several(question))


def _bearing(question: str, picked: list[Sentence], added: set[int], sources: SourceSet) -> list[Sentence]:
    """`picked` without the later picks that only give context to a best pick the ranking is sure of (SELECT_SURE):
    a later pick stays when it is likely right itself (SELECT_LATER), was joined to the best (`added`, `_complete`),
    continues the best in its paragraph (`_adjacent`), or holds the kind of token the question
    asks for (a number, a version, a path ...) that the best lacks."""
    best = picked[0]
    if SELECT_SURE is None or best.score < SELECT_SURE:
        return picked
    kind = answerability.asked_type(question)
    lacks = kind is not None and not answerability.holds_type(best.text, kind)

    def bears(s: Sentence) -> bool:
        return (s.score >= SELECT_LATER or id(s) in added or _adjacent(best, s, sources)
                or (lacks and answerability.holds_type(s.text, kind)))  # type: ignore[arg-type]

    return [best, *(s for s in picked[1:] if bears(s))]


def holes(shown: list, candidates: list[Sentence], sources: SourceSet) -> list:
    """`shown` (the quoted sentences, in reading order) with the one sentence that lies between two of them in the
    same paragraph quoted too (HOLES): "… changed with X11R7. They used to be named x-window-system …" and "It is
    highly recommended that you install this metapackage …" quoted, "Now there is only one metapackage named
    "xorg"." between them left out, answered the question only half.  What is quoted reads as the passage does."""
    if not HOLES:
        return shown
    out: list = []
    for x in shown:
        prev = out[-1] if out else None
        if isinstance(prev, Sentence) and isinstance(x, Sentence) and prev.n == x.n and prev.end <= x.start:
            between = [s for s in candidates if s.n == x.n and prev.end <= s.start and s.end <= x.start]
            if len(between) == 1 and _adjacent(prev, between[0], sources) and _adjacent(between[0], x, sources):
                out.append(between[0])
        out.append(x)
    return out


def _adjacent(a: Sentence, b: Sentence, sources: SourceSet) -> bool:
    """`b` is the sentence right before or after `a` in the same paragraph: only whitespace, and no blank line, lies
    between them."""
    if a.n != b.n or a.above or b.above:
        return False
    text = sources.get(a.n).hit.text  # type: ignore[union-attr]
    lo, hi = (a.end, b.start) if a.start <= b.start else (b.end, a.start)
    return lo <= hi and not text[lo:hi].strip() and _BLANK_LINE.search(text[lo:hi]) is None


def _label_unquoted(lead: Sentence, picked: list[Sentence]) -> tuple[int, int] | None:
    """The span of the option label `lead` describes, unless a picked sentence quotes it already."""
    if lead.label is None or any(s.n == lead.n and s.start <= lead.label[0] < s.end for s in picked):
        return None
    return lead.label


def _with_release(question: str, picked: list[Sentence], shown: Shape | None,
                  sources: SourceSet) -> tuple[Shape | None, str | None, Sentence | None]:
    """For a release question whose best pick names no version (answer/release.py): the answer led by the heading
    line that names the release, quoted from the same chunk; or, when a section title or the file name names it, the
    answer as it is and a line saying so.  A procedure's steps are left alone.  Returns the shape, that line and the
    heading quoted."""
    best = picked[0]
    if not release.asks_release(question) or release.names_release(question, best.text) or (shown is not None and shown.steps):
        return shown, None, None
    found = _label(sources, best)
    if found is None:
        return shown, None, None
    if found.span is None:
        return shown, release.note(found, "zh" if has_cjk(question) else "en"), None
    heading = Sentence(best.n, *found.span, found.text, score=best.score, above=found.source == "above")
    rest = [s for s in (shown.sentences if shown is not None else picked) if s is not best]
    return Shape([heading, best, *rest], steps=False), None, heading  # the heading, then the sentence it names


def release_heads(question: str, picked: list[Sentence], heading: Sentence | None,
                  sources: SourceSet) -> list[tuple[Sentence, Sentence]]:
    """For a release question, each later pick that names no version under a heading line of its chunk naming another
    release than the answer names so far (the lead's heading, the versions the lead and the question hold): that pick
    and its heading line, to be quoted before it.  Release notes of several releases answer alike ("git grep" is in the
    notes of 2.35 and of 2.38); a quoted sentence whose release is not said cannot tell the reader which it is from."""
    if not release.asks_release(question) or len(picked) < 2:
        return []
    lead = [heading.text] if heading is not None else []
    said = {m.group().lstrip("v") for text in (question, *lead, picked[0].text) for m in release.VERSION.finditer(text)}
    out: list[tuple[Sentence, Sentence]] = []
    for s in picked[1:]:
        if release.names_release(question, s.text):
            continue
        found = _label(sources, s)
        if found is None or found.span is None or found.version in said:
            continue
        above = found.source == "above"
        if not above and any(x.n == s.n and x.start <= found.span[0] < x.end for x in picked):
            continue  # the heading is quoted already
        said.add(found.version)
        out.append((s, Sentence(s.n, *found.span, found.text, score=s.score, above=above)))
    return out


def _release_unnamed(question: str, best: Sentence, sources: SourceSet) -> bool:
    """A question that asks which version or release, or when something changed ("When will Debian change the default?"),
    led by a sentence that names none: no number the question lacks, no heading or file name naming its release
    (answer/release.py).  Such an answer cannot say which: the documents discuss the subject ("`systemd` defines a
    number of special UID ranges:") but not when it came.  Nor does a heading or file name that names the release the
    question writes itself, or the release a note was written in when the question asks for a change still to come
    (release.names_asked)."""
    if not (release.asks_release(question) or release.asks_when_changed(question)) or not release.names_nothing(question, best.text):
        return False
    return not release.names_asked(question, _label(sources, best))


def scene_terms(question: str) -> frozenset[str]:
    """The terms (folded) that only the scene of a question names (clause.asked: the statements around the sentence
    that asks): what a user tells of their setup ("Postfix on our new mail relay refuses every SMTP AUTH login although
    saslauthd is running …") names things the sentence that answers ("… you need the libsasl2-modules package") need
    not hold.  None for a question that is all asking."""
    asking = clause.asked(question)
    if not asking:
        return frozenset()
    held = {fold(t) for t in query_terms(asking)}
    return frozenset(t for t in (fold(t) for t in query_terms(question)) if t not in held)


def _label(sources: SourceSet, s: Sentence) -> release.Label | None:
    """What names the release of `s` (release.label): a heading in its chunk, a section title, a heading in the lines
    above the chunk when the pipeline read them (Source.above), the file name."""
    source = sources.get(s.n)
    hit = source.hit  # type: ignore[union-attr]
    above = source.above.text if source is not None and source.above is not None else ""
    return release.label(hit.text, s.start, hit.section, hit.path, above)


def rank(question: str, candidates: list[Sentence], sources: SourceSet, weights: dict[str, float],
         embed: Callable[[list[str], str], np.ndarray] | None, given: dict[int, str] | None = None) -> None:
    """Score every candidate sentence (`Sentence.score`, higher is better; `features`: what the score weighs)."""
    weights = _scene_weighed(question, weights) if SCENE_RANK else weights
    terms = query_terms(question)
    given = _exact_given(question, sources) if given is None else given
    for s in candidates:
        held = _with(s.text, _given(s, given))
        s.terms = coverage(held, terms, weights)
        if LEAD_TERMS and (lead := rows.lead_in(sources.get(s.n).hit.text, s.start)):  # type: ignore[union-attr]
            s.terms = max(s.terms, coverage(f"{lead}\n{held}", terms, weights))
    windows: dict[int, float] = {}
    contexts: dict[int, float] = {}
    if embed is not None:
        query = _unit(embed([question], "query"))[0]
        sims = _unit(embed([s.text for s in candidates], "passage")) @ query
        for s, sim in zip(candidates, sims):
            s.dense = float(max(sim, 0.0))
        if SELECT_WINDOWS:
            texts = [" ".join(x.text for x in _window(candidates, s)) for s in candidates]
            for s, sim in zip(candidates, _unit(embed(texts, "passage")) @ query):
                windows[id(s)] = float(max(sim, 0.0))
        if SELECT_HEADED or "dense_headed" in SELECT_MODEL:
            headed = [_headed(s, sources.get(s.n).hit) for s in candidates]  # type: ignore[union-attr]
            for s, sim in zip(candidates, _unit(embed(headed, "passage")) @ query):
                contexts[id(s)] = float(max(sim, 0.0))
    for s, f in zip(candidates, selection_features(question, candidates, sources, weights, given)):
        if windows:
            f["dense_window"] = windows[id(s)]
        if contexts:
            f["dense_headed"] = contexts[id(s)]
        s.features = f
        s.base = _linear_score(s, sources.get(s.n).hit.score, embed is not None)  # type: ignore[union-attr]
        if embed is None or not SELECT_MODEL:
            s.score = s.base
        else:
            s.score = _probability(SELECT_MODEL, f)


def _headed(s: Sentence, hit: Hit) -> str:
    """The sentence as a reader meets it: under its section's own heading (the last part of the section path, else the
    document's title), the option or term its description belongs to, when the sentence does not begin with it, and
    for a list item the line that introduces its list (rows.lead_in)."""
    heading = (hit.section or "").rsplit(" > ", 1)[-1].strip() or (hit.title or "").strip()
    label = s.term.strip() if s.term and not s.text.lstrip().startswith(s.term.strip()) else ""
    return "\n".join(x for x in (heading, label, rows.lead_in(hit.text, s.start), s.text) if x)


def _probability(model: dict[str, float], features: dict[str, float]) -> float:
    """P(a candidate is right) under the ranking weights `model` (features it does not weigh count 0)."""
    return 1.0 / (1.0 + math.exp(-(model["bias"] + sum(model.get(k, 0.0) * v for k, v in features.items()))))


def _decision_select(chosen: list[Sentence], candidates: list[Sentence]) -> float:
    """What the decision reads as the ranking's confidence (`select_best`): the best pick's probability, or, while the
    decision is fitted on an earlier ranking (DECISION_SELECT), the best candidate's probability under that one."""
    if DECISION_SELECT is None:
        return chosen[0].score
    return max(_probability(DECISION_SELECT, s.features) for s in candidates)


def _linear_score(s: Sentence, retrieval: float, dense: bool) -> float:
    dense_w = W_DENSE if dense else 0.0
    return (W_TERMS * s.terms + dense_w * s.dense + W_RETRIEVAL * retrieval) / (W_TERMS + dense_w + W_RETRIEVAL)


def selection_features(question: str, candidates: list[Sentence], sources: SourceSet, weights: dict[str, float],
                       given: dict[int, str]) -> list[dict[str, float]]:
    """What ranks a candidate sentence (`terms` and `dense` already set on each): see SELECT_FEATURES."""
    terms = query_terms(question)
    distinct = [t for t in dict.fromkeys(fold(t) for t in terms) if not _frames(t)]
    rarest = max(distinct, key=lambda t: weights.get(t, 1.0), default=None)
    # 哪几个配置文件 asks which files, not how many (docqa.answer.kind reads it so too)
    kind, thing = answerability.asked_type(question.replace("哪几", "哪")), asks_for(question)
    exact = exact_tokens(question)
    cjk = has_cjk(question)
    asks = release.asks_release(question)
    headings = {x.n: coverage(_context(x.hit), terms, weights) for x in sources.sources}
    name_share = _named(distinct, weights, sources)
    firsts: dict[int, Sentence] = {}
    for s in sorted(candidates, key=lambda s: (s.n, s.start)):
        firsts.setdefault(s.n, s)
    top_dense = max((s.dense for s in candidates), default=0.0)
    top_terms = max((s.terms for s in candidates), default=0.0)
    tokens = neutral.tokens(question, (s.text for s in candidates))
    asked = content_tokens(question)
    several = asks_several(question)
    may = bilingual.translatable(question, _names(question))
    out = []
    for s in candidates:
        held = _with(s.text, _given(s, given))
        hit = sources.get(s.n).hit  # type: ignore[union-attr]
        own = content_tokens(s.text)
        cross = float(cjk != has_cjk(s.text))
        named = asks and not release.names_release(question, s.text) and _label(sources, s) is not None
        # a number the question writes itself states no quantity asked for ("This is Python 3.11 packaged for Debian."
        # for "how many modules does the Python 3.11 test suite skip?"): a number question's value is read without it
        valued = _unwritten_numbers(s.text, question) if kind == "number" and UNWRITTEN_NUMBERS else s.text
        # the version a release question asks for: in the sentence, or in the heading or file name that names its release
        typed = kind is not None and (answerability.holds_type(valued, kind) or (named and kind == "version"))
        out.append({
            "terms": s.terms,
            "dense": s.dense,
            "dense_gap": top_dense - s.dense,
            "terms_gap": top_terms - s.terms,
            "retrieval": float(hit.score),
            "chunk_dense": float(hit.dense_score or 0.0),
            "bm25": 1.0 / hit.bm25_rank if hit.bm25_rank else 0.0,
            "rank": 1.0 / (sources.get(s.n).beside or s.n),  # type: ignore[union-attr]  # beside a hit: at its place
            "heading": coverage(f"{_context(hit)} {s.term}", terms, weights) if s.term else headings[s.n],
            "named": name_share.get(s.n, 0.0),
            "rare": float(rarest is not None and _holds(held, rarest)),
            "exact": sum(holds_exact(held, t) for t in exact) / len(exact) if exact else 0.0,
            "exact_paragraph": (sum(holds_exact(_with(_paragraph(hit.text, s.start, s.end), _given(s, given)), t) for t in exact)
                                / len(exact) if exact else 0.0),
            "type": float(typed),
            "type_missing": float(kind is not None and not typed),
            "thing": float(thing is not None and holds_type(s.text, thing)),
            "amount": float(kind == "number" and _holds_amount(valued)),
            "short": float(len(s.text.strip()) < (20 if has_cjk(s.text) else 40)),
            "long": min(len(s.text), 400) / 400,
            "first": float(firsts.get(s.n) is s),
            "lead_in": float(s.text.rstrip().endswith((":", "："))),
            "crossing": cross,
            "cross_dense": cross * s.dense,
            # across languages, the share of the question's terms held as written or in translation (docqa.answer.bilingual):
            # what `terms` measures within one language (recorded for a ranking refit)
            "cross_terms": bilingual.coverage_across(held, terms, weights, may) if cross else 0.0,
            "release": float(named),
            # across languages, the question's language-neutral tokens (docqa.answer.neutral) that neither the sentence,
            # its paragraph up to it, nor its passage's names hold
            "neutral_missing": cross * neutral.missing(tokens, f"{_with(_paragraph(hit.text, s.start, s.end), given.get(s.n))}\n{_context(hit)}"),
            # the share of the sentence's own words (content_tokens: word stems, Chinese character pairs) the question
            # holds: `terms` says how much of the question a sentence covers, `echo` how much of the sentence is about it
            # (a long sentence that shares a few words in passing is not)
            "echo": len(own & asked) / len(own) if own else 0.0,
            "enumerates": float(several and _ENUMERATION.search(s.text) is not None),
        })
    return out


# Several things named in one sentence: list item lines, "A、B、C", "A, B, and C", "一是 … 二是", "first … second".
_ENUMERATION = re.compile(r"(?:^|\n)[ \t]*(?:[-*+•]|\d{1,2}[.)])[ \t]+\S[^\n]*\n(?:[^\S\n]*\n)*[ \t]*(?:[-*+•]|\d{1,2}[.)])[ \t]+\S"
                          r"|[^、\n]+、[^、\n]+、|[:：][^。.\n]*[，,][^。.\n]*(?:[，,]|和|及|与|and\b|or\b)"
                          r"|\w+, [\w -]+, (?:and |or )?[\w -]+|[一二两三]是|其[一二]|\b(?:firstly|secondly)\b|\b(?:first|second),", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


def _paragraph(text: str, start: int, end: int) -> str:
    """The sentence at `start:end` of a chunk's `text` with what comes before it in its paragraph (from the last blank
    line): an item of release notes or a man page's option block names its subject once ("* CVE-2022-39260:"), and
    the sentence that answers comes after it."""
    before = [m.end() for m in _BLANK_LINE.finditer(text, 0, start)]
    return text[(before[-1] if before else 0) : end]


def _passage(s: Sentence, sources: SourceSet, given: dict[int, str]) -> str:
    """What a sentence is read in for its subject: its passage's text, title, section and file name, and the exact
    tokens naming its chunk (`_given`)."""
    hit = sources.get(s.n).hit  # type: ignore[union-attr]
    return _with(f"{hit.text}\n{_context(hit)}", _given(s, given))


def _holds_amount(text: str) -> bool:
    """Whether `text` holds a quantity (docqa.answer.quantity.AMOUNT: a number standing alone, with its unit: "40 GiB",
    "10%", "4MiB", "5x", "+1", "port 5432", "1800个"; not a piece of an identifier or version, a manual section, a
    numeral in a word), a list item's number aside: what a "how much / 多少" question asks for."""
    return quantity.AMOUNT.search(quantity.LIST_MARKER.sub(" ", text, count=1)) is not None


_WRITTEN_NUMBER = re.compile(r"[A-Za-z0-9_.+/~-]*\d[A-Za-z0-9_.+/~-]*")


def _unwritten_numbers(text: str, question: str) -> str:
    """`text` with each token holding a digit that `question` writes itself ("3.11", "512", "v2.35") blanked out where it
    stands as a whole token, a Chinese character beside it aside ("前512个字节" repeats the question's 512)."""
    for token in sorted({m.group() for m in _WRITTEN_NUMBER.finditer(question)}, key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9_.+/~-]){re.escape(token)}(?![A-Za-z0-9_+/~-]|\.\w)", " ", text)
    return text


def evidence_features(question: str, sentence: str, window: str, terms: list[str], weights: dict[str, float],
                      dense: float | None, retrieval: float, context: str = "", under: str = "", about: str = "",
                      about_terms: bool = False, close: dict[str, float] | None = None) -> dict[str, float]:
    """The evidence model's inputs for the best sentence (`window`: it and its neighbours; `context`:
    its passage's title, section and file name; `under`: the headings it is read under, docqa.answer.headings,
    which hold the question's terms and names for it; `about`: what names its document (`_name`), which holds the
    question's names that are words (`_named_word`) for it, and its terms too with `about_terms`; `close`: how close
    in meaning the window's and context's nearest word is to each question term, docqa.answer.meaning: a missing term
    a word close enough covers is recorded, `meaning_covered` and `meaning_rare`, and with meaning.APPLY counts
    meaning.SHARE found in `missing_rare` and `matched`).  Across languages the lexical features that cannot hold (the
    question's Chinese words in an English sentence) are zero; see docqa.answer.answerability."""
    clitics = _clitics(question)
    distinct = [t for t in dict.fromkeys(fold(t) for t in terms) if t not in clitics]
    found = [_holds(sentence, t) or bool(under and _holds(under, t))
             or (about_terms and _named_word(t) and _holds(about, t)) for t in distinct]
    idf = [weights.get(t, 1.0) for t in distinct]
    top = max(idf, default=0.0)
    answered = _answered(question, sentence)  # "which file": a path answers it without the word "file"
    scene = scene_terms(question) if SCENE_SHARE < 1 else frozenset()
    # a term only the question's scene names weighs SCENE_SHARE of its rarity when missing (the top stays the question's)
    unfound = [(t, w * (SCENE_SHARE if t in scene else 1.0)) for t, w, f in zip(distinct, idf, found)
               if not f and not _frames(t) and not _framing(t) and t not in answered and t not in _NEGATION_TERMS and t not in _FUNCTION_TERMS]
    near = [meaning.covered(t, close or {}) for t, _ in unfound]
    relieved = [w * (meaning.SHARE if c else 1.0) for (_, w), c in zip(unfound, near)]
    plain_rare = max((w for _, w in unfound), default=0.0) / top if unfound and top > 0 else 0.0
    near_rare = max(relieved) / top if relieved and top > 0 else 0.0
    out = {
        "retrieval": float(retrieval),
        "matched": float(min(sum(found) + (meaning.SHARE * sum(near) if meaning.APPLY else 0), _MATCHED_CAP)),
        "missing_rare": near_rare if meaning.APPLY else plain_rare,
        # a name of the question that neither the window nor the headings it is read under hold
        "missing_name": _missing_name(question, window, under, about),
        # ... and not in the passage's title, section or file name either: documentation names its subject in a
        # heading ("Memcheck", "Debian Edu") that its sentences need not repeat
        "missing_name_heading": float(any(not _has_name(window, name) and not _has_name(context, name) for name in _weighed_names(question))),
        "contradiction": float(_contradicts(question, sentence)),
    }
    if dense is not None:
        out["dense"] = float(dense)
    out.update(answerability.features(question, window, context, coverage(context, terms, weights), dense, _asked_exact(question)))
    # across languages a term counts as held in translation (docqa.answer.bilingual): `cross_matched`, `cross_rare`
    # (the same as `matched` and `missing_rare` within one language), which with bilingual.APPLY are those two
    out.update(cross_matched=out["matched"], cross_rare=out["missing_rare"], cross_known=out["missing_rare"],
               cross_share=float(coverage(sentence, terms, weights)))
    if out["crossing"]:
        out["missing_rare"] = plain_rare = near_rare = 0.0
        out.update(_crossed(question, f"{sentence}\n{under}", distinct, found, answered))
        if bilingual.APPLY:
            out["matched"], out["missing_rare"] = out["cross_matched"], out["cross_rare"]
    # for refits: how many missing terms a word close in meaning covers, and how much less `missing_rare` is for them
    out["meaning_covered"] = float(sum(near))
    out["meaning_rare"] = plain_rare - near_rare
    return out


def _crossed(question: str, text: str, distinct: list[str], found: list[bool], answered: frozenset[str]) -> dict[str, float]:
    """`matched` and `missing_rare` of a sentence (`text`, with the headings it is read under) in the other language than
    the question (`cross_matched`, `cross_rare`): a term counts as held where written as it is (`found`) or in
    translation (docqa.answer.bilingual), each weighed by how rare it is in its own language (docqa.text.background):
    the knowledge base's IDF of a word of the other language says nothing of it.  Recorded beside them: `cross_known`,
    `cross_rare` over the terms the dictionary can judge (an untranslatable word of a question is held only as written;
    a word the dictionary lacks counts for nothing), and `cross_share`, the rarity-weighted share of the terms held."""
    if not distinct:
        return {"cross_matched": 0.0, "cross_rare": 0.0, "cross_known": 0.0, "cross_share": 0.0}
    may = bilingual.translatable(question, _names(question))
    held = [f or (t in may and bilingual.held(t, text)) for t, f in zip(distinct, found)]
    judged = [t not in may or bool(bilingual.english(t)) or not has_cjk(t) for t in distinct]
    rare = rarity(distinct)
    counted = [not _frames(t) and not _framing(t) and t not in answered for t in distinct]
    top = max(rare)
    unfound = [w for w, h, c in zip(rare, held, counted) if not h and c]
    known = [w for w, h, c, j in zip(rare, held, counted, judged) if not h and c and j]
    weight = sum(w for w, c in zip(rare, counted) if c)
    return {"cross_matched": float(min(sum(held), _MATCHED_CAP)),
            "cross_rare": max(unfound) / top if unfound and top > 0 else 0.0,
            "cross_known": max(known) / top if known and top > 0 else 0.0,
            "cross_share": sum(w for w, h, c in zip(rare, held, counted) if h and c) / weight if weight > 0 else 0.0}


def _support_features(question: str, chosen: list[Sentence], terms: list[str], weights: dict[str, float],
                      leading: str) -> dict[str, float]:
    """How well what the answer leads with covers the question (weighted by `weights`), whether any picked
    sentence holds the kind of token the question asks for, and how long the question is (a long
    conversational question shares fewer of its words with the answer).  No feature compares passages'
    scores with each other: over a folder of a few files they mean nothing."""
    kind = answerability.asked_type(question)
    return {
        "coverage": float(coverage(leading, terms, weights)),
        "type_picked": float(kind is not None and any(answerability.holds_type(x.text, kind) for x in chosen)),
        "long_question": float(min(len(query_terms(question)), 20) / 20),
    }


def _kind_features(question: str, leading: str, best: Sentence, chosen: list[Sentence], candidates: list[Sentence],
                   sources: SourceSet) -> dict[str, float]:
    """answerability.kind_features on what the answer leads with (under its chunk's name: path, title, section,
    first line), and the same on the ranking's best pick (`pick_…`)."""
    def heading(n: int) -> str:
        return chunk_name(sources.get(n).hit, first_line=True)  # type: ignore[union-attr]

    texts = [s.text for s in candidates]
    out = answerability.kind_features(question, leading, heading(best.n), [s.text for s in chosen], texts)
    pick = answerability.kind_features(question, chosen[0].text, heading(chosen[0].n), [], texts)
    out.update(pick_kind_missing=pick["kind_missing"], pick_rare_missing=pick["rare_missing"])
    return out


def _pick_features(question: str, pick: Sentence, candidates: list[Sentence], sources: SourceSet, terms: list[str],
                   weights: dict[str, float], given: dict[int, str]) -> dict[str, float]:
    """The lexical evidence features on what is quoted first, the learned ranking's pick (`pick_missing_rare`,
    `pick_missing_name`, `pick_coverage`, `pick_dense`), beside those of the base score's best sentence: a question
    the base score's sentence does not answer can still be answered by the quote (a paraphrase it ranked lower)."""
    text = _with(pick.text, _given(pick, given))
    window = _with(" ".join(s.text for s in _window(candidates, pick)), _given(pick, given))
    hit = sources.get(pick.n).hit  # type: ignore[union-attr]
    f = evidence_features(question, text, window, terms, weights, None, 0.0, _context(hit), _under(hit), _about(hit))
    return {"pick_missing_rare": f["missing_rare"], "pick_missing_name": f["missing_name"], "pick_exact_missing": f["exact_missing"],
            "pick_missing_name_heading": f["missing_name_heading"],
            "pick_coverage": float(coverage(text, terms, weights)), "pick_dense": pick.dense}


def _named(terms: list[str], weights: dict[str, float], sources: SourceSet) -> dict[int, float]:
    """Per source number, how much of what tells the hits' names apart its own name holds: of the question's `terms`
    that some of the first hits' names hold and not all (`_name`), the IDF-weighted share its name holds.  Sibling
    files say the same things in near the same words (the README.Debian of several packages, the man pages of `ls` and
    `wc`, the manuals of two releases, the notes of two versions), and the question names which one it asks about."""
    names = {x.n: _name(x.hit) for x in sources.sources[: max(_HITS, SELECT_HITS)]}
    held = {n: {t for t in terms if _holds(name, t)} for n, name in names.items()}
    every = set.intersection(*held.values()) if held else set()
    telling = set().union(*held.values()) - every
    total = sum(weights.get(t, 1.0) for t in telling)
    if total <= 0:
        return {}
    return {n: sum(weights.get(t, 1.0) for t in h - every) / total for n, h in held.items()}


def _name(hit: Hit) -> str:
    """What names a passage's document: its title, file name and the folder it is in (a
    package's documentation folder, /usr/share/doc/openssl/README.Debian); not its section, which tells places in one
    document apart, not documents."""
    parts = hit.path.replace("\\", "/").rstrip("/").rsplit("/", 2)[-2:]
    return " ".join(x for x in (hit.title, *parts) if x)


def _neutral_features(question: str, best: tuple[Sentence, list[Sentence]], pick: tuple[Sentence, list[Sentence]],
                      sources: SourceSet, given: dict[int, str]) -> dict[str, float]:
    """Across languages, the question's language-neutral tokens (commands, options, paths, versions, names: what both
    languages write alike, docqa.answer.neutral) that the decision's sentence (`neutral_missing`) and the ranking's pick
    (`pick_neutral_missing`) lack, with their window and their passage's names; 0 within one language.  Each sentence
    comes with the list it was chosen from (its window's neighbours)."""
    tokens = neutral.tokens(question, (s.text for s in pick[1]))

    def held(chosen: tuple[Sentence, list[Sentence]]) -> tuple[str, bool]:
        s, among = chosen
        window = " ".join(x.text for x in _window(among, s))
        return _with(f"{window}\n{_context(sources.get(s.n).hit)}", given.get(s.n)), answerability.crossing(question, window)  # type: ignore[union-attr]

    out = neutral.features(question, *held(best), tokens)
    out["pick_neutral_missing"] = neutral.features(question, *held(pick), tokens)["neutral_missing"]
    return out


def _context(hit: Hit) -> str:
    """What names a passage's subject besides its text: its title, section path and file name."""
    name = hit.path.replace("\\", "/").rsplit("/", 1)[-1]
    return " ".join(x for x in (hit.title, hit.section, name) if x)


def _under(hit: Hit) -> str:
    """The headings a passage's sentences are read under (docqa.answer.headings) when HEADINGS is on."""
    return headings(hit) if HEADINGS else ""


def _about(hit: Hit) -> str:
    """What names a passage's document (`_name`) where the decision looks for the question's names, when TITLES is on."""
    return _name(hit) if TITLES else ""


def _closeness(question: str, terms: list[str], text: str, embed: Callable[[list[str], str], np.ndarray] | None) -> dict[str, float]:
    """docqa.answer.meaning's closeness of the question's terms that may be covered by meaning to the words of `text`
    (the decision's window and its passage's names); an antonym (`_ANTONYMS`) is no cover."""
    return meaning.closeness(meaning.candidates(question, terms, _names(question)), text, embed,
                             lambda a, b: b in _OPPOSITE.get(a, ()))


def _evidence_under(question: str, sentence: str, window: str, terms: list[str], weights: dict[str, float],
                    dense: float | None, retrieval: float, hit: Hit,
                    embed: Callable[[list[str], str], np.ndarray] | None = None) -> dict[str, float]:
    """`evidence_features` of the decision's sentence in `hit`, its names read in its document's name when TITLES is on
    and under its headings when HEADINGS is on; and in any case, for refits of the decision, what reading under them
    changes (0 for a passage of a document without sections, so for every SQuAD and CMRC paragraph): `under_matched`,
    the question's terms only the headings hold (up to the cap of `matched`), `under_rare`, how much less
    `missing_rare` is, and `under_name`, 1 when a missing name of the question is in the headings and no other is
    missing; and what reading the question's words (names and terms) in the document's name changes, against the
    sentence read without it: `about_matched`, `about_rare`, `about_name`.  Question terms a word close in meaning
    covers are measured once (`_closeness`, docqa.answer.meaning) and given to every reading."""
    close = _closeness(question, terms, f"{window}\n{_context(hit)}", embed) if not answerability.crossing(question, window) else {}
    args = (question, sentence, window, terms, weights, dense, retrieval, _context(hit))
    plain = evidence_features(*args, close=close)
    shipped = evidence_features(*args, about=_about(hit), close=close)
    under = headings(hit)
    read = evidence_features(*args, under=under, about=_about(hit), close=close) if under else shipped
    named = evidence_features(*args, about=_name(hit), about_terms=True, close=close)
    return {**(read if HEADINGS else shipped), "under_matched": read["matched"] - shipped["matched"],
            "under_rare": shipped["missing_rare"] - read["missing_rare"], "under_name": shipped["missing_name"] - read["missing_name"],
            "about_matched": named["matched"] - plain["matched"], "about_rare": plain["missing_rare"] - named["missing_rare"],
            "about_name": plain["missing_name"] - named["missing_name"]}


def evidence_probability(features: dict[str, float]) -> float:
    return answerability.probability(features)


def render(chosen: list[Sentence]) -> str:
    """The sentences in reading order per source, each followed by its marker."""
    ordered = sorted(chosen, key=lambda s: (s.n, s.start))
    parts = [f"{' '.join(s.text.split())} [{s.n}]" for s in ordered]
    return ("" if any(has_cjk(p) for p in parts) else " ").join(parts) if parts else ""


def _exact_given(question: str, sources: SourceSet) -> dict[int, str]:
    """Per source number, the question's exact tokens and one-word identifiers (text/exact.py) that name its
    chunk (`chunk_name`: its path, title, section or first line).  Every sentence of the chunk is about them: "This release is
    to revert ..." under "Git v2.39.5 Release Notes" answers a question on 2.39.5 without repeating the
    version.  A token the chunk only mentions further down is not given: the notes of 2.37.1 list
    v2.31.4 among the releases they merge, and are not about 2.31.4.  A release series the question names ("2.30.x")
    is given to a chunk named by a release of it ("Git v2.30.4 Release Notes", `RelNotes/2.30.4.txt`)."""
    tokens = exact_tokens(question, whole=True)  # libtasn1 in libtasn1-doc/libtasn1.pdf: the file is about it
    series = [(m.group(), m.group(1) + ".") for m in _SERIES.finditer(question)]
    if not tokens and not series:
        return {}
    out = {}
    for source in sources.sources[: max(_HITS, SELECT_HITS)]:
        name = chunk_name(source.hit, first_line=True)
        versions = [m.group().lstrip("v") for m in release.VERSION.finditer(name)]
        out[source.n] = " ".join([*(t for t in tokens if holds_exact(name, t)),
                                  *(t for t, prefix in series if any(v.startswith(prefix) for v in versions))])
    return out


# A release series the question names ("Which 2.30.x point release ...", "3.x"): any release of it names the chunk.
_SERIES = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)*)\.[xX*](?![\w*])")


def _given(s: Sentence, given: dict[int, str]) -> str:
    """What a sentence is about besides its words: the exact tokens naming its chunk (`_exact_given`) and the option
    label whose description it is part of (answer/defined.py)."""
    return " ".join(x for x in (given.get(s.n), s.term) if x)


def _with(text: str, given: str | None) -> str:
    """`text` for matching question terms, with what its chunk is about (`_exact_given`) appended."""
    return f"{text}\n{given}" if given else text


def _candidates(sources: SourceSet, hits: int = _HITS, question: str = "", whole: bool = True) -> list[Sentence]:
    out = []
    for source in _read(sources, hits):
        text = source.hit.text
        spans = quotable_spans(text, source.hit.section, code=source.hit.type == "code")  # statements only: no headings, questions, markup
        spans = rows.carried(text, spans) if CARRIED and source.hit.type != "code" else spans
        # a table row or a label line that carries what is asked; a sentence that introduces a command, extended over
        # it (answer/rows.py)
        structured = bool(question) and source.hit.type != "code"
        out += [Sentence(source.n, s, e, text[s:e], header=h) for h, (s, e) in rows.table_rows(question, text)] if structured else []
        out += [Sentence(source.n, s, e, text[s:e]) for s, e in rows.label_lines(question, text)] if structured else []
        out += [Sentence(source.n, s, e, text[s:e]) for s, e in rows.step_commands(question, text, spans)] if structured else []
        commands = dict(rows.introduced_commands(question, text, spans)) if structured else {}
        commands.update(rows.introduced_lists(question, text, spans) if structured else [])  # a list's items, in order
        if DISPLAYED and structured:  # a colon's lead-in and the setting, format or path line it shows (rows.introduced_lines)
            commands.update({s: e for s, e in rows.introduced_lines(text, spans) if s not in commands})
        covered = 0  # the end of the last quote extended over what follows it (no span inside it is quoted again)
        found = defined.blocks(text) if structured else []
        options = defined.named(question, found)  # the option the question names
        labelled = _labelled(text, spans)
        wholes = _option_wholes(found, options, labelled) if whole else {}
        for s, e in labelled:
            if s < covered:
                continue
            pieces: tuple[tuple[int, int], ...] = ()
            if s in commands and commands[s] - s <= 600:  # the sentence and the command it introduces, one quote
                e = covered = commands[s]
            elif s in wholes:
                pieces = wholes[s]
                e = covered = pieces[-1][1]
            sentence = text[s:e]
            if len(sentence.strip("#*-| \n")) < _MIN_CHARS and not has_cjk(sentence):
                continue
            if len(sentence) > 600:  # a run-on block: too long to quote as a sentence
                continue
            block = defined.block_at(options, s, e)
            out.append(Sentence(source.n, s, e, sentence, term=block.label if block else "",
                                label=(block.start, block.label_end) if block else None, pieces=pieces))
    return out




def _option_wholes(found: list[defined.Block], named: list[defined.Block],
                   labelled: list[tuple[int, int]]) -> dict[int, tuple[tuple[int, int], ...]]:
    """The options whose description is read whole with its label, as one candidate (a table row is one too): for each
    block of two or more sentences, OPTION_WHOLE characters at most from its label to its last sentence's end, the
    spans of those sentences by the label's start.  An option the question names is read sentence by sentence, each
    under its label (`Sentence.term`): which of its sentences answers is what is asked."""
    out = {}
    for block in found:
        if block in named:
            continue
        pieces = tuple((a, b) for a, b in labelled if block.start <= a < block.end and b <= block.end)
        if len(pieces) >= 2 and pieces[0][0] == block.start and pieces[-1][1] - block.start <= OPTION_WHOLE:
            out[block.start] = pieces
    return out


def _read(sources: SourceSet, hits: int) -> list[Source]:
    """The sources whose sentences are candidates: the first `hits` hits and the chunks read beside them."""
    return [x for x in sources.sources if (x.n <= hits and not x.beside) or 0 < x.beside <= hits]


def _labelled(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans`, each first sentence of an option's description extended back over the option's label line when
    only whitespace lies between them (the label is never a sentence of its own: statement.quotable_spans)."""
    out, previous_end = [], 0
    for s, e in spans:
        before = text[previous_end:s]
        stripped = before.rstrip()
        line_start = stripped.rfind("\n") + 1
        label = stripped[line_start:]
        if label and defined.is_label(label):  # man pages and manuals define options so (answer/defined.py)
            s = previous_end + line_start + (len(label) - len(label.lstrip()))
        out.append((s, e))
        previous_end = e
    return out


def _complete(chosen: list[Sentence], candidates: list[Sentence], question: str, share: float = _LATER_PICKS) -> list[Sentence]:
    """`chosen` with, right after its best sentence, the sentence that follows it in its chunk when the
    best only leads up to the answer: it ends with a colon ("To rotate a key, run:"), or the question
    asks for a kind of token (a number, a version, a path, a command, a date) that the best sentence
    lacks and the next one holds."""
    best = chosen[0]
    follower = _follower(candidates, best, question)
    if follower is None or follower in chosen:
        return chosen
    follower.score = max(follower.score, best.score * share)  # shown with the best, never cut by the floor
    return [best, follower, *chosen[1:]]


def _follower(candidates: list[Sentence], best: Sentence, question: str) -> Sentence | None:
    """The sentence after `best` in its chunk when `best` only leads up to the answer (see `_complete`)."""
    same = sorted((s for s in candidates if s.n == best.n and s.start >= best.end), key=lambda s: s.start)
    if not same:
        return None
    follower = same[0]
    kind = answerability.asked_type(question)
    leads = best.text.rstrip().endswith((":", "："))
    lacks = kind is not None and not answerability.holds_type(best.text, kind) and answerability.holds_type(follower.text, kind)
    return follower if leads or lacks else None


def _mmr(candidates: list[Sentence], count: int, lam: float = MMR_LAMBDA) -> list[Sentence]:
    tokens = {id(s): content_tokens(s.text) for s in candidates}
    pool = sorted(candidates, key=lambda s: -s.score)
    chosen: list[Sentence] = []
    while pool and len(chosen) < count:
        def gain(s: Sentence) -> float:
            overlap = max((jaccard(tokens[id(s)], tokens[id(c)]) for c in chosen), default=0.0)
            return lam * s.score - (1 - lam) * overlap

        best = max(pool, key=gain)
        if chosen and max(jaccard(tokens[id(best)], tokens[id(c)]) for c in chosen) > 0.8:
            pool.remove(best)  # a near-repeat of what is already chosen
            continue
        chosen.append(best)
        pool.remove(best)
    return chosen


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


def _window(candidates: list[Sentence], best: Sentence) -> list[Sentence]:
    """`best` and the candidate sentences right before and after it in its chunk."""
    same = sorted((s for s in candidates if s.n == best.n), key=lambda s: s.start)
    i = next(k for k, s in enumerate(same) if s is best)
    return same[max(0, i - 1) : i + 2]


def _frames(term: str) -> bool:
    return term in _FRAME or (not term.isascii() and _FRAME_CJK.search(term) is not None)


def _as_item(chunk: str, start: int, text: str) -> str:
    """`text` (a sentence at `start` of `chunk`, or its window) as the decision reads it: under its list's lead-in when it
    is a list item and LEAD_DECISION is on (rows.lead_in), as it is otherwise."""
    lead = rows.lead_in(chunk, start) if LEAD_DECISION else ""
    return f"{lead}\n{text}" if lead else text


def _clitics(question: str) -> set[str]:
    """The pieces of the question's words that `_CLITIC` cuts off: "s" of "Debian's", "doesn" and "t" of "doesn't"."""
    out: set[str] = set()
    for m in _CLITIC.finditer(question):
        out.update((m.group(1).lower(), "t") if m.group(1) else (m.group(2).lower(),))
    return out


def _answered(question: str, sentence: str) -> frozenset[str]:
    """The question's words naming the type it asks for that `sentence` answers with a token of that type: "which file"
    by a path (docqa.answer.shape.answered_words), "which version" / "哪个版本" by a version ("Firefox 60.7 ESR")."""
    words = answered_words(question, sentence)
    if answerability.asked_type(question) == "version" and answerability.holds_type(sentence, "version"):
        words |= _VERSION_WORDS
    return words


def _framing(term: str) -> bool:
    """A word that frames a question rather than names its subject ("我想把 …", "应该用哪个", "tell me"): its
    absence from a sentence says nothing of whether the sentence answers (QUESTION_FRAME, which search drops too)."""
    return MISSING_FRAME and term in QUESTION_FRAME


def _holds(text: str, term: str) -> bool:
    return coverage(text, [term]) > 0


def _names(question: str) -> list[str]:
    """Names, numbers and identifiers in the question: words with a digit, an underscore or a capital
    (the question's first word does not count for its capital)."""
    out = []
    text = TIME_OF_DAY.sub(" ", question)  # a time of day (22:00) is a value the user gives, not a name: not its pieces
    for i, m in enumerate(_TOKEN.finditer(normalise(text))):
        word = m.group()
        if any(ch.isdigit() for ch in word) or "_" in word or any(ch.isupper() for ch in word[1:]):
            out.append(word)
        elif word[0].isupper() and i > 0 and word.lower() not in STOPWORDS:
            out.append(word)
    return out


# A quoted value: in backticks, in quotation marks, or in single quotes that are no apostrophe ("Debian's … user's").
_QUOTED = re.compile(r"`[^`\n]+`|\"[^\"\n]+\"|“[^”\n]+”|‘[^’\n]+’|「[^」\n]+」|(?<!\w)'[^'\n]+'(?!\w)")


def _scene_values(question: str) -> set[str]:
    """The numbers the question writes only inside a quoted value of a statement before what it asks (`_ASKED_SENTENCE`):
    "01" and "32" of "my GREP_COLOR='01;32' setting is obsolescent. What should …?"; none when it asks in one sentence."""
    asked = [m.span() for m in _ASKED_SENTENCE.finditer(question)]
    if not SCENE_VALUES or not asked:
        return set()
    scene = "".join(" " if any(a <= i < b for a, b in asked) else ch for i, ch in enumerate(question))
    quoted = {n for m in _QUOTED.finditer(scene) for n in _names(" " + m.group()) if n.isdigit()}
    return quoted - set(_names(_QUOTED.sub(" ", question)))


def _weighed_names(question: str) -> list[str]:
    """The question's names (`_names`) that `missing_name` asks a sentence to hold: not the user's quoted values."""
    values = _scene_values(question)
    return [n for n in _names(question) if n not in values]


def _scene_weighed(question: str, weights: dict[str, float]) -> dict[str, float]:
    """`weights` with each term only the question's scene names (scene_terms) weighed SCENE_SHARE of its own."""
    scene = scene_terms(question)
    return {**weights, **{t: SCENE_SHARE * weights.get(t, 1.0) for t in scene}} if scene else weights


def _missing_name(question: str, window: str, under: str, about: str) -> float:
    """1 when a name of the question is in neither the window, the headings it is read under, nor (a name that is a
    word) what names its document; a name only the question's scene writes (clause.asked: "Postfix on our new mail relay
    refuses …; what is it?") counts SCENE_NAMES when missing (1: as any other)."""
    def missing(name: str) -> bool:
        return (not _has_name(window, name) and not (under and _has_name(under, name))
                and not (about and _named_word(name) and _has_name(about, name)))

    names = _weighed_names(question)
    asking = clause.asked(question) if SCENE_NAMES < 1 else ""
    if not asking:
        return float(any(missing(name) for name in names))
    asked = set(_names(asking))
    if any(missing(name) for name in names if name in asked):
        return 1.0
    return SCENE_NAMES if any(missing(name) for name in names if name not in asked) else 0.0


def _asked_exact(question: str) -> list[str]:
    """The question's exact tokens (docqa.text.exact) but a file name, path or option that only a statement before
    what it asks holds: the user's own example ("A file is called backup.tar.gz and … Which pattern …?", "我下载了一个
    源码包 foo-1.0.tar.gz，…。…tar 该加什么选项？", "The quick start tells me to pass --leak-check=yes. What would …?").
    A release or an identifier stays ("Git 2.35.8 says … What could …?" asks about 2.35.8), and so does a token of a
    condition inside the question asked ("sha256sum -c 校验时…，退出码是多少？")."""
    tokens = exact_tokens(question)
    if not SCENE_EXAMPLES or not tokens:
        return tokens
    asked = [m.group() for m in _ASKED_SENTENCE.finditer(question)]
    if not asked:
        return tokens
    kept = set(exact_tokens(" ".join(asked)))
    return [t for t in tokens if t in kept or _EXAMPLE.search(t) is None]


def _named_word(word: str) -> bool:
    """A question's word a document's name can hold for its sentences: a word of letters (`Valgrind`, `LilyPond`,
    `Edu`, 手册), not a number, version, option or identifier (12, 2.39.5, `-p`, `X11`, `max_connections`), which name
    the fact asked as often as its subject."""
    return not any(ch.isdigit() for ch in word) and not exact_tokens(word, whole=True)


def _has_name(text: str, name: str) -> bool:
    if exact_tokens(name) == [name]:  # a version or identifier: 2.39.4 is not 2.39.5
        return holds_exact(normalise(text), name)
    if _holds(normalise(text), name.lower()):
        return True
    if name.isalpha() and name.isupper() and 2 <= len(name) <= 6:  # an acronym: "EU" for "European Union"
        return name in "".join(w[0] for w in _INITIALS.findall(text))
    return False


def _negated(text: str) -> bool:
    return _NEGATION.search(text) is not None


def _states_negated(question: str, sentence: str) -> bool:
    """The sentence states a negated fact: a negation, or what it forbids (`_FORBIDS`) when the question itself names no
    forbidding ("What did the law not prohibit?" is not answered by "The law prohibited …")."""
    return _negated(sentence) or (FORBIDS and _FORBIDS.search(sentence) is not None and _FORBIDS.search(question) is None)


# What sets the scene of a question rather than asks: a parenthesis, a condition ("if … not", "…不写…的话",
# "不设置 X 时"), and Chinese A-not-A forms that ask yes or no ("能不能", "是不是", "有没有").
_ASIDE = re.compile(r"\([^)]*\)|（[^）]*）")
_CLAUSE = re.compile(r"[，,；;：:]")
_CONDITION_ZH = re.compile(r"^当|的话|(?:时|时候)$")
_IF_ZH = re.compile(r"(?:如果|要是|假如|假设|万一|一旦).*", re.S)
_ASKS = re.compile(r"[吗呢哪谁几]|什么|多少|怎|如何|为何|是否|\b(?:what|which|where|when|why|who|whom|whose|how)\b", re.IGNORECASE)
_CONDITION_EN = re.compile(r"\b(?:if|when|whenever|unless|while|without|once)\b.*", re.IGNORECASE | re.S)
_A_NOT_A = re.compile(r"(\w)[不没]\1|可不可以")
# An option, a path or a file name (`--leak-check`, `/opt/zsh/bin/zsh`, `backup.tar.gz`): what a user's example names;
# a release or an identifier (2.35.8, CVE-2022-24765) names the question's subject
_EXAMPLE = re.compile(r"^-|/|^[\w-]+(?:\.\d+)*(?:\.[A-Za-z][A-Za-z0-9]{0,4})+$")
# A sentence that ends with a question mark; a full stop before a space ends the statement before it ("Since OpenSSH
# 9.2 the ~C escape no longer gives me a command line. Which option brings it back?"), one inside "9.2" does not.
_ASKED_SENTENCE = re.compile(r"(?:[^?？。！!.]|\.(?!\s))*[?？]")


def _asked_negated(question: str) -> bool:
    """Negation in what the question asks ("Which types does it not handle?"), not in the scene it sets: the
    statements before it ("…tmux 里的进程就全没了。"), a parenthesis ("apt-get (not apt)"), a condition ("when it
    has no terminal", "shutdown 后面不写时间参数的话"), or a yes-or-no form ("能不能").  Real questions set scenes
    with negations all the time; the answer to the question asked need not repeat them."""
    asked = [m.group() for m in _ASKED_SENTENCE.finditer(question)] or [question]
    for sentence in asked:
        clauses = [c.strip(" ?？") for c in _CLAUSE.split(_ASIDE.sub(" ", sentence))]
        asking = [c for c in clauses if _ASKS.search(c)] or clauses  # "现在临时不想关了，怎么撤销？": the second asks
        for part in asking:
            if _CONDITION_ZH.search(part):
                continue
            part = _A_NOT_A.sub(" ", _CONDITION_EN.sub(" ", _IF_ZH.sub(" ", part)))
            if _negated(part):
                return True
    return False


def _contradicts(question: str, sentence: str) -> bool:
    """The sentence says the opposite: the question asks about a negated fact and the sentence is not
    negated, or the sentence holds an antonym of a question word and not the word itself."""
    if _asked_negated(question) and not _states_negated(question, sentence):
        return True
    asked = set(query_words(question))
    for word in asked:
        if word in _OPPOSITE and not _holds(sentence, word):
            if any(other not in asked and _holds(sentence, other) for other in _OPPOSITE[word]):
                return True
    return False
