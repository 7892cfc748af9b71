"""Estimates: what a question or a first `add` of a folder would take, for one caller (`kb.estimates`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from docqa.access import LOCAL, Principal, ingest_paths, require
from docqa.settings import Settings

if TYPE_CHECKING:
    from docqa.models import Models
    from docqa.run.log import Log

RECENT = 1000  # recent runs an estimate looks through (the plan averages the last of each mode)


class Estimates:
    """Expected tokens, model calls, time and money, from the run log or from stated defaults."""

    def __init__(self, settings: Settings, models: Models, log: Log):
        self.settings, self.models, self.log = settings, models, log

    def question(self, question: str | None = None, mode: str | None = None, *, principal: Principal = LOCAL) -> dict:
        """Expected tokens, model calls, time and money of one question, from the averages of the recent
        runs the principal sees (it reads the run log: the log permission), else from stated defaults.
        The mode is the one a run would take (docqa.run.life.route); extractive without a chat model."""
        require(principal, "log")
        from docqa.plan.chat import detect_chat, from_choice
        from docqa.plan.estimate import estimate_question
        from docqa.run.life import route

        s = self.settings
        found = from_choice(self.models.chat, s.llm.base_url) if self.models.chosen else detect_chat(s.llm)
        mode = mode or s.answer.mode
        chosen = "extractive" if mode == "extractive" else route(question or "", mode, found.model)
        if found.name is None:
            chosen = "extractive"
        est = estimate_question(self.log.runs(limit=RECENT, principal=principal), chosen, found.name,
                                local=found.is_local, prices=(s.llm.prompt_price, s.llm.completion_price),
                                top_k=s.answer.top_k, max_tokens=s.chunk.max_tokens,
                                check=s.answer.check and s.answer.llm_check)
        return {"question": question, "chat": found.to_dict(), **est.to_dict()}

    def ingest(self, folder: str | Path, *, principal: Principal = LOCAL) -> dict:
        """What a first `add` of a folder would take (files, chunks, embedding tokens and price, time,
        index size): for those who may add documents, and over the network only under api.ingest_roots."""
        require(principal, "write")
        from docqa.plan import ingest_estimate

        path = ingest_paths(principal, [folder], self.settings.api.ingest_roots)[0]
        return ingest_estimate(path, self.settings).to_dict()
