"""Meta-tests: imports point one way (DESIGN §2), __all__ is honest, settings are documented."""

from __future__ import annotations

import ast
from pathlib import Path

import docqa
from docqa.settings import Settings

SRC = Path(docqa.__file__).parent

# package -> packages of ours it may import (besides itself). Leaves import nothing of ours.
# run.control and run.context sit below answer and agent; the rest of run/ (a question's life) above agent.
ALLOWED = {
    "run.control": set(), "run.context": {"types", "errors", "llm", "run.control"},
    "run": {"types", "errors", "settings", "llm", "answer", "agent", "session", "run.control", "run.context"},
    "types": set(), "errors": set(), "settings": {"errors"},
    "text": {"types", "errors"},
    "embed": {"types", "errors", "text"},
    "llm": {"errors"},
    "answer": {"types", "errors", "text", "llm", "retrieve", "index", "settings", "run.context"},
    "index": {"types", "errors", "text"},
    "ingest": {"types", "errors", "text", "index", "embed", "settings"},
    "retrieve": {"types", "errors", "text", "index", "embed", "settings"},
    "session": {"types", "errors"},
    "browse": {"types", "errors", "index", "text"},
    "agent": {"types", "errors", "settings", "llm", "answer", "retrieve", "run.context"},
    "kb": {"types", "errors", "settings", "text", "index", "embed", "ingest", "retrieve", "answer", "llm", "session", "browse", "access",
           "run", "run.control"},
    "evaluate": {"types", "errors", "kb"},
    "access": {"types", "errors"},  # who may do what (Principal, roles, collections): shared by api and mcp
    "mcp": {"types", "errors", "settings", "kb", "access", "run.control"},
    "api": {"types", "errors", "settings", "kb", "access", "mcp", "run", "run.control"},  # run: the live runs' handles
    "cli": {"types", "errors", "settings", "kb", "evaluate", "mcp", "api"},  # mcp, api lazily ('docqa mcp', 'docqa serve')
    "__init__": {"types", "errors", "settings", "kb", "ingest", "retrieve"},
    "__main__": {"cli"},
}


_LOW = {"run.control", "run.context"}  # modules ruled as layers of their own


def _layer(dotted: str) -> str:
    """A module's layer: its package, or run.control / run.context."""
    parts = dotted.split(".")
    two = ".".join(parts[:2])
    return two if two in _LOW else parts[0]


def _package(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    return _layer(".".join(rel.parts))


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("docqa."):
            found.add(_layer(node.module.removeprefix("docqa.")))
        elif isinstance(node, ast.Import):
            found.update(_layer(a.name.removeprefix("docqa.")) for a in node.names if a.name.startswith("docqa."))
    return found


def test_imports_point_one_way():
    problems = []
    for path in SRC.rglob("*.py"):
        package = _package(path)
        allowed = ALLOWED.get(package)
        assert allowed is not None, f"{package} has no entry in the import rules"
        bad = _imports(path) - allowed - {package}
        if bad:
            problems.append(f"{path.relative_to(SRC)} imports {sorted(bad)}")
    assert not problems, problems


def test_all_matches_public_names():
    public = {n for n in dir(docqa) if not n.startswith("_") and n[0].isupper() or n == "load_settings"}
    assert set(docqa.__all__) == public


def test_every_setting_is_described():
    def walk(model, prefix=""):
        for name, field in model.model_fields.items():
            assert field.description, f"setting {prefix}{name} has no description"
            annotation = field.annotation
            if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
                walk(annotation, f"{prefix}{name}.")

    walk(Settings)
