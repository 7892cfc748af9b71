"""A `ChunkFilter` as PostgreSQL SQL over `documents d` (the records are read as on SQLite: sqlite/rows.py)."""

from __future__ import annotations

import re

from docqa.store.base import ChunkFilter
from docqa.store.sqlite.rows import DOC_COLUMNS, keyword_text, path_glob_pattern, to_hit, to_record

__all__ = ["DOC_COLUMNS", "filter_sql", "glob_regex", "keyword_text", "to_hit", "to_record"]


def filter_sql(where: ChunkFilter) -> tuple[str, list]:
    """A WHERE clause over `documents d` for a filter, with its arguments (SQLite's GLOB as a regex)."""
    clauses, args = list[str](), list[object]()
    if where.collection is not None:
        clauses.append("d.collection = %s")
        args.append(where.collection)
    if where.path_glob:
        clauses.append("d.path ~ %s")
        args.append(glob_regex(path_glob_pattern(where.path_glob)))
    if where.types:
        kinds = [t.lower().lstrip(".") for t in where.types]
        clauses.append("(d.type = ANY(%s) OR lower(d.path) ~ ANY(%s))")
        args += [kinds, [glob_regex(f"*.{k}") for k in kinds]]
    return " AND ".join(clauses) or "TRUE", args


def glob_regex(glob: str) -> str:
    """An SQLite GLOB pattern (`*`, `?`, `[...]`, case-sensitive, whole string) as a POSIX regex."""
    out, i = ["^"], 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[" and (end := glob.find("]", i + 2)) != -1:
            body = glob[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("^") else body).replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out) + "$"
