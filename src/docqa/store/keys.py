"""`KeyStore`: API keys for the HTTP API and MCP over HTTP.

Only a key's hash is ever given to the store, never the key; a revoked key is kept, for audit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from docqa.types import ApiKeyRecord


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
