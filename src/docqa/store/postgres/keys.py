"""PostgresKeys: API keys in the `api_keys` table: only each key's hash is kept, never the key."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from docqa.clock import now
from docqa.errors import NotFoundError
from docqa.store.keys import KeyStore
from docqa.store.postgres.db import PostgresDB
from docqa.types import ROLES, ApiKeyRecord

_KEY_COLUMNS = "id, prefix, role, collections, name, created_at, last_used_at, revoked_at"
_TOUCH_EVERY = timedelta(minutes=1)  # last_used_at is a hint: not one write per request


class PostgresKeys(KeyStore):
    """API keys in the knowledge base database."""

    def __init__(self, db: PostgresDB):
        self.db = db

    def add_key(self, record: ApiKeyRecord, key_hash: str) -> ApiKeyRecord:
        if record.role not in ROLES:
            raise ValueError(f"unknown role {record.role!r}: one of {', '.join(ROLES)}")
        with self.db.transaction() as conn:
            conn.execute(f"INSERT INTO api_keys ({_KEY_COLUMNS}, hash) VALUES (%s, %s, %s, %s, %s, %s, NULL, NULL, %s)",
                         (record.id, record.prefix, record.role, json.dumps(sorted(set(record.collections))), record.name,
                          record.created_at or now(), key_hash))
        return self.get_key(record.id)

    def _one(self, where: str, arg: str) -> ApiKeyRecord | None:
        with self.db.read() as conn:
            row = conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE {where} = %s", (arg,)).fetchone()
        return None if row is None else _key(row)

    def get_key(self, key_id: str) -> ApiKeyRecord:
        found = self._one("id", key_id)
        if found is None:
            raise NotFoundError(f"no API key {key_id!r}: 'docqa keys list' shows the keys with their ids")
        return found

    def key_by_hash(self, key_hash: str) -> ApiKeyRecord | None:
        return self._one("hash", key_hash)

    def list_keys(self, include_revoked: bool = False) -> list[ApiKeyRecord]:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        with self.db.read() as conn:
            return [_key(r) for r in conn.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys{where} ORDER BY created_at, id")]

    def active_keys(self) -> int:
        return self.db.one("SELECT count(*) FROM api_keys WHERE revoked_at IS NULL")

    def revoke_key(self, key_id: str) -> ApiKeyRecord:
        with self.db.transaction() as conn:
            conn.execute("UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL", (now(), key_id))
        return self.get_key(key_id)

    def touch_key(self, record: ApiKeyRecord) -> None:
        stamp = now()
        last = record.last_used_at
        if last and datetime.fromisoformat(stamp) - datetime.fromisoformat(last) < _TOUCH_EVERY:
            return
        record.last_used_at = stamp
        try:
            with self.db.transaction() as conn:
                conn.execute("SET LOCAL lock_timeout = '200ms'")  # a hint may wait; the request must not
                conn.execute("UPDATE api_keys SET last_used_at = %s WHERE id = %s", (stamp, record.id))
        except self.db.errors.errors.LockNotAvailable:
            pass


def _key(row: tuple) -> ApiKeyRecord:
    fields = dict(zip(_KEY_COLUMNS.split(", "), row))
    fields["collections"] = json.loads(fields["collections"])
    return ApiKeyRecord(**fields)
