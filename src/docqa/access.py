"""Who may do what, decided once, here: a Principal (a role and a collection scope) and the policy
every door (CLI, REST, MCP, the web page, the agent's tools) asks through the KnowledgeBase.

    roles, weakest first      reader < editor < admin
    actions                   read    (search, ask, list, fetch, grep; runs, sessions, feedback)  reader
                              write   (add and remove documents, create and delete collections)   editor
                              log     (the Q&A log for the people who keep the documents)         editor
                              correct (write a correction to a logged answer: a note indexed in
                                       the run's own collection)                                  editor
                              status  (the models in use and why, index counts, health)           editor
                              keys    (create, list and revoke API keys)                          admin
                              reindex (re-embed every collection)                                 admin of every collection
    scope                     a principal scoped to collections sees and changes only those; an
                              unscoped one sees every collection.  With none named, a principal
                              scoped to one collection uses it; one scoped to several names one.

What a principal may not see does not exist for it: a document, run or session of another
collection gets the same NotFoundError as one that does not exist, so nobody can probe.

Front ends authenticate (turn a key into a Principal) and hand it to the core; they decide
nothing.  `LOCAL` is the local owner: the command line, a loopback server with no keys.  A
`remote` principal came over the network: the files it names on the server's disk must lie under
api.ingest_roots (`ingest_paths`).  `STDIO` is the owner's MCP client over stdio — an agent that a
document it read may steer — with the owner's rights, but the files it names must lie under
mcp.ingest_roots (default: the folders already added to the knowledge base).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from docqa.errors import InputError, NotFoundError, PermissionDeniedError
from docqa.types import ROLES, ApiKeyRecord, RunRecord, SessionSummary

# action -> (the weakest role allowed, what it is called in messages)
ACTIONS: dict[str, tuple[str, str]] = {
    "read": ("reader", "search, ask and read documents"),
    "write": ("editor", "add and remove documents"),
    "log": ("editor", "read the question-and-answer log"),
    "correct": ("editor", "write corrections to answers"),
    "status": ("editor", "see the server's status"),
    "keys": ("admin", "manage API keys"),
    "reindex": ("admin", "reindex"),
}


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a key's role and collections, or the local owner (admin, every collection)."""

    role: str  # reader | editor | admin
    collections: tuple[str, ...] = ()  # the collections it may see; empty: all
    key_id: str | None = None  # None: no key was needed (the local owner)
    remote: bool = False  # came over the network: server paths only under the ingest roots
    stdio: bool = False  # a client of 'docqa mcp' (an agent the owner runs): server paths only under mcp.ingest_roots

    @classmethod
    def of(cls, key: ApiKeyRecord, remote: bool = True) -> Principal:
        return cls(key.role, tuple(key.collections), key.id, remote)

    def over_network(self) -> Principal:
        """The same principal, marked as calling over the network."""
        return replace(self, remote=True)

    def over_stdio(self) -> Principal:
        """The same principal, marked as an MCP client over stdio (`STDIO` is the owner's)."""
        return replace(self, stdio=True)

    def allows(self, role: str) -> bool:
        """True when this principal's role is `role` or stronger."""
        return ROLES.index(self.role) >= ROLES.index(role)

    def can_see(self, collection: str | None) -> bool:
        """True when this principal may use `collection` (None: every collection; only unscoped)."""
        return not self.collections or collection in self.collections

    def visible(self, collections: Iterable[str]) -> list[str]:
        """The names in `collections` this principal may see, in order."""
        return [c for c in collections if self.can_see(c)]

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "collections": list(self.collections), "key_id": self.key_id}


LOCAL = Principal("admin")  # the local owner: the command line, a loopback server without keys
STDIO = Principal("admin", stdio=True)  # the owner's MCP client over stdio: the owner's rights, its reads confined


def allowed(principal: Principal, action: str, collection: str | None = None) -> bool:
    """May `principal` do `action` (on `collection`, when given)?  The one policy (see the module docstring)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}: one of {', '.join(ACTIONS)}")
    if not principal.allows(ACTIONS[action][0]):
        return False
    if action == "reindex":
        return not principal.collections  # it re-embeds every collection
    return collection is None or principal.can_see(collection)


def require(principal: Principal, action: str, collection: str | None = None) -> None:
    """Refuse (PermissionDeniedError) what `allowed` refuses, naming the role that may do it."""
    if allowed(principal, action, collection):
        return
    role, what = ACTIONS[action]
    if not principal.allows(role):
        raise PermissionDeniedError(f"this is {_a(principal.role)} key: to {what} you need {_a(role)} key or a stronger one")
    if action == "reindex":
        raise PermissionDeniedError(f"reindex re-embeds every collection: it needs an admin key that is not scoped to "
                                    f"collections (this one is scoped to {', '.join(principal.collections)})")
    raise PermissionDeniedError(_outside(principal, collection))


def scope(principal: Principal, collection: str | None) -> str | None:
    """The collection a call may use.  Given one: it, when the principal may see it.  None given:
    None (every collection) for an unscoped principal, the only collection of a key scoped to one."""
    if collection is not None:
        if "\x00" in collection:  # no database stores it (PostgreSQL refuses it): the same error on every backend
            raise InputError("the collection name holds a NUL character (\\0): remove it")
        if not principal.can_see(collection):
            raise PermissionDeniedError(_outside(principal, collection))
        return collection
    if len(principal.collections) <= 1:
        return principal.collections[0] if principal.collections else None
    raise InputError(f"this key sees the collections {', '.join(principal.collections)}: name one of them")


def visible_collection(principal: Principal, collection: str | None, what: str) -> None:
    """NotFoundError (as for nothing at all) unless `principal` may see `collection`; `what` names the thing."""
    if not principal.can_see(collection):
        raise NotFoundError(what)


def check_grant(principal: Principal, collections: Iterable[str]) -> None:
    """May `principal` create a key for `collections` (empty: all)?  Admins only; a scoped admin only
    within its own collections, so no key can see more than the key that made it."""
    require(principal, "keys")
    wanted = set(collections)
    if principal.collections and (not wanted or not wanted <= set(principal.collections)):
        raise PermissionDeniedError(f"this admin key is scoped to {', '.join(principal.collections)}: it can "
                                    "create keys only for those collections")


def manageable(principal: Principal, keys: Iterable[ApiKeyRecord]) -> list[ApiKeyRecord]:
    """The keys an admin may list and revoke: all, or for a scoped admin the keys within its collections."""
    require(principal, "keys")
    if not principal.collections:
        return list(keys)
    own = set(principal.collections)
    return [k for k in keys if k.collections and set(k.collections) <= own]


def visible_run(principal: Principal, run: RunRecord) -> RunRecord:
    """`run`, when the principal may see the collection it asked (a run over every collection: only
    an unscoped principal); else NotFoundError, as for a run that does not exist."""
    visible_collection(principal, run.collection, f"no run {run.id!r}: 'docqa log' lists the runs with their ids")
    return run


def visible_runs(principal: Principal, session_id: str, runs: Iterable[RunRecord]) -> list[RunRecord]:
    """The runs of a conversation the principal may see; NotFoundError when it may see none of them,
    or — for a scoped principal — when some were asked over collections it cannot see (continuing
    that conversation would carry their answers into its own).  This is also the one rule for
    continuing a conversation."""
    runs = list(runs)
    if runs and not _sees_conversation(principal, [r.collection for r in runs]):
        raise NotFoundError(f"no session {session_id!r}: 'docqa log' shows the session of every run")
    return [r for r in runs if principal.can_see(r.collection)]


def visible_sessions(principal: Principal, sessions: Iterable[SessionSummary]) -> list[SessionSummary]:
    """The conversations a principal may open and continue: the rule of `visible_runs`, over each
    conversation's collections."""
    return [s for s in sessions if _sees_conversation(principal, s.collections)]


def _sees_conversation(principal: Principal, collections: Sequence[str | None]) -> bool:
    """Some of the runs are visible, and — for a scoped principal — every one of them."""
    shown = [c for c in collections if principal.can_see(c)]
    return bool(shown) and not (principal.collections and len(shown) < len(collections))


def ingest_paths(principal: Principal, paths: Sequence[str | os.PathLike], roots: Sequence[str],
                 setting: str = "api.ingest_roots") -> list[Path]:
    """The server paths `principal` may have indexed.  The local owner: any path.  A remote caller (and
    an MCP client over stdio): absolute paths under one of `roots` (after resolving symlinks and '..'),
    the folders of `setting`, else PermissionDeniedError; a path there that does not exist is NotFoundError."""
    if not principal.remote and not principal.stdio:
        return [Path(p) for p in paths]
    if not roots:
        raise _reason(PermissionDeniedError(_no_roots(setting)), "ingest_disabled")
    allowed_roots = [os.path.realpath(os.path.expanduser(r)) for r in roots]
    out = []
    for raw in map(str, paths):
        if not os.path.isabs(raw) or "\x00" in raw:
            raise _reason(InputError(f"{raw!r} is not an absolute path: give absolute paths under {setting}"),
                          "invalid_path")
        real = os.path.realpath(raw)
        if not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in allowed_roots):
            raise _reason(PermissionDeniedError(f"{raw} is not under a folder in {setting}: only those can be read"),
                          "path_not_allowed")
        if not os.path.exists(real):
            raise NotFoundError(f"{raw} does not exist on the server")
        out.append(Path(real))
    return out


def _no_roots(setting: str) -> str:
    if setting == "mcp.ingest_roots":
        return ("ingest_files over stdio reads only under mcp.ingest_roots (default: the folders already added to the "
                "knowledge base), and there are none: add a folder with 'docqa add', or list folders in mcp.ingest_roots")
    return ("reading files on the server is off: an operator lists the folders it may read in api.ingest_roots; "
            "or upload the files (POST /api/v1/documents)")


def _reason(error: Exception, reason: str) -> Exception:
    """`error` with a finer machine-readable reason (the API's error code)."""
    error.error_code = reason  # type: ignore[attr-defined]
    return error


def _outside(principal: Principal, collection: str | None) -> str:
    if collection is None:
        return f"this key is scoped to {', '.join(principal.collections)}: name one of them"
    return f"this key cannot use collection {collection!r}: it is scoped to {', '.join(principal.collections)}"


def _a(role: str) -> str:
    return f"{'an' if role[0] in 'aeiou' else 'a'} {role}"
