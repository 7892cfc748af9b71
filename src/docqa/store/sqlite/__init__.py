"""The SQLite backend: one module per concern over one shared connection (db.py)."""

from docqa.store.sqlite.stores import SQLiteStores

__all__ = ["SQLiteStores"]
