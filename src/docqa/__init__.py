"""docqa: local-first document question answering with exact citations."""

from docqa.errors import (
    ConfigError,
    CorruptFileError,
    DocqaError,
    EmptyDocumentError,
    EncryptedFileError,
    IngestError,
    NoTextLayerError,
    NotFoundError,
    StoreError,
    UnsupportedFormatError,
)
from docqa.ingest.pipeline import IngestReport
from docqa.kb import KnowledgeBase
from docqa.settings import Settings, load_settings
from docqa.types import Block, Chunk, Document, DocumentRecord, Hit

__version__ = "0.1.0"

__all__ = [
    "Block", "Chunk", "ConfigError", "CorruptFileError", "DocqaError", "Document", "DocumentRecord",
    "EmptyDocumentError", "EncryptedFileError", "Hit", "IngestError", "IngestReport", "KnowledgeBase",
    "NoTextLayerError", "NotFoundError", "Settings", "StoreError", "UnsupportedFormatError", "load_settings",
]
