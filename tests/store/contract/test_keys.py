"""The KeyStore contract: keys by id and by hash, revoked but kept, used-at as a hint."""

from __future__ import annotations

import pytest

from docqa.errors import NotFoundError
from docqa.store import KeyStore
from docqa.types import ApiKeyRecord


def _key(key_id: str, role: str = "reader", collections=(), created_at: str = "") -> ApiKeyRecord:
    return ApiKeyRecord(key_id, f"dq_{key_id}", role, list(collections), f"name {key_id}", created_at)


def test_add_get_and_find_by_hash(stores):
    added = stores.keys.add_key(_key("k1", collections=["ops", "hr", "ops"]), "hash1")
    assert added.created_at and added.collections == ["hr", "ops"] and added.revoked_at is None
    assert stores.keys.get_key("k1") == added
    assert stores.keys.key_by_hash("hash1") == added and stores.keys.key_by_hash("nope") is None
    with pytest.raises(NotFoundError, match="docqa keys list"):
        stores.keys.get_key("nope")
    with pytest.raises(ValueError, match="role"):
        stores.keys.add_key(_key("k2", role="owner"), "hash2")


def test_revoked_keys_are_kept_but_not_listed(stores):
    stores.keys.add_key(_key("k1", created_at="2026-01-01T00:00:00.000+00:00"), "hash1")
    stores.keys.add_key(_key("k2", "admin", created_at="2026-01-02T00:00:00.000+00:00"), "hash2")
    assert [k.id for k in stores.keys.list_keys()] == ["k1", "k2"] and stores.keys.active_keys() == 2
    revoked = stores.keys.revoke_key("k1")
    assert revoked.revoked_at and stores.keys.revoke_key("k1").revoked_at == revoked.revoked_at  # the first time kept
    assert [k.id for k in stores.keys.list_keys()] == ["k2"] and stores.keys.active_keys() == 1
    assert KeyStore.active_keys(stores.keys) == 1  # a backend's override agrees with the base
    assert [k.id for k in stores.keys.list_keys(include_revoked=True)] == ["k1", "k2"]
    assert stores.keys.key_by_hash("hash1").revoked_at == revoked.revoked_at
    with pytest.raises(NotFoundError):
        stores.keys.revoke_key("nope")


def test_touch_records_use_at_most_once_a_minute(stores):
    record = stores.keys.add_key(_key("k1"), "hash1")
    stores.keys.touch_key(record)
    first = stores.keys.get_key("k1").last_used_at
    assert first and record.last_used_at == first
    stores.keys.touch_key(record)  # within the minute: not written again
    assert stores.keys.get_key("k1").last_used_at == first
