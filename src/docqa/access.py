"""Who may do what: a Principal (an API key's role and collections, or the local user) and the checks
every front end that serves other people (the REST API, MCP over HTTP) applies the same way.

    roles, weakest first      reader (search, ask, read) < editor (also add, remove) < admin (also keys)
    a key scoped to collections sees and changes only those; with none named, a key scoped to one
    collection uses it, a key scoped to several must name one

Each check raises PermissionDeniedError (HTTP 403) or InputError; authenticating a request (HTTP 401)
is the front end's part (`api/auth.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from docqa.errors import InputError, NotFoundError, PermissionDeniedError
from docqa.types import ROLES, ApiKeyRecord, RunRecord

_ACTIONS = {"reader": "search and ask", "editor": "add and remove documents", "admin": "manage API keys"}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a key's role and collections, or the local user (no key, every collection)."""

    role: str  # reader | editor | admin
    collections: tuple[str, ...] = ()  # the collections it may see; empty: all
    key_id: str | None = None  # None: no key was needed (loopback without keys, stdio)

    @classmethod
    def of(cls, key: ApiKeyRecord) -> Principal:
        return cls(key.role, tuple(key.collections), key.id)

    def allows(self, role: str) -> bool:
        """True when this principal's role is `role` or stronger."""
        return ROLES.index(self.role) >= ROLES.index(role)

    def can_see(self, collection: str | None) -> bool:
        """True when this principal may read and write `collection` (None: every collection; only unscoped)."""
        return not self.collections or collection in self.collections

    def visible(self, collections: Iterable[str]) -> list[str]:
        """The names in `collections` this principal may see, in order."""
        return [c for c in collections if self.can_see(c)]

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "collections": list(self.collections), "key_id": self.key_id}


LOCAL = Principal("admin")  # the local user: a loopback server without keys, or MCP over stdio


def require(principal: Principal, role: str) -> None:
    """Refuse a principal whose role is weaker than `role`."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
    if not principal.allows(role):
        raise PermissionDeniedError(f"this is {_a(principal.role)} key: to {_ACTIONS[role]} you need "
                                    f"{_a(role)} key or a stronger one")


def scope(principal: Principal, collection: str | None) -> str | None:
    """The collection a request may use.  Given one: it, when the principal may see it.  None given:
    None (every collection) for an unscoped principal, the only collection of a key scoped to one."""
    if collection is not None:
        if not principal.can_see(collection):
            raise PermissionDeniedError(f"this key cannot use collection {collection!r}: it is scoped to "
                                        f"{', '.join(principal.collections)}")
        return collection
    if len(principal.collections) <= 1:
        return principal.collections[0] if principal.collections else None
    raise InputError(f"this key sees the collections {', '.join(principal.collections)}: name one of them")


def check_grant(principal: Principal, collections: Iterable[str]) -> None:
    """May `principal` create a key for `collections` (empty: all)?  Admins only; a scoped admin only
    within its own collections, so no key can see more than the key that made it."""
    require(principal, "admin")
    wanted = set(collections)
    if principal.collections and (not wanted or not wanted <= set(principal.collections)):
        raise PermissionDeniedError(f"this admin key is scoped to {', '.join(principal.collections)}: it can "
                                    "create keys only for those collections")


def manageable(principal: Principal, keys: Iterable[ApiKeyRecord]) -> list[ApiKeyRecord]:
    """The keys an admin may list and revoke: all, or for a scoped admin the keys within its collections."""
    require(principal, "admin")
    if not principal.collections:
        return list(keys)
    own = set(principal.collections)
    return [k for k in keys if k.collections and set(k.collections) <= own]


def visible_run(principal: Principal, run: RunRecord) -> RunRecord:
    """`run`, when the principal may see the collection it asked (a run over every collection: only
    an unscoped principal); else NotFoundError, as for a run that does not exist."""
    if not principal.can_see(run.collection):
        raise NotFoundError(f"no run {run.id!r}: 'docqa log' lists the runs with their ids")
    return run


def visible_runs(principal: Principal, session_id: str, runs: Iterable[RunRecord]) -> list[RunRecord]:
    """The runs of a conversation the principal may see; NotFoundError when it may see none of them,
    or — for a scoped principal — when some were asked over collections it cannot see (continuing
    that conversation would carry their answers into its own)."""
    runs = list(runs)
    shown = [r for r in runs if principal.can_see(r.collection)]
    if (runs and not shown) or (principal.collections and len(shown) < len(runs)):
        raise NotFoundError(f"no session {session_id!r}")
    return shown


def _a(role: str) -> str:
    return f"{'an' if role[0] in 'aeiou' else 'a'} {role}"
