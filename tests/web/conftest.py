"""The page's fixtures: a knowledge base with two collections (A: operations, B: finance), the app over it
(extractive answers: no model), and, for the browser tests, Debian's chromium driven by Playwright."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docqa.api import create_app
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
FINANCE = """# Finance

## Invoices

Invoices are paid within 30 days of receipt.
"""
XSS = """# Archive

Invoices are archived for ten years <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script>.
"""


@pytest.fixture
def web_settings(tmp_path: Path) -> Settings:
    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                        answer={"mode": "pipeline"},
                        api={"upload_dir": str(tmp_path / "uploads"), "allowed_hosts": ["testserver"]})
    for name, text in (("A", OPS), ("B", FINANCE), ("C", XSS)):  # C: markup that must stay text
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name.lower()}.md").write_text(text, encoding="utf-8")
        with KnowledgeBase(settings) as kb:
            kb.add([folder], name)
    return settings


@pytest.fixture
def web_app(web_settings):
    return create_app(web_settings, kb_factory=lambda: KnowledgeBase(web_settings))


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium under Playwright (skipped, with the line that installs it, when absent).
    Module-scoped: Playwright's sync API holds an event loop while it runs, which asyncio tests
    run after it must not find."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no {CHROMIUM}: the browser tests need Debian's chromium (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e .[test])")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def agent_app(web_settings):
    """agent_app(server): the app answering with the scripted OpenAI-compatible model."""
    from docqa.llm import OpenAICompatModel

    models = []

    def make(server, **answer):
        settings = web_settings.model_copy(update={
            "llm": web_settings.llm.model_copy(update={"provider": "openai", "base_url": server.base_url, "timeout": 10,
                                                       "max_retries": 0}),
            "agent": web_settings.agent.model_copy(update={"check": False}),
            "answer": web_settings.answer.model_copy(update=answer)})
        model = OpenAICompatModel(server.base_url, "scripted", timeout=10, max_retries=0)
        models.append(model)
        return create_app(settings, kb_factory=lambda: KnowledgeBase(settings, chat_model=model))

    yield make
    for model in models:
        model.close()


SHOTS = Path(os.environ.get("DOCQA_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build" / "screenshots"))


@pytest.fixture
def screenshot():
    """screenshot(page, "name"): saves the page as build/screenshots/name.png (or under $DOCQA_SCREENSHOTS),
    so each run leaves pictures of the main views to look at."""
    def take(page, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=False)
        return path
    return take
