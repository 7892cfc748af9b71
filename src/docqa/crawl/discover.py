"""Where a crawl finds pages: an `llms.txt` index, sitemaps (and sitemap indexes), and a page's links."""

from __future__ import annotations

import gzip
import html
import re
import zlib

from docqa.crawl.urls import fold

_MD_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_BARE_URL = re.compile(r"(?<![(<\"'])\bhttps?://[^\s)<>\"']+")
_LOC = re.compile(rb"<(?:\w+:)?loc>\s*(.*?)\s*</(?:\w+:)?loc>", re.S)
_SITEMAP_INDEX = re.compile(rb"<(?:\w+:)?sitemapindex\b")
_MAX_SITEMAP = 50 * 1024 * 1024  # the sitemap protocol's own limit on an uncompressed sitemap


def llms_links(text: str, base: str) -> list[str]:
    """The page URLs an `llms.txt` (Markdown: a title, a summary, lists of links) names, in order."""
    found = [m.group(1) for m in _MD_LINK.finditer(text)] + _BARE_URL.findall(_MD_LINK.sub(" ", text))
    return _unique(fold(u, base) for u in found)


def sitemap_urls(data: bytes, base: str) -> tuple[list[str], list[str]]:
    """(pages, sitemaps) a sitemap names: a sitemap index names sitemaps, a sitemap names pages.
    Read with a pattern, not an XML parser: a sitemap's entity declarations are never expanded."""
    data = _gunzip(data)
    locs = _unique(fold(html.unescape(m.decode("utf-8", "replace")), base) for m in _LOC.findall(data))
    return ([], locs) if _SITEMAP_INDEX.search(data[:4096]) else (locs, [])


def page_links(markup: str, base: str) -> tuple[list[str], str | None, bool]:
    """(the links of an HTML page, its canonical URL or None, whether its links may be followed:
    not when `<meta name=robots content=nofollow>`)."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(markup)
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base = fold(base_node.attributes.get("href") or "", base) or base
    canonical_node = tree.css_first("link[rel=canonical][href]")
    canonical = fold(canonical_node.attributes.get("href") or "", base) if canonical_node is not None else None
    robots = tree.css_first("meta[name=robots][content]")
    follow = robots is None or "nofollow" not in (robots.attributes.get("content") or "").lower()
    links = [n.attributes.get("href") or "" for n in tree.css("a[href]")] if follow else []
    return _unique(fold(h, base) for h in links if not h.startswith(("mailto:", "javascript:", "#"))), canonical, follow


def _gunzip(data: bytes) -> bytes:
    """A gzip-compressed sitemap (sitemap.xml.gz) uncompressed, at most _MAX_SITEMAP bytes of it."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, _MAX_SITEMAP)
    except (zlib.error, gzip.BadGzipFile):
        return b""


def _unique(urls) -> list[str]:
    return list(dict.fromkeys(u for u in urls if u))
