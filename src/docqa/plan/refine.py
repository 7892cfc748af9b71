"""A chat model reviews the rules' proposal and may change a few settings, saying why.

It gets the survey's figures and the proposal as JSON and answers with one JSON object,
`{"changes": {"chunk.max_tokens": 768}, "why": "..."}`.  Only the keys in REFINABLE may change,
and each value is validated by the settings model; anything else is rejected with the reason, and
an unusable reply leaves the rules' proposal as it was.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from docqa.llm import ChatModel, Message
from docqa.plan.propose import Proposal
from docqa.plan.survey import Survey

REFINABLE = ("chunk.max_tokens", "chunk.overlap", "ingest.ocr", "ingest.exclude", "embed.model", "search.top_k",
             "answer.top_k", "answer.mode")
_SYSTEM = (
    "You review the configuration docqa (a document question-answering tool) proposes for a folder. "
    "You get the folder's survey and the proposal with a reason for each value. Change a value only when the "
    "survey gives a clear reason. Reply with one JSON object and nothing else: "
    '{"changes": {"<key>": <value>}, "why": "<one or two sentences>"}. '
    f"Keys you may change: {', '.join(REFINABLE)}. "
    'embed.model is "use-multilingual-v3" (many languages, fast) or "multilingual-e5-small" (English, slower). '
    'ingest.ocr is "auto", "on" or "off". answer.mode is "pipeline", "agent" or "auto". '
    'With nothing to change, reply {"changes": {}, "why": "<why the proposal fits>"}.')


def refine(model: ChatModel, survey: Survey, proposal: Proposal) -> dict[str, Any]:
    """Ask `model`; apply the valid changes to `proposal` (their reasons name the model); return what
    happened: model, changes applied, why, rejected (key: reason), error (an unusable reply)."""
    outcome: dict[str, Any] = {"model": model.name, "changes": {}, "why": "", "rejected": {}, "error": None}
    try:
        reply = model.complete([Message("system", _SYSTEM), Message("user", _brief(survey, proposal))]).text
        data = _json_object(reply)
    except Exception as exc:  # a model that fails or rambles leaves the rules' proposal
        outcome["error"] = f"{type(exc).__name__}: {exc}"[:300]
        proposal.refined = outcome
        return outcome
    outcome["why"] = str(data.get("why") or "").strip()[:500]
    changes = data.get("changes") if isinstance(data.get("changes"), dict) else {}
    for key, value in changes.items():
        problem = _problem(str(key), value, proposal.values)
        if problem:
            outcome["rejected"][str(key)] = problem
            continue
        proposal.set(str(key), value, f"{model.name}: {outcome['why'] or 'no reason given'}")
        outcome["changes"][str(key)] = value
    proposal.refined = outcome
    return outcome


def _brief(survey: Survey, proposal: Proposal) -> str:
    facts = {k: v for k, v in survey.to_dict().items()
             if k in ("files", "bytes", "by_type", "code_languages", "scripts", "file_languages", "images", "skipped")}
    facts["scanned_pdfs"] = len(survey.scanned)
    facts["encrypted"] = len(survey.encrypted)
    facts["largest"] = survey.largest[:3]
    plan = {k: {"value": v, "why": proposal.reasons.get(k, "")} for k, v in proposal.values.items()}
    return json.dumps({"survey": facts, "proposal": plan}, ensure_ascii=False)


def _json_object(reply: str) -> dict[str, Any]:
    """The first JSON object in the reply (code fences allowed); ValueError when there is none."""
    match = re.search(r"\{.*\}", reply, re.DOTALL)
    if not match:
        raise ValueError(f"no JSON object in the reply: {reply[:120]!r}")
    data = json.loads(match.group(0))
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    return data


def _problem(key: str, value: Any, values: dict[str, Any]) -> str | None:
    """Why a change cannot be taken (None: it can): an unknown key, or a value the settings refuse."""
    from docqa.settings.model import sections

    if key not in REFINABLE:
        return f"not a key the model may change (one of {', '.join(REFINABLE)})"
    if key == "embed.model" and value not in ("use-multilingual-v3", "multilingual-e5-small"):
        return "the local embedding models are use-multilingual-v3 and multilingual-e5-small"
    section, name = key.split(".")
    current = {k.split(".")[1]: v for k, v in values.items() if k.startswith(section + ".")}
    try:
        sections()[section].model_validate({**current, name: value})
    except ValidationError as exc:
        return "; ".join(e["msg"] for e in exc.errors())
    return None
