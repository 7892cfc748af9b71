"""Numbered schema migrations: `migrations/NNNN_name.sql`, applied in order, recorded in a table."""

from __future__ import annotations

import sqlite3
from importlib import resources

from docqa.errors import SchemaError


def migrations() -> list[tuple[int, str, str]]:
    """(number, name, sql) of every bundled migration, in order."""
    found = []
    for entry in resources.files("docqa.store").joinpath("migrations").iterdir():
        if entry.name.endswith(".sql"):
            number, _, rest = entry.name.partition("_")
            found.append((int(number), rest.removesuffix(".sql"), entry.read_text(encoding="utf-8")))
    return sorted(found)


def migrate(conn: sqlite3.Connection, path: str) -> int:
    """Apply the migrations this database lacks; return the schema version."""
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    done = {row[0] for row in conn.execute("SELECT number FROM _migrations")}
    known = migrations()
    newest = known[-1][0]
    if done and max(done) > newest:
        raise SchemaError(
            f"{path} was written by a newer docqa (schema {max(done)}, this one knows {newest}): upgrade docqa"
        )
    for number, name, sql in known:
        if number in done:
            continue
        # One transaction per migration: a crash leaves the schema at the previous number.
        conn.executescript(
            f"BEGIN IMMEDIATE;\n{sql}\nINSERT INTO _migrations VALUES ({number}, '{name}', datetime('now'));\nCOMMIT;"
        )
    return newest
