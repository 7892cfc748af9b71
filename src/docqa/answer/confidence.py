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
               evidence: float | None = None, abstain_threshold: float = 0.5) -> tuple[str | None, list[str]]:
    """(level, reasons) for an answer: `status` its verification, `top_score` its best passage's
    score, `evidence` the extractive answerer's evidence (None for a model answer)."""
    if not answerable:
        return None, []
    level = _START.get(status, 0)
    reasons = [] if status == VERIFIED else [f"the answer is {status.lower()}"]
    weak_match = top_score < relevance_threshold
    if weak_match:
        reasons.append(f"the best passage scores {top_score:.2f}, under the relevance threshold {relevance_threshold:.2f}")
    if evidence is None:
        level -= weak_match
        if top_score < STRONG_HIT and level == 2:
            level -= 1
            reasons.append(f"the best passage scores {top_score:.2f} (high needs {STRONG_HIT:.2f})")
    else:
        level = min(level, 1) if weak_match else level
        high, medium = decision()["bands"]["high"], decision()["bands"]["medium"]
        band = 2 if evidence >= high else 1 if evidence >= medium else 0
        if band < 2:
            level = min(level, band)
            digits = _digits(high, medium)
            span = f"{medium:.{digits}f} to {high:.{digits}f}" if band == 1 else f"under {medium:.{digits}f}"
            reasons.append(f"the probability that {decision()['probability_of']} is {_floor(evidence, digits)} ({LEVELS[band]}: {span})")
    return LEVELS[max(level, 0)], reasons


def _digits(*bounds: float) -> int:
    """Decimals that show each band's bound exactly (0.55: 2; a fitted 0.335: 3)."""
    return next((d for d in (2, 3, 4) if all(abs(round(b, d) - b) < 1e-9 for b in bounds)), 4)


def _floor(value: float, digits: int) -> str:
    """`value` cut (not rounded) to `digits` decimals: inside its band as shown (0.5496 under 0.55 is "0.54", never
    "0.55"), since a band's bounds are shown exactly and its upper bound is not in it."""
    return f"{math.floor(value * 10**digits + 1e-9) / 10**digits:.{digits}f}"
