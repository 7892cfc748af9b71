"""Which skills a question calls for: a trigger phrase in it, or a meaning close to a skill's
description (cosine similarity with the knowledge base's embedder).  Each match says why."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from docqa.skills.skill import Skill
from docqa.text.language import has_cjk

Embed = Callable[[list[str], str], np.ndarray]  # texts, kind ('passage' | 'query') -> vectors


@dataclass(frozen=True, slots=True)
class Match:
    skill: Skill
    reason: str  # for the run's trace and the front ends
    score: float  # 1.0 for a trigger, else the similarity


def match(question: str, skills: list[Skill], embed: Embed | None, threshold: float, limit: int) -> list[Match]:
    """The skills `question` matches, best first, at most `limit`: triggers, then similarity ≥ `threshold`."""
    if limit <= 0 or not skills:
        return []
    found: dict[str, Match] = {}
    for skill in skills:
        trigger = next((t for t in skill.triggers if contains(question, t)), None)
        if trigger:
            found[skill.name] = Match(skill, f"the question contains its trigger {trigger!r}", 1.0)
    if embed is not None:
        for skill, score in similarities(question, skills, embed):
            if score >= threshold and skill.name not in found:
                found[skill.name] = Match(skill, f"the question is close to its description "
                                                 f"(similarity {score:.2f} ≥ {threshold:g})", score)
    return sorted(found.values(), key=lambda m: -m.score)[:limit]


def similarities(question: str, skills: list[Skill], embed: Embed) -> list[tuple[Skill, float]]:
    """Cosine similarity of the question to each skill's description."""
    query = np.asarray(embed([question], "query"), dtype=np.float32)[0]
    vectors = np.asarray(embed([s.description for s in skills], "passage"), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1) * (np.linalg.norm(query) or 1.0)
    scores = vectors @ query / np.where(norms == 0, 1.0, norms)
    return [(s, float(score)) for s, score in zip(skills, scores)]


def contains(question: str, phrase: str) -> bool:
    """The phrase is in the question: as whole words for Latin text (a final '*' takes any ending:
    'compar*' matches compare and comparison), anywhere for Chinese."""
    phrase = phrase.strip()
    stem = phrase.endswith("*")
    phrase = phrase.rstrip("*").strip()
    if not phrase:
        return False
    if has_cjk(phrase):
        return phrase in question
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in phrase.split()) + (r"\w*" if stem else r"(?!\w)")
    return re.search(pattern, question, re.IGNORECASE) is not None
