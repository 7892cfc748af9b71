"""The parts of docs/architecture.md that are read from the code, so they cannot drift.

Each lives between `<!-- generated: NAME -->` and `<!-- end: NAME -->`:

- `actions`: the access policy's actions and the role each needs (`docqa.access.ACTIONS`);
- `tools`: the MCP server's tools, as `build_server` registers them;
- `schema`: the numbered migrations of each backend (`docqa.store.sqlite.migrate`, `docqa.store.postgres.db`);
- `layers`: what each package may import (`ALLOWED` in tests/test_architecture.py, the rule the test enforces).

`python tools/architecture_doc.py` rewrites them; tests/test_docs.py fails when the page and the code disagree,
or when the page's prose states a count ("five tools", "schema 5") the code no longer has.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def actions() -> str:
    from docqa.access import ACTIONS

    rows = [f"| `{name}` | {role} | {what} |" for name, (role, what) in ACTIONS.items()]
    return "\n".join([f"{len(ACTIONS)} actions:", "", "| action | role needed | to |", "|---|---|---|", *rows])


def tool_names() -> list[tuple[str, str]]:
    """(name, first sentence of the description) of every MCP tool, in registration order."""
    from docqa.kb import KnowledgeBase
    from docqa.mcp import build_server
    from docqa.settings import Settings

    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(kb=str(Path(folder) / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"})
        with KnowledgeBase(settings, embedder=None) as kb:
            listed = asyncio.run(build_server(kb).list_tools())
    return [(t.name, re.split(r"(?<=[.:])\s", (t.description or "").strip(), maxsplit=1)[0].rstrip(".:") + ".")
            for t in listed]


def tools() -> str:
    found = tool_names()
    return "\n".join([f"{len(found)} tools:", "", *(f"- `{name}`: {first}" for name, first in found)])


def schema_versions() -> dict[str, list[tuple[int, str]]]:
    from docqa.store.postgres.db import migrations as postgres
    from docqa.store.sqlite.migrate import migrations as sqlite

    return {"SQLite": [(n, name) for n, name, _ in sqlite()], "PostgreSQL": [(n, name) for n, name, _ in postgres()]}


def schema() -> str:
    lines = []
    for backend, found in schema_versions().items():
        names = ", ".join(f"{n} `{name}`" for n, name in found)
        lines.append(f"- {backend}: schema {found[-1][0]} ({names})")
    return "\n".join(lines)


def allowed() -> dict[str, set[str]]:
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from test_architecture import ALLOWED
    finally:
        sys.path.remove(str(ROOT / "tests"))
    return ALLOWED


def layers() -> str:
    rules = allowed()
    rows = [f"| `{package}` | {', '.join(f'`{b}`' for b in sorted(imports)) or '(nothing of ours)'} |"
            for package, imports in rules.items()]
    return "\n".join(["| package | may import |", "|---|---|", *rows])


SECTIONS: dict[str, Callable[[], str]] = {"actions": actions, "tools": tools, "schema": schema, "layers": layers}


def render(text: str, sections: dict[str, Callable[[], str]] = SECTIONS) -> str:
    """`text` with every generated section rewritten from the code."""
    for name, make in sections.items():
        pattern = re.compile(rf"(<!-- generated: {name} -->\n)(?:.*?\n)?(<!-- end: {name} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"{PAGE}: no '<!-- generated: {name} -->' … '<!-- end: {name} -->' section")
        body = make()
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    return text


def stated_counts(text: str) -> dict[str, set[int]]:
    """Counts the prose states outside the generated sections: 'N actions', 'N tools', 'schema N' (a heading's
    'schema N' is the current one)."""
    prose = re.sub(r"<!-- generated: (\w+) -->.*?<!-- end: \1 -->", "", text, flags=re.S)
    found: dict[str, set[int]] = {"actions": set(), "tools": set()}
    word = "|".join(NUMBERS)
    for kind in ("actions", "tools"):
        for m in re.finditer(rf"\b(\d+|{word})\s+(?:\w+\s+)?{kind}\b", prose, re.I):
            value = m.group(1).lower()
            found[kind].add(int(value) if value.isdigit() else NUMBERS.index(value))
    found["schema"] = {int(n) for n in re.findall(r"\bschema (\d+)\b", prose)}  # each must be a migration
    found["current"] = {int(n) for n in re.findall(r"^#+ .*\bschema (\d+)", prose, re.M)}  # a heading: the newest
    return found


def main() -> None:
    text = PAGE.read_text(encoding="utf-8")
    new = render(text)
    if new != text:
        PAGE.write_text(new, encoding="utf-8")
        print(f"{PAGE.relative_to(ROOT)}: regenerated")
    else:
        print(f"{PAGE.relative_to(ROOT)}: up to date")


if __name__ == "__main__":
    main()
