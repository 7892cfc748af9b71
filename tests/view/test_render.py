"""A PDF page is rendered in a forked worker within the ingest limits: a page that needs more memory
than the cap costs the worker (a clean error), not the process asking for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.errors import WorkerKilledError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.view import render

from web.viewer_docs import PDF_PAGES, make_pdf


@pytest.fixture
def pdf_kb(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    make_pdf(tmp_path / "docs" / "handbook.pdf", PDF_PAGES)
    base = dict(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
    with KnowledgeBase(Settings(**base)) as kb:
        kb.add([tmp_path / "docs"])
    yield base
    render.CACHE = render.PageCache()


def test_a_render_over_the_memory_cap_fails_cleanly_in_its_worker(pdf_kb):
    render.CACHE = render.PageCache()
    with KnowledgeBase(Settings(**pdf_kb, ingest={"worker_memory_mb": 1})) as kb:
        doc = kb.documents()[0].document_id
        with pytest.raises(WorkerKilledError, match="worker_memory_mb"):
            kb.page_image(doc, 1, 3.0)
    with KnowledgeBase(Settings(**pdf_kb)) as kb:  # the default limits: rendered in a worker
        png = kb.page_image(doc, 1)
    with KnowledgeBase(Settings(**pdf_kb, ingest={"worker_memory_mb": 0, "parse_timeout": 0})) as kb:
        render.CACHE = render.PageCache()  # both limits off: in this process, the same image
        assert kb.page_image(doc, 1) == png and png.startswith(b"\x89PNG")
