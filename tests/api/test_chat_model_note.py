"""`docqa serve` says which chat model answers once, in its log, not once per worker thread."""

from __future__ import annotations

import logging

from docqa.api.runtime import Runtime
from docqa.settings import Settings


def test_the_server_says_its_chat_model_once(tmp_path, caplog):
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"}, embed={"provider": "none"})
    runtime = Runtime(settings)
    try:
        with caplog.at_level(logging.INFO, logger="docqa"):
            for _ in range(3):  # the first knowledge base and two worker siblings
                runtime.make_kb()
    finally:
        runtime.stop()
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("chat model:")]
    assert said == ["chat model: llm.provider is 'none': answers are extracted from the documents"]
