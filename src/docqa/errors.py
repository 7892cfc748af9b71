"""The whole docqa error tree.

    DocqaError                      base of everything docqa raises on purpose
    ├── ConfigError                 bad settings, unknown keys, bad values
    ├── MissingExtraError           an optional dependency is not installed (names the pip command)
    ├── InputError                  bad input from the user: a bad rating, an empty question
    │   └── SkillError              a SKILL.md that does not parse, or a skill resource outside its folder
    ├── IngestError                 one file could not be ingested (always names the file)
    │   ├── UnsupportedFormatError  no reader for this type (legacy .doc, images, binary junk): skipped
    │   ├── EncryptedFileError      password-protected PDF / Office file
    │   ├── CorruptFileError        truncated or malformed file
    │   ├── EmptyDocumentError      the file holds no text at all
    │   │   └── NoTextLayerError    scanned PDF / image: needs OCR
    │   │       └── ImageWithoutOcrError  an image while OCR is off: skipped
    │   ├── FileTooLargeError       over the configured size limit
    │   │   └── ZipBombError        a zip-based file unpacks to more than the ingest limits allow
    │   ├── ParseTimeoutError       parsing took longer than ingest.parse_timeout (the worker was stopped)
    │   ├── WorkerKilledError       the parsing process died (memory cap, OOM killer, crash)
    │   └── UnreadableFileError     cannot be read right now (permissions, I/O): its indexed version stays
    ├── EmbedError                  the embedding model or service failed (names it and what to do)
    ├── LLMError                    the chat model failed: unreachable, refused, timed out, bad answer
    │   └── LocalModelError         the local model could not be installed, verified or started
    ├── RunStateError               a run that is no longer live cannot be steered, followed up or cancelled (HTTP 409)
    ├── AuthError                   no API key, or an unknown or revoked one (HTTP 401)
    │   └── PermissionDeniedError   the key's role or collections do not allow this (HTTP 403)
    └── StoreError                  the knowledge base file itself
        ├── StoreUnavailableError   the database server cannot be reached right now (HTTP 503, retry)
        │   └── RunUnreachableError the server answering a run did not take a command in time (retry)
        ├── NoKnowledgeBaseError    a command that only reads names a file that does not exist
        ├── SchemaError             the index was written by a newer docqa or is damaged
        ├── EmbedderMismatchError   the index was embedded with another model: run `docqa reindex`
        └── NotFoundError           no such document, chunk, session, run or skill

Every message says what to do next.
"""

from __future__ import annotations


class DocqaError(Exception):
    """Base of the docqa error tree."""


class ConfigError(DocqaError):
    """Settings are invalid."""


class InputError(DocqaError):
    """Bad input from the user (a bad rating, an empty question); the message says what is accepted."""


class SkillError(InputError):
    """A skill cannot be used: its SKILL.md is invalid (the message names the file and line), or a
    resource path leaves the skill's folder or names no file."""


class MissingExtraError(DocqaError):
    """An optional dependency is missing."""

    def __init__(self, feature: str, install: str):
        super().__init__(f"{feature} needs a package that is not installed. Install it with:\n    {install}")
        self.install = install


class EmbedError(DocqaError):
    """The embedding model or service failed or answered nonsense."""


class LLMError(DocqaError):
    """The chat model could not answer (after retries where retrying made sense)."""


class LocalModelError(LLMError):
    """The local model ('docqa model') could not be installed, verified or started."""


class RunStateError(DocqaError):
    """The run has ended (or takes no more follow-ups): only a live run can be steered, followed up or cancelled."""

    error_code = "not_running"


class AuthError(DocqaError):
    """The caller is not authenticated: no API key, or one that is unknown or revoked."""

    code = "unauthorized"


class PermissionDeniedError(AuthError):
    """The caller's key does not allow this: its role is too weak or the collection is not its own."""

    code = "forbidden"


class IngestError(DocqaError):
    """A file could not be ingested. `reason` is the short, user-facing cause."""

    kind = "error"
    skip = False  # True: not a file docqa reads (reported "skipped", not "failed")

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason

    def __reduce__(self):  # survive the trip back from a worker process
        return (self.__class__, (self.path, self.reason))


class UnsupportedFormatError(IngestError):
    kind = "unsupported"
    skip = True


class EncryptedFileError(IngestError):
    kind = "encrypted"


class CorruptFileError(IngestError):
    kind = "corrupt"


class EmptyDocumentError(IngestError):
    kind = "empty"
    skip = True  # nothing to index is not a failure to read


class NoTextLayerError(EmptyDocumentError):
    kind = "no-text"
    skip = False  # a scanned PDF is a document docqa should read: it needs OCR


class ImageWithoutOcrError(NoTextLayerError):
    skip = True  # a picture is not a document unless OCR is on


class FileTooLargeError(IngestError):
    kind = "too-large"


class UnreadableFileError(IngestError):
    kind = "unreadable"


class ZipBombError(FileTooLargeError):
    """Refused from the zip's central directory, before any member was inflated."""


class ParseTimeoutError(IngestError):
    kind = "timeout"


class WorkerKilledError(IngestError):
    kind = "killed"


class StoreError(DocqaError):
    """The knowledge base file cannot be used."""


class StoreUnavailableError(StoreError):
    """The knowledge base's database server cannot be reached right now (down, restarting, the
    network): nothing was changed, and the same call succeeds once it is back."""


class NoKnowledgeBaseError(StoreError):
    """No knowledge base file at the path a reading command was given: nothing is created."""

    def __init__(self, path: str):
        super().__init__(f"no knowledge base at {path} — create it with 'docqa add FOLDER --kb {path}'")
        self.path = path


class RunUnreachableError(StoreUnavailableError):
    """The server answering a run (another replica on the same database) did not take a command in time."""

    error_code = "owner_unreachable"


class SchemaError(StoreError):
    """Schema version mismatch or damage."""


class NotFoundError(StoreError):
    """No such document, chunk, session or run."""


class EmbedderMismatchError(StoreError):
    """The index holds vectors of another embedder (or none) than the one configured."""
