"""Meta-tests: imports point one way (DESIGN §2), __all__ is honest, settings are documented."""

from __future__ import annotations

import ast
from pathlib import Path

import docqa
from docqa.settings import Settings

SRC = Path(docqa.__file__).parent

# package -> packages of ours it may import (besides itself). Leaves import nothing of ours.
ALLOWED = {
    "types": set(), "errors": set(), "settings": {"errors"},
    "text": {"types", "errors"},
    "embed": {"types", "errors", "text"},
    "llm": {"errors"},
    "answer": {"types", "errors", "text", "llm", "retrieve", "store", "settings"},
    "store": {"types", "errors", "text", "session"},  # session: the RunLog, which session/ owns
    "ingest": {"types", "errors", "text", "store", "embed", "settings"},
    "retrieve": {"types", "errors", "text", "store", "embed", "settings"},
    "session": {"types", "errors"},
    "browse": {"types", "errors", "store", "text"},
    "agent": {"types", "errors", "settings", "llm", "answer", "retrieve"},
    "kb": {"types", "errors", "settings", "access", "text", "store", "embed", "ingest", "retrieve", "answer", "llm", "session", "agent", "browse"},
    "evaluate": {"types", "errors", "kb"},
    "access": {"types", "errors"},  # who may do what (Principal, roles, collections): shared by api and mcp
    "mcp": {"types", "errors", "settings", "kb", "access"},
    "api": {"types", "errors", "settings", "kb", "access", "mcp", "agent"},  # agent: Control, to steer live runs
    "cli": {"types", "errors", "settings", "kb", "evaluate", "agent", "mcp", "api"},  # mcp, api lazily ('docqa mcp', 'docqa serve')
    "__init__": {"types", "errors", "settings", "kb", "ingest", "retrieve"},
    "__main__": {"cli"},
}


def _package(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("docqa."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("docqa."))
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
