"""Documents: list, upload (multipart), ingest server folders, delete; reindex.  Every write runs on
the writer; uploads and ingestion are background jobs (202 + the job, polled at /api/v1/jobs/{id})."""

from __future__ import annotations

from typing import Literal

import anyio
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect

from docqa.access import Principal
from docqa.api.deps import editor, get_runtime, reader, reindexer
from docqa.api.errors import ApiError, ClientGone
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.api.schemas import NUL, IngestRequest
from docqa.api.uploads import safe_name, safe_path
from docqa.kb import KnowledgeBase

router = APIRouter(prefix=PREFIX, tags=["documents"])
UPLOAD_PATH = f"{PREFIX}/documents"
_HEAD = 8192
_MAX_FILES = 100  # files in one upload request
_UPLOAD_BODY = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["files"],
    "properties": {"files": {"type": "array", "items": {"type": "string", "format": "binary"},
                             "description": "One or more files (a safe name is made from each file name)."},
                   "collection": {"type": "string", "minLength": 1, "maxLength": 200,
                                  "description": "Collection (default: settings.collection)."},
                   "keep_paths": {"type": "boolean", "description": "Each file name is a relative path in a dropped "
                                  "folder ('docs/2023/a.md'): keep the folders (each part made safe)."}}}}}}}


@router.get("/documents", summary="Indexed documents, by collection and path", responses=errors())
async def list_documents(request: Request, collection: str | None = Query(None, min_length=1, max_length=200),
                         q: str | None = Query(None, min_length=1, max_length=200,
                                               description="Only documents whose path or title holds this text."),
                         status: list[Literal["ok", "error", "skipped"]] | None = Query(
                             None, description="Only documents indexed (ok), failed (error) or skipped (repeatable)."),
                         offset: int = Query(0, ge=0), limit: int = Query(100, ge=1, le=1000),
                         rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> dict:
    records = await rt.read(request, lambda kb: kb.documents.list(collection, principal=principal, text=q, statuses=status))
    return {"documents": [r.to_dict() for r in records[offset:offset + limit]], "total": len(records),
            "offset": offset, "limit": limit}


@router.get("/documents:ingest", summary="What an editor may send: the server folders it may index, the upload limit",
            responses=errors())
async def ingest_options(request: Request, rt: Runtime = Depends(get_runtime),
                         principal: Principal = Depends(editor)) -> dict:
    return {**await rt.read(request, lambda kb: kb.documents.options(principal=principal)), "max_files": _MAX_FILES}


@router.post("/documents", status_code=202, summary="Upload files to index (multipart/form-data)",
             openapi_extra=_UPLOAD_BODY, responses=errors(413, 415))
async def upload(request: Request, rt: Runtime = Depends(get_runtime), principal: Principal = Depends(editor)) -> JSONResponse:
    try:
        form = await request.form(max_files=_MAX_FILES, max_fields=20, max_part_size=64 * 1024)
    except MultiPartException as exc:
        raise ApiError(400, "bad_multipart", f"the upload is not valid multipart/form-data: {exc.message}") from None
    except ClientDisconnect:  # gone, or cut off by the size limit (RequestGuard answered 413 already)
        raise ClientGone() from None
    try:
        return await _upload(request, form, rt, principal)
    finally:
        await form.close()  # the spooled temporary files


async def _upload(request: Request, form, rt: Runtime, principal: Principal) -> JSONResponse:
    name = form.get("collection")
    if isinstance(name, str) and "\x00" in name:
        raise ApiError(422, "invalid_request", f"collection: {NUL}")
    named = name if isinstance(name, str) and name.strip() else None
    collection, _ = await rt.read(request, lambda kb: kb.documents.check_add([], named, principal=principal, received=True))
    files = [f for f in form.getlist("files") + form.getlist("file") if isinstance(f, UploadFile)]
    if not files:
        raise ApiError(422, "no_files", "send one or more files in the multipart field 'files'")
    keep = str(form.get("keep_paths", "")).lower() in ("1", "true", "yes")
    checked = [await _check(f, rt.settings.api.max_upload_mb, keep) for f in files]
    names = [n for n, _, _ in checked]
    if len(set(names)) != len(names):
        raise ApiError(422, "duplicate_names", "two files of the upload have the same name: " + ", ".join(sorted(names)))
    if rt.writer.full("upload"):
        raise ApiError(503, "busy", "the writer's queue is full: retry shortly", {"Retry-After": str(rt.settings.api.retry_after)})
    paths = await anyio.to_thread.run_sync(lambda: [rt.uploads.save(collection, n, f.file) for (n, _, _), f in zip(checked, files)])
    job = rt.writer.submit("upload", lambda kb, job: kb.add(paths, collection, progress=job.progress, principal=principal,
                                                            received=True).to_dict(),
                           collection, {"files": names})
    return _accepted(job, files=[{"name": n, "size": size, "type": kind} for n, size, kind in checked])


@router.post("/documents:ingest", status_code=202, summary="Index server files or folders under api.ingest_roots",
             responses=errors(415))
async def ingest(body: IngestRequest, request: Request, rt: Runtime = Depends(get_runtime),
                 principal: Principal = Depends(editor)) -> JSONResponse:
    if body.urls:
        return await _crawl(body, request, rt, principal)
    collection, paths = await rt.read(request, lambda kb: kb.documents.check_add(  # refused now, not in the job
        body.paths, body.collection, principal=principal))
    job = rt.writer.submit("ingest", lambda kb, job: kb.add(paths, collection, progress=job.progress, include=body.include,
                                                            exclude=body.exclude, principal=principal).to_dict(),
                           collection, {"paths": [str(p) for p in paths]})
    return _accepted(job)


async def _crawl(body: IngestRequest, request: Request, rt: Runtime, principal: Principal) -> JSONResponse:
    """Documentation sites (and any paths with them) as one job; only hosts api.ingest_urls names, checked
    now and at every request and redirect of the crawl."""
    def check(kb: KnowledgeBase) -> str:
        found = [kb.documents.check_site(u, body.collection, principal=principal, served=True)[0] for u in body.urls]
        if body.paths:
            kb.documents.check_add(body.paths, body.collection, principal=principal)
        return found[0]

    collection = await rt.read(request, check)

    def run(kb: KnowledgeBase, job) -> dict:
        def tick(stats, url: str) -> None:
            job.progress(stats.fetched + stats.unchanged + stats.failed + stats.gone, stats.found, url)

        reports = [kb.add_site(u, collection, tick, principal=principal, served=True) for u in body.urls]
        if body.paths:
            reports.append(kb.add(body.paths, collection, progress=job.progress, include=body.include,
                                  exclude=body.exclude, principal=principal))
        return kb.documents.merged(reports).to_dict()

    return _accepted(rt.writer.submit("ingest", run, collection, {"urls": body.urls, "paths": body.paths}))


@router.get("/documents/{document_id}/text", summary="A document's stored text (the text citations' spans point into)",
            responses=errors())
async def document_text(request: Request, document_id: str = Path(min_length=1, max_length=200),
                        rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> dict:
    """404 alike for a document that does not exist and one the key may not read (the core decides).
    `layout` gives a PDF's pages, a deck's slides or a workbook's sheets as spans of the text (None for prose)."""
    return await rt.read(request, lambda kb: kb.viewer.view(document_id, principal=principal))


@router.delete("/documents/{document_id}", summary="Remove a document from the index (an uploaded file is deleted too)",
               responses=errors())
async def delete_document(request: Request, document_id: str = Path(min_length=1, max_length=200),
                          rt: Runtime = Depends(get_runtime), principal: Principal = Depends(editor)) -> dict:
    removed = await rt.write(request, lambda kb: kb.documents.remove_one(document_id, principal=principal))
    await anyio.to_thread.run_sync(rt.uploads.discard, removed.path)
    return {"removed": removed.to_dict()}


@router.post("/reindex", status_code=202, summary="Embed every chunk with the configured model (a background job)",
             responses=errors())
async def reindex(rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reindexer)) -> JSONResponse:
    job = rt.writer.submit("reindex", lambda kb, job: kb.documents.reindex(progress=job.progress, principal=principal).to_dict())
    return _accepted(job)


def _accepted(job, **extra) -> JSONResponse:
    return JSONResponse({"job": job.to_dict(), **extra}, status_code=202, headers={"Location": f"{PREFIX}/jobs/{job.id}"})


async def _check(upload: UploadFile, max_mb: float, keep_paths: bool = False) -> tuple[str, int, str]:
    """(safe name, size, type) of an uploaded file; 413 too large, 415 no reader for it, 422 empty.
    `keep_paths`: the file name is a relative path in a dropped folder, kept (each part made safe)."""
    name = safe_path(upload.filename) if keep_paths else safe_name(upload.filename)
    head = await upload.read(_HEAD)
    await upload.seek(0)
    size = upload.size if upload.size is not None else len(head)
    if size == 0 or not head:
        raise ApiError(422, "empty_file", f"{name} is empty")
    if size > max_mb * 1024 * 1024:
        raise ApiError(413, "too_large", f"{name} is larger than api.max_upload_mb ({max_mb:g} MB)")
    kind = KnowledgeBase.file_type(name, head)
    if kind is None:
        raise ApiError(415, "unsupported_type", f"{name}: not a format docqa reads (documents, text, code, "
                                                "spreadsheets, slides, e-mail, e-books), or its content does not match its name")
    return name, size, kind
