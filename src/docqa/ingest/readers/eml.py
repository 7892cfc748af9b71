"""E-mail messages (.eml, RFC 822): headers, the body, then readable attachments.

Text = a header paragraph (From/To/Cc/Date/Subject), the body (text/plain preferred, else the
HTML part through the HTML reader's logic), then each attachment we can read under a
HEADING block "Attachment: name".
"""

from __future__ import annotations

import re
from email import policy
from email.message import EmailMessage, MIMEPart
from typing import Any
from email.parser import BytesParser
from pathlib import Path

from docqa.errors import CorruptFileError, IngestError
from docqa.ingest.readers import _encoding
from docqa.ingest.readers.base import Reader, TextBuilder, collapse_spaces
from docqa.ingest.readers.html import add_html
from docqa.types import HEADING, PARAGRAPH, Document

_HEADERS = ("From", "To", "Cc", "Date", "Subject")
_KNOWN = re.compile(
    rb"^(from|to|cc|subject|date|received|return-path|message-id|mime-version|delivered-to|"
    rb"reply-to|content-type|x-[\w-]+):", re.I | re.M)
_FIRST_LINE = re.compile(rb"^(?:From \S|[\w-]+:[ \t])")
_PARAGRAPHS = re.compile(r"\n[ \t]*\n")
_MAX_ATTACHMENT = 20 * 1024 * 1024


def part_text(part: MIMEPart) -> str:
    """A text part's content, decoded from base64/quoted-printable and its charset."""
    try:
        content = part.get_content()
        if isinstance(content, str):
            return content
    except (LookupError, UnicodeError, ValueError, AssertionError):
        pass
    payload = part.get_payload(decode=True)
    return _encoding.decode(payload if isinstance(payload, bytes) else b"", declared=part.get_content_charset())[0]


def add_text_part(builder: TextBuilder, part: MIMEPart) -> None:
    """Append a text/plain or text/html part."""
    text = part_text(part)
    if part.get_content_subtype() == "html":
        add_html(text, builder)
        return
    for paragraph in _PARAGRAPHS.split(text.replace("\r\n", "\n")):
        builder.add(paragraph, PARAGRAPH)


class EmlReader(Reader):
    """RFC 822 messages; the title is the Subject."""

    type = "eml"
    extensions = (".eml", ".mht")
    priority = 1  # header-based sniff: decides only for unknown extensions

    @classmethod
    def sniff(cls, head: bytes, path: Path) -> bool:
        return bool(_FIRST_LINE.match(head)) and len(set(
            m.group(1).lower() for m in _KNOWN.finditer(head[:4096]))) >= 3

    def read(self, path: Path, data: bytes) -> Document:
        try:
            message = BytesParser(policy=policy.default).parsebytes(data)
            headers = {name: collapse_spaces(str(message.get(name, "") or "")) for name in _HEADERS}
        except (ValueError, TypeError, IndexError, LookupError) as exc:
            raise CorruptFileError(str(path), f"could not parse the e-mail: {exc}") from exc
        builder = TextBuilder()
        builder.add("\n".join(f"{k}: {v}" for k, v in headers.items() if v), PARAGRAPH)
        body = message.get_body(preferencelist=("plain", "html"))
        if body is not None:
            add_text_part(builder, body)
        names = self.add_attachments(path, message, builder)
        metadata: dict[str, Any] = {k.lower(): v for k, v in headers.items() if v and k != "Subject"}
        if names:
            metadata["attachments"] = names
        return builder.document(path, self.type, title=headers["Subject"] or None, metadata=metadata)

    def add_attachments(self, path: Path, message: EmailMessage, builder: TextBuilder) -> list[str]:
        """Append every attachment we can read; return all attachment names."""
        names = []
        for part in message.iter_attachments():
            name = part.get_filename() or f"attachment.{part.get_content_subtype()}"
            names.append(name)
            if part.get_content_maintype() == "text":
                builder.add(f"Attachment: {name}", HEADING, level=1)
                add_text_part(builder, part)
                continue
            payload = part.get_payload(decode=True)
            if (not isinstance(payload, bytes) or not payload or len(payload) > _MAX_ATTACHMENT or part.get_content_maintype() == "message"
                    or self.read_nested is None):
                continue
            try:
                document = self.read_nested(Path(name), payload)
            except IngestError:
                continue  # unreadable attachments are listed in metadata only
            builder.add(f"Attachment: {name}", HEADING, level=1)
            builder.add(document.text, PARAGRAPH)
        return names
