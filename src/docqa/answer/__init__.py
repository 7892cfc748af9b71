"""Answering: prompts, the pipeline, citations and checks (built up across issue 4)."""

from docqa.answer.facts import Fact, facts_in, missing_facts, normalise

__all__ = ["Fact", "facts_in", "missing_facts", "normalise"]
