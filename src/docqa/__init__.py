"""docqa: local-first document question answering with exact citations."""

__version__ = "0.1.0"
