"""One confidence for every answer, with the reasons that lowered it.

A not-found answer has no confidence (None): there is nothing to be confident about.  Otherwise
the verification sets where it starts — VERIFIED high, PARTIAL medium, UNVERIFIED low — and each
weakness in the evidence lowers it by one level, with a reason a person can read:

- the best passage scores under the relevance threshold (the documents may not hold the answer);
- a model answer's best passage scores under `STRONG_HIT` (a weak match, even if it is verified);
- an extractive answer's evidence (P(the documents answer the question)) is less than `CLEAR_MARGIN`
  over the abstain threshold — and less than `THIN_MARGIN` over it lowers it by two levels.  (For an
  extractive answer, whose evidence model already weighs the passages' scores, the weaknesses do not
  add up: a weak best passage keeps it from "high", and the level is the lowest any weakness allows.)

So a VERIFIED answer is never "low" without a reason stated in `confidence_reasons`.
"""

from __future__ import annotations

from docqa.types import PARTIAL, UNVERIFIED, VERIFIED

LEVELS = ("low", "medium", "high")
STRONG_HIT = 0.7  # best passage score a model answer needs for "high"
CLEAR_MARGIN = 0.2  # extractive evidence over the abstain threshold for "high"
THIN_MARGIN = 0.05  # under this margin the extractive evidence is thin: two levels down
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
        # The evidence model already weighs the passages' scores: a weak match keeps an extractive
        # answer from "high", and the evidence's margin sets the rest — the lowest of the two, not their sum.
        level = min(level, 1) if weak_match else level
        margin = evidence - abstain_threshold
        if margin < CLEAR_MARGIN:
            steps = 2 if margin < THIN_MARGIN else 1
            level = min(level, 2 - steps)
            reasons.append(f"the evidence that the documents answer the question is {evidence:.2f}, "
                           f"{'just ' if steps == 2 else ''}over the abstain threshold {abstain_threshold:.2f}")
    return LEVELS[max(level, 0)], reasons
