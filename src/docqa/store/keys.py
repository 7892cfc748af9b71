"""`KeyStore`: API keys for the HTTP API and MCP over HTTP; `Keys`: minting, listing, revoking and
checking them for one caller (`kb.keys`).

Only a key's hash is ever given to the store, never the key; a revoked key is kept, for audit.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from abc import ABC, abstractmethod

from docqa.access import LOCAL, Principal, check_grant, manageable
from docqa.clock import now
from docqa.errors import AuthError, InputError, NotFoundError
from docqa.types import ROLES, ApiKeyRecord

API_KEY_PREFIX = "dq_"  # every API key starts with it (secret scanners can match it)


class KeyStore(ABC):
    """API keys by id and by hash."""

    @abstractmethod
    def add_key(self, record: ApiKeyRecord, key_hash: str) -> ApiKeyRecord:
        """Store a new key by its hash (ValueError for an unknown role); returns it as stored,
        created_at filled in when empty."""

    @abstractmethod
    def get_key(self, key_id: str) -> ApiKeyRecord:
        """A key by id, revoked or not; NotFoundError when there is none."""

    @abstractmethod
    def key_by_hash(self, key_hash: str) -> ApiKeyRecord | None:
        """The key with this hash, revoked or not; None when there is none."""

    @abstractmethod
    def list_keys(self, include_revoked: bool = False) -> list[ApiKeyRecord]:
        """Keys, oldest first; revoked ones only when asked."""

    @abstractmethod
    def revoke_key(self, key_id: str) -> ApiKeyRecord:
        """Mark a key revoked (kept for audit; revoking twice keeps the first time); NotFoundError when unknown."""

    @abstractmethod
    def touch_key(self, record: ApiKeyRecord) -> None:
        """Record that a key was used now (at most about once a minute per key; a busy store may skip it)."""

    def active_keys(self) -> int:
        """How many keys are not revoked (any: the API requires a key)."""
        return len(self.list_keys())


def mint_key() -> str:
    """A new API key: the prefix and 256 random bits."""
    return API_KEY_PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    """SHA-256 of an API key.  A key is 256 random bits, so a fast unsalted hash is safe (there is no
    dictionary to try) and lets every request find its key by an index lookup."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class Keys:
    """API keys as a principal may manage them (docqa.access: admins, a scoped admin within its collections)."""

    def __init__(self, store: KeyStore):
        self.store = store

    def create(self, role: str, collections: list[str] | tuple[str, ...] = (), name: str | None = None, *,
               principal: Principal = LOCAL) -> tuple[ApiKeyRecord, str]:
        """A new API key: its record and the key itself, which exists only in this return value."""
        if role not in ROLES:
            raise InputError(f"unknown role {role!r}: use reader (search, ask), editor (also add and remove "
                             "documents) or admin (also manage keys)")
        names = sorted({c.strip() for c in collections if c and c.strip()})
        check_grant(principal, names)
        key = mint_key()
        record = ApiKeyRecord(uuid.uuid4().hex[:16], key[:len(API_KEY_PREFIX) + 8], role, names, (name or "").strip(), now())
        return self.store.add_key(record, key_hash(key)), key

    def list(self, include_revoked: bool = False, *, principal: Principal = LOCAL) -> list[ApiKeyRecord]:
        """API keys the principal may manage, oldest first (never the keys themselves)."""
        return manageable(principal, self.store.list_keys(include_revoked))

    def revoke(self, key_id: str, *, principal: Principal = LOCAL) -> ApiKeyRecord:
        """Revoke an API key by id: it stops working at once (NotFoundError for a key the principal
        may not manage, as for none)."""
        if not any(k.id == key_id for k in self.list(include_revoked=True, principal=principal)):
            raise NotFoundError(f"no API key {key_id!r}: 'docqa keys list' shows the keys and their ids")
        return self.store.revoke_key(key_id)

    def required(self) -> bool:
        """True when any API key is active (the API then requires one)."""
        return self.store.active_keys() > 0

    def issued(self, key: str) -> bool:
        """Whether `key` was ever issued here, active or revoked (a placeholder a client sends was not)."""
        key = (key or "").strip()
        return bool(key) and self.store.key_by_hash(key_hash(key)) is not None

    def authenticate(self, key: str) -> ApiKeyRecord:
        """The active key record for a key (its use recorded); AuthError when unknown or revoked."""
        key = (key or "").strip()
        record = self.store.key_by_hash(key_hash(key)) if key else None
        if record is None:
            raise AuthError("unknown API key: check it, or ask an admin for one ('docqa keys create --role reader')")
        if record.revoked_at:
            raise AuthError(f"API key {record.prefix}… was revoked on {record.revoked_at[:10]}: ask an admin for a new one")
        self.store.touch_key(record)
        return record
