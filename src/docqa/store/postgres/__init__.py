"""The PostgreSQL backend: one module per concern over one connection pool (db.py); `docqa[postgres]`."""

from docqa.store.postgres.stores import PostgresStores

__all__ = ["PostgresStores"]
