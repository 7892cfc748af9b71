"""URL folding, discovery parsing and the address guard: table-driven, no network."""

from __future__ import annotations

import asyncio
import gzip

import pytest

from docqa.crawl.discover import llms_links, page_links, sitemap_urls
from docqa.crawl.guard import AddressGuard
from docqa.crawl.urls import fold, is_url, prefix_of, within
from docqa.errors import PermissionDeniedError
from docqa.ingest.web import reader_name
from docqa.types import anchored_url


@pytest.mark.parametrize("raw, base, folded", [
    ("HTTP://Docs.Example.org:80/a/b.html#frag", None, "http://docs.example.org/a/b.html"),
    ("https://x.org:443/?b=2&a=1&utm_source=nav", None, "https://x.org/?a=1&b=2"),
    ("https://x.org", None, "https://x.org/"),
    ("../c.html#x", "https://x.org/a/b/d.html", "https://x.org/a/c.html"),
    ("mailto:a@x.org", "https://x.org/", None),
    ("ftp://x.org/a", None, None),
    ("http://[::1]:8080/a", None, "http://[::1]:8080/a"),
    ("http://x.org:notaport/", None, None),
])
def test_urls_fold_to_one_form(raw, base, folded):
    assert fold(raw, base) == folded


def test_the_prefix_is_the_start_url_s_folder():
    assert prefix_of("https://x.org/docs/index.html") == "https://x.org/docs/"
    assert prefix_of("https://x.org/docs/") == "https://x.org/docs/"
    assert within("https://x.org/docs/a/b.html", "https://x.org/docs/")
    assert within("https://x.org/docs", "https://x.org/docs/")
    assert not within("https://x.org/docsearch/a.html", "https://x.org/docs/")
    assert not within("https://evil.org/docs/a.html", "https://x.org/docs/")
    assert is_url("https://x.org/a") and not is_url("/home/a/docs") and not is_url("https://")


def test_llms_txt_names_its_pages_in_order():
    text = ("# Acme\n\n> Summary with https://x.org/docs/bare.html inline.\n\n## Docs\n\n"
            "- [Install](/docs/install.html): how\n- [API](api.md \"title\")\n- [Again](/docs/install.html#x)\n")
    assert llms_links(text, "https://x.org/docs/llms.txt") == [
        "https://x.org/docs/install.html", "https://x.org/docs/api.md", "https://x.org/docs/bare.html"]


def test_a_sitemap_index_names_sitemaps_and_a_sitemap_names_pages():
    index = (b'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             b"<sitemap><loc>https://x.org/s1.xml</loc></sitemap><sitemap><loc> https://x.org/s2.xml.gz </loc></sitemap>"
             b"</sitemapindex>")
    assert sitemap_urls(index, "https://x.org/") == ([], ["https://x.org/s1.xml", "https://x.org/s2.xml.gz"])
    pages = (b'<?xml version="1.0"?><urlset><url><loc>https://x.org/a?b=1&amp;a=2</loc></url>'
             b"<url><loc>https://x.org/b#top</loc></url></urlset>")
    assert sitemap_urls(gzip.compress(pages), "https://x.org/") == (["https://x.org/a?a=2&b=1", "https://x.org/b"], [])


def test_a_sitemap_s_entities_are_never_expanded():
    bomb = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;">]><urlset><url><loc>&b;</loc></url></urlset>'
    pages, sitemaps = sitemap_urls(bomb, "https://x.org/")
    assert len(pages) == 1 and "aaa" not in pages[0] and sitemaps == []


def test_a_page_s_links_and_canonical_url():
    html = ('<html><head><base href="https://x.org/docs/"><link rel="canonical" href="/docs/a.html"></head><body>'
            '<a href="b.html#s">b</a><a href="#top">top</a><a href="mailto:x@x.org">m</a><a href="b.html">b</a></body></html>')
    assert page_links(html, "https://x.org/docs/a.html?x=1") == (["https://x.org/docs/b.html"], "https://x.org/docs/a.html", True)
    nofollow = '<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="b.html">b</a></body></html>'
    assert page_links(nofollow, "https://x.org/") == ([], None, False)


@pytest.mark.parametrize("url, kind, name", [
    ("https://x.org/docs/", "text/html", "page.html"),
    ("https://x.org/a.pdf", "application/pdf", "page.pdf"),
    ("https://x.org/a", "text/markdown", "page.md"),
    ("https://x.org/a.rst", "text/plain", "page.rst"),
    ("https://x.org/a", "text/plain", "page.txt"),
    ("https://x.org/a.docx", "application/octet-stream", "page.docx"),
])
def test_a_page_is_read_by_its_content_type(url, kind, name):
    assert reader_name(url, kind) == name


def test_a_citation_s_url_carries_the_section_s_anchor():
    anchors = ((0, "install"), (40, "upgrading"), (90, "faq"))
    assert anchored_url("https://x.org/i.html", anchors, 10) == "https://x.org/i.html#install"
    assert anchored_url("https://x.org/i.html", anchors, 40) == "https://x.org/i.html#upgrading"
    assert anchored_url("https://x.org/i.html", (), 40) == "https://x.org/i.html"
    assert anchored_url("https://x.org/i.html", ((0, "a b"),), 5) == "https://x.org/i.html#a%20b"
    assert anchored_url("/home/a/i.html", anchors, 40) == ""


def test_a_server_may_crawl_only_the_hosts_it_names():
    guard = AddressGuard(["docs.example.org", "*.acme.test", "127.0.0.1"])
    assert guard.check_url("https://docs.example.org/a") == "docs.example.org"
    assert guard.check_url("https://api.acme.test/a") == "api.acme.test"
    with pytest.raises(PermissionDeniedError, match="api.ingest_urls"):
        guard.check_url("https://example.org/a")
    with pytest.raises(PermissionDeniedError, match="none"):
        AddressGuard([]).check_url("https://docs.example.org/")
    asyncio.run(guard.check("http://127.0.0.1:8000/docs/"))  # named itself: allowed


def test_an_internal_address_needs_naming_itself():
    wildcard = AddressGuard(["*"])  # every host, but no internal address unless named
    for url in ("http://127.0.0.1/", "http://10.0.0.5/", "http://169.254.169.254/latest/", "http://[::1]/",
                "http://[::ffff:127.0.0.1]/", "http://localhost/"):
        with pytest.raises(PermissionDeniedError, match="internal address"):
            asyncio.run(wildcard.check(url))
