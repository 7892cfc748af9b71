"""Skills: the procedures the agent may load (built in, skills.paths, the knowledge base's skills/ folder),
with paths relative to where each comes from: a client never learns the server's folders."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Request

from docqa.access import Principal
from docqa.api.deps import get_runtime, reader
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime

router = APIRouter(prefix=PREFIX, tags=["skills"])
NamePath = Path(min_length=1, max_length=64, description="The skill's name.")


@router.get("/skills", summary="The skills the agent may use, and SKILL.md files left out (with why)", responses=errors())
async def list_skills(request: Request, rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> dict:
    found = await rt.read(request, lambda kb: kb.answers.skills(principal=principal))
    return {"skills": [s.summary() for s in found], "problems": found.shown_problems()}


@router.get("/skills/{name}", summary="One skill: its description, triggers, procedure and resources", responses=errors())
async def get_skill(request: Request, name: str = NamePath, rt: Runtime = Depends(get_runtime),
                    principal: Principal = Depends(reader)) -> dict:
    skill = await rt.read(request, lambda kb: kb.answers.skill(name, principal=principal))
    return {**skill.summary(), "body": skill.body}
