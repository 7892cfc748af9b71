"""docqa: local-first document question answering with exact citations."""

from __future__ import annotations

import importlib
import typing

from docqa.errors import (
    ConfigError,
    CorruptFileError,
    DocqaError,
    EmbedderMismatchError,
    EmbedError,
    EmptyDocumentError,
    EncryptedFileError,
    IngestError,
    InputError,
    LLMError,
    MissingExtraError,
    NoKnowledgeBaseError,
    NoTextLayerError,
    NotFoundError,
    StoreError,
    UnsupportedFormatError,
)
from docqa.events import Event
from docqa.types import (Answer, Block, Chunk, Citation, Claim, Document, DocumentRecord, FeedbackRecord, Hit,
                         RunRecord, SessionRecord, Verification)

if typing.TYPE_CHECKING:
    from docqa.ingest.pipeline import IngestReport
    from docqa.ingest.reindex import ReindexReport
    from docqa.kb import KnowledgeBase
    from docqa.retrieve import SearchResults
    from docqa.settings import Settings, load_settings

# Imported on first use (PEP 562): `import docqa.cli` must not load the readers, numpy or onnxruntime.
_LAZY = {
    "IngestReport": "docqa.ingest.pipeline", "KnowledgeBase": "docqa.kb", "ReindexReport": "docqa.ingest.reindex",
    "SearchResults": "docqa.retrieve", "Settings": "docqa.settings", "load_settings": "docqa.settings",
    "__version__": "docqa.version",  # package metadata: read only when asked (importlib.metadata costs ~20 ms)
}

__all__ = [
    "Answer", "Citation", "Claim", "Event", "FeedbackRecord", "LLMError", "RunRecord", "SessionRecord", "Verification",
    "Block", "Chunk", "ConfigError", "CorruptFileError", "DocqaError", "Document", "DocumentRecord",
    "EmbedError", "EmbedderMismatchError", "EmptyDocumentError", "EncryptedFileError", "Hit", "IngestError", "InputError",
    "IngestReport", "KnowledgeBase", "MissingExtraError", "NoKnowledgeBaseError", "NoTextLayerError", "NotFoundError", "ReindexReport",
    "SearchResults", "Settings", "StoreError", "UnsupportedFormatError", "load_settings",
]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'docqa' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
