"""Collections: list, create, delete (with their documents)."""

from __future__ import annotations

import anyio
from fastapi import APIRouter, Depends, Path, Query, Request

from docqa.access import Principal
from docqa.api.deps import editor, get_runtime, reader
from docqa.api.errors import ApiError
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.api.schemas import CollectionCreate

router = APIRouter(prefix=PREFIX, tags=["collections"])
NamePath = Path(min_length=1, max_length=200, description="The collection's name, percent-encoded (any stored name).")


@router.get("/collections", summary="Collections and their numbers of documents", responses=errors())
async def list_collections(request: Request, rt: Runtime = Depends(get_runtime),
                           principal: Principal = Depends(reader)) -> dict:
    sizes = await rt.read(request, lambda kb: kb.documents.collections(principal=principal))
    return {"collections": [{"name": n, "documents": size} for n, size in sizes.items()]}


@router.get("/overview", summary="What the knowledge base holds: counts, collections, languages, example questions",
            responses=errors())
async def get_overview(request: Request, collection: str | None = Query(None, min_length=1, max_length=200),
                       rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> dict:
    """Over the collections the caller sees (or one of them): documents, chunks, failed and skipped files,
    each collection's documents, the documents' languages (documents per language), and up to three example
    questions drawn by rules from the documents' headings, in their language (each with the document and
    section it came from)."""
    return (await rt.read(request, lambda kb: kb.browse.overview(collection, principal=principal))).to_dict()


@router.post("/collections", status_code=201, summary="Create an empty collection", responses=errors(409))
async def create_collection(body: CollectionCreate, request: Request, rt: Runtime = Depends(get_runtime),
                            principal: Principal = Depends(editor)) -> dict:
    name = body.name
    if not await rt.write(request, lambda kb: kb.documents.create_collection(name, principal=principal)):
        raise ApiError(409, "exists", f"collection {name!r} exists already")
    return {"name": name, "documents": 0}


@router.delete("/collections/{name:path}", summary="Delete a collection and its documents (and its uploaded files)",
               responses=errors())
async def delete_collection(request: Request, name: str = NamePath, rt: Runtime = Depends(get_runtime),
                            principal: Principal = Depends(editor)) -> dict:
    """Any stored name, even one made before names were checked: percent-encode it (`team%2Fops`, `%2E%2E`)."""
    removed = await rt.write(request, lambda kb: kb.documents.delete_collection(name, principal=principal))
    await anyio.to_thread.run_sync(rt.uploads.drop_collection, name)
    return {"name": name, "removed_documents": len(removed)}
