"""Answer or abstain: one calibrated decision, the same for every mode and language pair.

P(the documents answer the question, and the best sentence says so) is a logistic model over the
evidence a careful reader weighs (`docqa.answer.extractive.evidence_features` computes the lexical
ones; this module adds what real documentation questions need):

- `exact_missing`: the question names an exact token (docqa.text.exact: a version `2.39.5`, a path,
  an option `--force`, an identifier `sshd_config`, an error code) that neither the sentence's
  window, nor its section, title or file name holds;
- `heading`: how much of the question (IDF-weighted) the passage's title, section and file name hold:
  documentation answers a question under a heading that names its subject, in words the sentence
  itself need not repeat;
- `type_missing`: the question asks for a number, a version, a path or file, a command or option,
  or a date, and the window holds no token of that type;
- `crossing`: the question and the sentence are in different languages (Chinese and English): shared
  words cannot measure evidence there, so the model weighs the embedding similarity instead
  (`crossing_dense`) and the lexical features that cannot hold across languages are zero (what the sentence holds of
  the question in translation is recorded beside them, docqa.answer.bilingual: `cross_matched`, `cross_rare`,
  `cross_share`; counted with bilingual.APPLY, measured worse on the trust dev split);
- `size`: how large the knowledge base is, chunks / (chunks + PRIOR_CHUNKS), with `size_retrieval` and
  `size_coverage`, the retrieval score and the question's coverage scaled by it: what a best passage's
  score and its share of the question's terms say depends on how many passages competed for them (one
  folder of a few files, or hundreds of manuals).  The fit sees knowledge bases from two files to three
  thousand chunks (each documentation set of the trust dev set alone, the whole set, SQuAD's articles).

The question's terms are weighed by how rare they are (`evidence_weights`): over a large knowledge base
by its own document frequencies, over a folder of a few files mostly by how rare the word is in its
language (docqa.text.background) — seven files cannot tell "take" from "rollback".

The model is data, `decision.json` beside this module: P(answering is right) = sigmoid(bias +
coefficients . features), one model with an embedder and one without (BM25-only search, no dense
feature), the abstain threshold (`answer.abstain_threshold` defaults to it) and the bands of the
confidence levels.  A full refit is one command, `python benchmarks/trust/fit_decision.py --collect --write`
(fitted on the dev split of the trust dev set, `benchmarks/trust/`, with the SQuAD 2.0 subset); the shipped
decision is `benchmarks/trust/refit_kind.py`'s: the SQuAD 2.0 model's logit (benchmarks/trust/decision_squad.json)
plus the ranking's `select_best` and `exact_missing`, fitted on the same data (benchmarks/RESULTS.md).  The
features of `kind_features` (the asked kind, the exact tokens in the sentence and in its heading) are recorded
with every answer for such fits.  The probability itself is the confidence shown (`docqa.answer.confidence`).
"""

from __future__ import annotations

import json
import math
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from docqa.answer import clause, release, shape
from docqa.text.background import rarity
from docqa.text.exact import exact_tokens, holds_exact
from docqa.text.language import has_cjk

DECISION = Path(__file__).with_name("decision.json")
# At this many chunks a term's weight is half the knowledge base's own IDF, half its rarity in the language.
PRIOR_CHUNKS = 200

_NUMBER = re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty"
                     r"|hundred|thousand|million|billion|once|twice|daily|weekly|monthly|hourly|yearly|annually|nightly)\b"
                     r"|[一二三四五六七八九十百千万亿两]", re.IGNORECASE)
_VERSION = re.compile(r"\d+(?:\.\d+)+")
# a path, or a file name by its extension (`sshd_config.conf`, `libtasn1.h`, `Override.xml`, `mime.cache` aside)
_PATH = re.compile(r"[\w.~-]*/[\w./~-]+|\b[\w+-]+\.(?:conf|cfg|txt|md|rst|ini|ya?ml|json|toml|xml|sh|py|gz|xz|bz2|d|h|hpp|c|cc|cpp"
                   r"|service|socket|timer|list|log|pem|key|crt|html?|pdf)\b")
_COMMAND = re.compile(r"`[^`]+`|(?<![\w-])--?[A-Za-z][\w-]*|\$ \w|\b[a-z][\w-]+ (?:--?\w|[a-z]+\b)")
_DATE = re.compile(r"\b(?:1[89]|20)\d\d\b|\d{4}-\d\d-\d\d|\d+\s*年|\d+\s*月|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b")

# What a question asks for, by its words (English and Chinese), and the pattern an answer of that type holds.
_ASKS = (
    # "which version", "Which Linux kernel version", "In which feature release", "哪个版本" (docqa.answer.release)
    ("version", release.ASKS, _VERSION),
    ("number", re.compile(r"\bhow (?:many|much|long|often|large|big|far|fast|old)\b|\bwhat (?:is the )?(?:number|size|limit|port|percentage)\b"
                          r"|\b(?:largest|smallest|maximum|minimum|max|min|default) (?:\w+ )?(?:size|length|number|value|limit|count|port)\b"
                          # "which TCP port", "what is the largest file ...", "what's the maximum ..."
                          r"|\bwhich (?:\w+ ){0,2}ports?\b|" + clause.EXTREME +
                          r"|多少|几个|几种|多久|多长|多大|多少次|端口", re.I), _NUMBER),
    ("path", re.compile(clause.WHICH + r"(?:files?|director(?:y|ies)|folders?|paths?)\b(?!\s+systems?\b)|\bwhere is\b.*\b(?:stored|kept|located)\b"
                        r"|\b(?:file\s?name|name of the (?:\w+ )?file)\b"
                        rf"|{clause.WHICH_ZH}(?:文件|目录)|什么文件|什么目录|路径|存放在哪|位于哪", re.I), _PATH),
    ("command", re.compile(clause.WHICH + r"(?:(?:sub)?commands?|options?|flags?|switch(?:es)?|arguments?|parameters?)\b|\bhow do i (?:run|invoke)\b"
                           rf"|{clause.WHICH_ZH}(?:选项|参数|开关)|{clause.WHICH_COMMAND_ZH}|什么(?:命令|选项|参数|开关)"
                           + "|" + clause.IS_THERE + r"(?:options?|flags?|switch(?:es)?|arguments?|parameters?)\b"
                           rf"|{clause.IS_THERE_ZH}(?:选项|参数|开关)吗", re.I), _COMMAND),
    # "when" as the question word (at the start of the clause that asks, or after "and"): not "which port ... when set up"
    ("date", re.compile(r"(?:^\W*|[,;，]\s*|\b(?:and|but|or|so)\s+)when\b|\b(?:since|until|till)\s+when\b|\bwhat (?:year|date|day)\b"
                        r"|\bwhich year\b|哪一年|哪年|哪一天|哪天|什么时候|何时|日期", re.I), _DATE),
)
# A name asked for beside a number a clause describes ("各占多少空间 …，应该用哪个选项？", "which option caps how many
# ...?"): the name is what is asked.
_NAMES = ("path", "command")


def asked_type(question: str) -> str | None:
    """What kind of token the question asks for, if it asks for one: version, number, path, command or date (by the
    clause that asks: "When tee is run with -p, which ...?" asks for no date, docqa.answer.clause); a path or command
    asked for beside a number wins over the number."""
    question = clause.asking(question)
    found = [name for name, asks, _ in _ASKS if asks.search(question)]
    if found and found[0] == "number":
        return next((name for name in found if name in _NAMES), "number")
    return found[0] if found else None


def holds_type(text: str, kind: str) -> bool:
    return next(p for name, _, p in _ASKS if name == kind).search(text) is not None


def crossing(question: str, sentence: str) -> bool:
    """The question and the sentence are in different languages (one Chinese, the other not)."""
    return has_cjk(question) != has_cjk(sentence)


def features(question: str, window: str, context: str, heading_coverage: float, dense: float | None,
             exact: list[str] | None = None) -> dict[str, float]:
    """The features this module adds (see the docstring): `window` is the best sentence and its
    neighbours; `context` the passage's title, section and file name; `heading_coverage` the share
    of the question's weighted terms that context holds; `exact`: the exact tokens the sentence must hold (None: every
    one of the question)."""
    held = f"{window}\n{context}"
    missing = [t for t in (exact_tokens(question) if exact is None else exact) if not holds_exact(held, t)]
    kind = asked_type(question)
    cross = crossing(question, window)
    out = {
        "exact_missing": float(bool(missing)),
        "heading": 0.0 if cross else float(heading_coverage),
        "type_missing": float(kind is not None and not holds_type(window, kind)),
        "crossing": float(cross),
    }
    if dense is not None:
        out["crossing_dense"] = float(dense) if cross else 0.0
    return out


def asks_name(question: str) -> bool:
    """The question asks for a name of code: a path or file, a command, an option, a package or a variable."""
    kind, thing = asked_kinds(question)
    return kind in ("path", "command") or thing is not None


def asked_kinds(question: str) -> tuple[str | None, str | None]:
    """The kinds of token the question asks for, by the two detections the sentence ranking uses (extractive's
    `type` and `thing`): a version, number, path, command or date (`asked_type`), and a file, package, variable or
    command (docqa.answer.shape.asks_for)."""
    return asked_type(question), shape.asks_for(question)


def holds_kind(text: str, kinds: tuple[str | None, str | None]) -> bool:
    """`text` holds a token of a kind the question asks for (`asked_kinds`)."""
    kind, thing = kinds
    return (kind is not None and holds_type(text, kind)) or (thing is not None and shape.holds_type(text, thing))


# A number as a value: not a digit inside a name (`ASN1_MAX_NAME_SIZE`, `libtasn1`, `v1.0.8`, `CVE-2023-29007`), or a
# number word.
_VALUE_NUMBER = re.compile(r"(?<![A-Za-z_\d.])(?<![A-Za-z\d]-)\d[\d.,]*|" + _NUMBER.pattern.split("|", 1)[1], re.IGNORECASE)
# What the question itself writes with a digit or as an exact token: a value the sentence repeats from it answers nothing.
_GIVEN = re.compile(r"[A-Za-z0-9_.+/~-]*\d[A-Za-z0-9_.+/~-]*")


def holds_new(text: str, kinds: tuple[str | None, str | None], question: str) -> bool:
    """`text` holds a token of a kind the question asks for (`asked_kinds`) that the question does not itself write:
    "CVE-2023-25652 的 CVSS 评分是多少？" is not answered by a sentence whose only numbers are the CVE's, nor "how many
    characters may an ASN.1 identifier have" by "ASN1_MAX_NAME_SIZE is the maximum number of characters"."""
    text = unwritten(text, question)
    kind, thing = kinds
    if kind == "number":
        found = _VALUE_NUMBER.search(text) is not None
    else:
        found = kind is not None and holds_type(text, kind)
    return found or (thing is not None and shape.holds_type(text, thing))


def unwritten(text: str, question: str) -> str:
    """`text` with what `question` writes itself with a digit or as an exact token blanked out, as whole tokens only:
    "2.35" of the question leaves "v2.35.1" a new version, "libtasn1" leaves "libtasn1.h"."""
    given = sorted({*(m.group() for m in _GIVEN.finditer(question)), *exact_tokens(question, whole=True)}, key=len, reverse=True)
    for token in given:
        text = re.sub(rf"(?<![\w.-]){re.escape(token)}(?![\w-]|\.\w)", " ", text, flags=re.IGNORECASE)
    return text


def kind_features(question: str, sentence: str, heading: str, picks: list[str], candidates: list[str]) -> dict[str, float]:
    """Whether the answer holds what the question asks for, the mark of a near miss (the documents discuss the topic but
    not the fact asked): `sentence` is the decision's sentence, `heading` what names its passage (its path, title,
    section and first line), `picks` the sentences quoted, `candidates` every candidate sentence of the top hits.

    - `kind_missing`: a kind of token is asked for (`asked_kinds`) and the sentence holds none;
    - `kind_missing_picks`: ... and none of the quoted sentences holds one;
    - `kind_none`: ... and no candidate sentence of the top hits holds one;
    - `rare_sentence_missing`: the share of the question's exact tokens (a version, path, option, identifier) the
      sentence lacks; `rare_missing`: the share that neither the sentence nor its heading holds (a sentence under
      "Git v2.39.5 Release Notes" need not repeat the version);
    - `new_missing`, `new_missing_picks`: a kind is asked and the sentence / none of the quoted sentences holds a token
      of it that the question does not write itself (`holds_new`): the documents talk about the subject, not the value."""
    kinds = asked_kinds(question)
    asked = kinds != (None, None)
    tokens = exact_tokens(question)
    in_sentence = [holds_exact(sentence, t) for t in tokens]
    anywhere = [f or holds_exact(heading, t) for t, f in zip(tokens, in_sentence)]
    return {
        "kind_missing": float(asked and not holds_kind(sentence, kinds)),
        "kind_missing_picks": float(asked and not any(holds_kind(x, kinds) for x in picks)),
        "kind_none": float(asked and not any(holds_kind(x, kinds) for x in candidates)),
        "rare_sentence_missing": in_sentence.count(False) / len(tokens) if tokens else 0.0,
        "rare_missing": anywhere.count(False) / len(tokens) if tokens else 0.0,
        "new_missing": float(asked and not holds_new(sentence, kinds, question)),
        "new_missing_picks": float(asked and not any(holds_new(x, kinds, question) for x in picks)),
    }


def decision() -> dict[str, Any]:
    """The fitted decision: `features`, `dense` and `no_dense` coefficients (with `bias`), `threshold`, `bands`
    (`high`, `medium`: the lowest probability of each level), how its features are computed (`prior_chunks`:
    0 weighs the question's terms by the knowledge base's IDF alone; `lead_with_follower`; `judge_picked`: on the
    learned ranking's pick, what is quoted, instead of the base score's best sentence) and what was
    measured.  `decision.json` beside this module, or the file DOCQA_DECISION_FILE names (a candidate being
    measured: benchmarks/trust/fit_decision.py runs the harnesses under it)."""
    return _load(os.environ.get("DOCQA_DECISION_FILE") or str(DECISION))


@lru_cache(maxsize=4)
def _load(path: str) -> dict[str, Any]:
    return dict(json.loads(Path(path).read_text(encoding="utf-8")))


def probability(features: dict[str, float]) -> float:
    """P(answering is right) for the recorded `features` (the model with the dense feature when they hold it)."""
    model = decision()["dense" if "dense" in features else "no_dense"]
    z = model["bias"] + sum(model[k] * v for k, v in features.items() if k in model)
    return 1.0 / (1.0 + math.exp(-z))


def evidence_weights(terms: list[str], weights: dict[str, float], chunks: int) -> dict[str, float]:
    """The weight of each question term for the evidence features: its IDF over the knowledge base's `chunks`
    chunks (`weights`; a term it lacks is as rare as can be), blended with its rarity in the language by the
    share chunks / (chunks + the decision's `prior_chunks`), both scaled to 0..1.  `chunks` 0 (unknown) or
    `prior_chunks` 0: `weights` as they are."""
    prior = decision().get("prior_chunks", PRIOR_CHUNKS)
    if chunks <= 0 or not terms or prior <= 0:
        return weights
    share = chunks / (chunks + prior)
    ceiling = math.log(1 + (chunks + 0.5) / 0.5)  # the IDF of a term in no chunk (docqa.retrieve.weights.idf)
    distinct = list(dict.fromkeys(t.lower() for t in terms))
    return {t: share * min(weights.get(t, ceiling) / ceiling, 1.0) + (1 - share) * r for t, r in zip(distinct, rarity(distinct))}


def size(chunks: int) -> float:
    """The knowledge base's size on 0..1: chunks / (chunks + PRIOR_CHUNKS); 1 when unknown (0)."""
    return chunks / (chunks + PRIOR_CHUNKS) if chunks > 0 else 1.0


def size_features(features: dict[str, float], chunks: int) -> dict[str, float]:
    """`size` and the features it scales (see the module docstring), from the others and the chunk count."""
    share = size(chunks)
    return {"size": share, "size_retrieval": share * features.get("retrieval", 0.0), "size_coverage": share * features.get("coverage", 0.0)}
