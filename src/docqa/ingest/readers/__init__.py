"""Readers turn files into Documents; `read_file` picks one by sniffing content and extension."""

from docqa.ingest.readers.base import Reader
from docqa.ingest.readers.registry import READERS, is_supported_extension, read_file, reader_for, sniff_type

__all__ = ["READERS", "Reader", "is_supported_extension", "read_file", "reader_for", "sniff_type"]
