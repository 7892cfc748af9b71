"""A document as its viewer shows it: the original file (for download and for PDF pages), a PDF
page as an image with the boxes of a cited span on it, and the pages, slides or sheets its stored
text divides into.  The knowledge base decides who may see a document and calls these."""

from docqa.view.boxes import Box, span_boxes
from docqa.view.layout import layout
from docqa.view.original import Original, original_of
from docqa.view.render import DEFAULT_SCALE, page_png

__all__ = ["Box", "DEFAULT_SCALE", "Original", "layout", "original_of", "page_png", "span_boxes"]
