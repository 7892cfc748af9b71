"""SQLiteKeys: API keys in the `api_keys` table (schema 4): only each key's hash is kept, never the key.

Writes go through the shared `SQLiteDB.transaction()` and nothing raises inside one (an
exception there would roll back an open ingest batch).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta

from docqa.clock import now
from docqa.errors import NotFoundError
from docqa.store.keys import KeyStore
from docqa.store.sqlite.db import SQLiteDB
from docqa.types import ROLES, ApiKeyRecord

_KEY_COLUMNS = "id, prefix, role, collections, name, created_at, last_used_at, revoked_at"
_TOUCH_EVERY = timedelta(minutes=1)  # last_used_at is a hint: not one write per request


class SQLiteKeys(KeyStore):
    """API keys in the knowledge base file."""

    def __init__(self, db: SQLiteDB):
        self.db, self.conn = db, db.conn

    def add_key(self, record: ApiKeyRecord, key_hash: str) -> ApiKeyRecord:
        if record.role not in ROLES:
            raise ValueError(f"unknown role {record.role!r}: one of {', '.join(ROLES)}")
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}, hash) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)",
                (record.id, record.prefix, record.role, json.dumps(sorted(set(record.collections))), record.name,
                 record.created_at or now(), key_hash),
            )
        return self.get_key(record.id)

    def get_key(self, key_id: str) -> ApiKeyRecord:
        row = self.conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no API key {key_id!r}: 'docqa keys list' shows the keys with their ids")
        return _key(row)

    def key_by_hash(self, key_hash: str) -> ApiKeyRecord | None:
        row = self.conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE hash = ?", (key_hash,)).fetchone()
        return None if row is None else _key(row)

    def list_keys(self, include_revoked: bool = False) -> list[ApiKeyRecord]:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        rows = self.conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys{where} ORDER BY created_at, id")
        return [_key(row) for row in rows]

    def active_keys(self) -> int:  # the base's, by a count (asked on every keyless request)
        return self.conn.execute("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL").fetchone()[0]

    def revoke_key(self, key_id: str) -> ApiKeyRecord:
        with self.db.transaction() as conn:
            conn.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now(), key_id))
        return self.get_key(key_id)  # NotFoundError when there is no such key

    def touch_key(self, record: ApiKeyRecord) -> None:
        stamp = now()
        last = record.last_used_at
        if last and datetime.fromisoformat(stamp) - datetime.fromisoformat(last) < _TOUCH_EVERY:
            return
        record.last_used_at = stamp
        try:
            with self.db.transaction() as conn:
                conn.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (record.last_used_at, record.id))
        except sqlite3.OperationalError:  # locked by a long write: a hint may wait, the request must not
            pass


def _key(row: tuple) -> ApiKeyRecord:
    fields = dict(zip(_KEY_COLUMNS.split(", "), row))
    fields["collections"] = json.loads(fields["collections"])
    return ApiKeyRecord(**fields)
