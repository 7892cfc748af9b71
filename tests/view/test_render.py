"""A PDF page is rendered in a forked worker within the ingest limits: a page that needs more memory
than the cap costs the worker (a clean error), not the process asking for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


# In a fresh process: a long-lived one (this test session) may hold enough freed heap for the worker it
# forks to render within it, whatever its cap on growth.
OVER_THE_CAP = """
import sys
from docqa.errors import WorkerKilledError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
with KnowledgeBase(Settings(kb=sys.argv[1], embed={"provider": "none"}, llm={"provider": "none"},
                            ingest={"worker_memory_mb": 1})) as kb:
    try:
        kb.viewer.page_image(kb.documents.list()[0].document_id, 1, 3.0)
    except WorkerKilledError as exc:
        print("refused:", exc)
    else:
        print("rendered")
"""


@pytest.mark.slow
def test_a_render_over_the_memory_cap_fails_cleanly_in_its_worker(pdf_kb):
    done = subprocess.run([sys.executable, "-c", OVER_THE_CAP, pdf_kb["kb"]], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("refused:"), (done.stdout, done.stderr)
    assert "worker_memory_mb" in done.stdout
    with KnowledgeBase(Settings(**pdf_kb)) as kb:
        doc = kb.documents.list()[0].document_id
        png = kb.viewer.page_image(doc, 1)  # the default limits: rendered in a worker
    with KnowledgeBase(Settings(**pdf_kb, ingest={"worker_memory_mb": 0, "parse_timeout": 0})) as kb:
        render.CACHE = render.PageCache()  # both limits off: in this process, the same image
        assert kb.viewer.page_image(doc, 1) == png and png.startswith(b"\x89PNG")
