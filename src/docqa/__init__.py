"""docqa: local-first document question answering with exact citations."""

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
    NoTextLayerError,
    NotFoundError,
    StoreError,
    UnsupportedFormatError,
)
from docqa.ingest.pipeline import IngestReport
from docqa.kb import KnowledgeBase, ReindexReport
from docqa.retrieve import SearchResults
from docqa.settings import Settings, load_settings
from docqa.types import (Answer, Block, Chunk, Citation, Claim, Document, DocumentRecord, Event, FeedbackRecord, Hit,
                         RunRecord, SessionRecord, Verification)
from docqa.version import __version__

__all__ = [
    "Answer", "Citation", "Claim", "Event", "FeedbackRecord", "LLMError", "RunRecord", "SessionRecord", "Verification",
    "Block", "Chunk", "ConfigError", "CorruptFileError", "DocqaError", "Document", "DocumentRecord",
    "EmbedError", "EmbedderMismatchError", "EmptyDocumentError", "EncryptedFileError", "Hit", "IngestError", "InputError",
    "IngestReport", "KnowledgeBase", "MissingExtraError", "NoTextLayerError", "NotFoundError", "ReindexReport",
    "SearchResults", "Settings", "StoreError", "UnsupportedFormatError", "load_settings",
]
