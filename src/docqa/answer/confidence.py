"""One confidence for every answer, with the reasons that lowered it.

A not-found answer has no confidence (None): there is nothing to be confident about.  Otherwise
the verification sets where it starts — VERIFIED high, PARTIAL medium, UNVERIFIED low — and each
weakness in the evidence lowers it by one level, with a reason a person can read:

- the best passage scores under the relevance threshold (the documents may not hold the answer);
- a model answer's best passage scores under `STRONG_HIT` (a weak match, even if it is verified);
- when the calibrated probability that answering is right is known (every answer over passages the
  extractive answerer weighed: `docqa.answer.answerability`), it caps the level by its band — the bands
  are fitted with the decision (`decision.json`, `bands`), each with the share of its answers that were
  right on the trust dev set's test split — and the reason states the probability and the band, so the
  text never contradicts the number.  (That probability already weighs the passages' scores, so a weak
  best passage only keeps the answer from "high".)

So a VERIFIED answer is never "low" without a reason stated in `confidence_reasons`.
"""

from __future__ import annotations

import math

from docqa.answer.answerability import decision
from docqa.types import PARTIAL, UNVERIFIED, VERIFIED

LEVELS = ("low", "medium", "high")
STRONG_HIT = 0.7  # best passage score a model answer needs for "high"
_START = {VERIFIED: 2, PARTIAL: 1, UNVERIFIED: 0}


def confidence(status: str, *, answerable: bool, top_score: float, relevance_threshold: float,
               evidence: float | None = None, abstain_threshold: float = 0.5, language: str = "en") -> tuple[str | None, list[str]]:
    """(level, reasons) for an answer: `status` its verification, `top_score` its best passage's
    score, `evidence` the extractive answerer's evidence (None for a model answer); the reasons in the
    answer's `language` (the question's: "zh" Chinese, else English)."""
    if not answerable:
        return None, []
    say = _ZH if language == "zh" else _EN
    level = _START.get(status, 0)
    reasons = [] if status == VERIFIED else [say["status"].format(status=status.lower(), said=say.get(status, ""))]
    weak_match = top_score < relevance_threshold
    if weak_match:
        reasons.append(say["weak"].format(score=top_score, threshold=relevance_threshold))
    if evidence is None:
        level -= weak_match
        if top_score < STRONG_HIT and level == 2:
            level -= 1
            reasons.append(say["strong"].format(score=top_score, strong=STRONG_HIT))
    else:
        level = min(level, 1) if weak_match else level
        high, medium = decision()["bands"]["high"], decision()["bands"]["medium"]
        band = 2 if evidence >= high else 1 if evidence >= medium else 0
        if band < 2:
            level = min(level, band)
            digits = _digits(high, medium)
            low, top = f"{medium:.{digits}f}", f"{high:.{digits}f}"
            span = say["between"].format(low=low, high=top) if band == 1 else say["under"].format(low=low)
            reasons.append(say["probability"].format(of=decision()["probability_of"], p=_floor(evidence, digits),
                                                     level=_LEVEL_NAMES.get(language, LEVELS)[band], span=span))
    return LEVELS[max(level, 0)], reasons


# The reasons' words: English, and Chinese for a Chinese question (the answer comes in the question's language; the
# level's name itself, "medium", is the answer's field and stays as it is).
_EN = {"status": "the answer is {status}", "weak": "the best passage scores {score:.2f}, under the relevance threshold {threshold:.2f}",
       "strong": "the best passage scores {score:.2f} (high needs {strong:.2f})", "between": "{low} to {high}", "under": "under {low}",
       "probability": "the probability that {of} is {p} ({level}: {span})"}
_ZH = {"status": "答案{said}", PARTIAL: "只有部分通过核查", UNVERIFIED: "未通过核查",
       "weak": "最相关段落的得分 {score:.2f}，低于相关性阈值 {threshold:.2f}", "strong": "最相关段落的得分 {score:.2f}（高需 {strong:.2f}）",
       "between": "{low} 至 {high}", "under": "低于 {low}", "probability": "答案正确的概率为 {p}（{level}：{span}）"}
_LEVEL_NAMES = {"zh": ("低", "中", "高")}


def _digits(*bounds: float) -> int:
    """Decimals that show each band's bound exactly (0.55: 2; a fitted 0.335: 3)."""
    return next((d for d in (2, 3, 4) if all(abs(round(b, d) - b) < 1e-9 for b in bounds)), 4)


def _floor(value: float, digits: int) -> str:
    """`value` cut (not rounded) to `digits` decimals: inside its band as shown (0.5496 under 0.55 is "0.54", never
    "0.55"), since a band's bounds are shown exactly and its upper bound is not in it."""
    return f"{math.floor(value * 10**digits + 1e-9) / 10**digits:.{digits}f}"
