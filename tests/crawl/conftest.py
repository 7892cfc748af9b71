from __future__ import annotations

import pytest

from crawl.site import Site
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

FAST = {"request_timeout": 1.0, "max_page_mb": 1, "max_depth": 6, "rate": 0}  # no pace: the test site is local


@pytest.fixture
def site():
    with Site() as s:
        yield s


@pytest.fixture
def kb(tmp_path, hash_embedder):
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        search={"mode": "bm25"}, crawl=FAST)
    with KnowledgeBase(settings) as base:
        yield base
