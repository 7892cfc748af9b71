#!/usr/bin/env python3
"""Kept for older scripts: the local chat model is now part of docqa itself.

    python tools/local_llm.py install [--wheels DIR]   ->  docqa model install [--wheels DIR]
    python tools/local_llm.py serve [--port 8080]      ->  docqa model serve [--port 8080]
    python tools/local_llm.py status                   ->  docqa model status

The logic lives in src/docqa/llm/local.py (install, verify) and src/docqa/llm/server.py (serve).
$DOCQA_MODELS_DIR, which this tool used to read, still works: it becomes $DOCQA_LLM__MODELS_DIR.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    if os.environ.get("DOCQA_MODELS_DIR") and not os.environ.get("DOCQA_LLM__MODELS_DIR"):
        os.environ["DOCQA_LLM__MODELS_DIR"] = os.environ.pop("DOCQA_MODELS_DIR")
    os.environ.pop("DOCQA_MODELS_DIR", None)  # not a docqa setting: 'docqa config lint' would flag it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # a checkout where docqa is not installed
    from docqa.cli import main as docqa

    sys.argv = ["docqa", "model", *sys.argv[1:]]
    docqa()


if __name__ == "__main__":
    main()
