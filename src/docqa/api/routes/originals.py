"""A document's original for the viewer: the file to download, a PDF page as a PNG, and where a
cited span stands on that page.  The core decides access: another collection's document is the
same 404 as a missing one."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response

from docqa.access import Principal
from docqa.api.deps import get_runtime, reader
from docqa.api.errors import ApiError
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime

router = APIRouter(prefix=PREFIX, tags=["documents"])
DocumentId = Path(min_length=1, max_length=200)
PageNumber = Path(ge=1, le=100_000, description="1-based page number")
_SAFE = {"X-Content-Type-Options": "nosniff", "Cache-Control": "private, max-age=300"}
_PNG: dict[int | str, dict[str, Any]] = {200: {"content": {"image/png": {}}, "description": "The page as a PNG"}}


@router.get("/documents/{document_id}/file", summary="Download a document's original file", responses={
    200: {"content": {"application/octet-stream": {}}, "description": "The file, as an attachment"}, **errors(413)})
async def document_file(request: Request, document_id: str = DocumentId, rt: Runtime = Depends(get_runtime),
                        principal: Principal = Depends(reader)) -> Response:
    """An uploaded or source file, or an archive member's bytes; 422 when the file is gone from disk or is not
    the indexed one any more (another content hash, a symlink, outside the folder it was added from)."""
    original = await rt.read(request, lambda kb: kb.viewer.file(document_id, principal=principal))
    headers = {**_SAFE, "Content-Disposition": attachment(original.name), "Content-Security-Policy": "sandbox"}
    return Response(original.read(), media_type=original.media_type, headers=headers)  # the bytes checked, not the path


@router.get("/documents/{document_id}/pages/{page}", summary="A page of a PDF document as a PNG",
            response_class=Response, responses={**_PNG, **errors()})
async def page_image(request: Request, document_id: str = DocumentId, page: int = PageNumber,
                     scale: float = Query(1.5, ge=0.25, le=3.0, description="1.0 = 72 dpi (capped at 4 MP)"),
                     rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> Response:
    png = await rt.read(request, lambda kb: kb.viewer.page_image(document_id, page, scale, principal=principal))
    return Response(png, media_type="image/png", headers=_SAFE)


@router.get("/documents/{document_id}/pages/{page}/boxes", summary="Where a span of the text stands on a PDF page",
            responses=errors())
async def page_boxes(request: Request, document_id: str = DocumentId, page: int = PageNumber,
                     char_start: int = Query(ge=0, description="Start of the span in the document text"),
                     char_end: int = Query(ge=1, description="End of the span (exclusive)"),
                     rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> dict:
    """Rectangles as fractions (0..1) of the page, origin at the top left; [] when the span is not on it."""
    if char_end <= char_start:
        raise ApiError(422, "bad_span", "char_end must be greater than char_start")
    boxes = await rt.read(request, lambda kb: kb.viewer.page_boxes(document_id, page, char_start, char_end,
                                                            principal=principal))
    return {"document_id": document_id, "page": page, "boxes": [b.to_dict() for b in boxes]}


def attachment(name: str) -> str:
    """Content-Disposition for a download (RFC 6266): an ASCII fallback and the UTF-8 name."""
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\;' else "_" for c in name) or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
