"""API keys (admins only): list, create (the key is in this one response), revoke; and who the caller is.
An admin key scoped to collections sees and makes only keys within its own collections."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from docqa.access import Principal
from docqa.api.deps import admin, get_principal, get_runtime
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime

router = APIRouter(prefix=PREFIX, tags=["keys"])


class KeyCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["reader", "editor", "admin"] = Field(
        description="reader: search and ask; editor: also add and remove documents; admin: also manage keys.")
    collections: list[str] = Field(default_factory=list, max_length=100,
                                   description="The collections the key may use (empty: every collection).")
    name: str = Field("", max_length=200, description="Who or what the key is for.")


@router.get("/whoami", summary="The caller: role, collections and key id (none without a key)", responses=errors())
async def whoami(principal: Principal = Depends(get_principal)) -> dict:
    return principal.to_dict()


@router.get("/keys", summary="API keys (never the keys themselves)", responses=errors())
async def list_keys(request: Request, include_revoked: bool = False, rt: Runtime = Depends(get_runtime),
                    principal: Principal = Depends(admin)) -> dict:
    keys = await rt.read(request, lambda kb: kb.keys.list(include_revoked, principal=principal))
    return {"keys": [k.to_dict() for k in keys]}


@router.post("/keys", status_code=201, summary="Create an API key: the key is in this response only", responses=errors())
async def create_key(body: KeyCreate, request: Request, rt: Runtime = Depends(get_runtime),
                     principal: Principal = Depends(admin)) -> dict:
    record, key = await rt.write(request, lambda kb: kb.keys.create(body.role, body.collections, body.name,
                                                                   principal=principal))
    return {**record.to_dict(), "key": key}


@router.delete("/keys/{key_id}", summary="Revoke an API key (it stops working at once)", responses=errors())
async def revoke_key(request: Request, key_id: str = Path(min_length=1, max_length=100),
                     rt: Runtime = Depends(get_runtime), principal: Principal = Depends(admin)) -> dict:
    revoked = await rt.write(request, lambda kb: kb.keys.revoke(key_id, principal=principal))
    return {"revoked": revoked.to_dict()}
