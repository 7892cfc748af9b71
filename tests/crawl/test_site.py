"""Crawling a realistic documentation site on a loopback server (tests/crawl/site.py): discovery,
politeness and limits, conditional re-crawls, changed and vanished pages, and URL#anchor citations."""

from __future__ import annotations

import pytest

from crawl.site import SECTIONS

pytestmark = pytest.mark.slow

SECTION_PAGES = sum(SECTIONS.values())  # 53


def _paths(kb, site) -> set[str]:
    prefix = site.url("")
    return {r.path.removeprefix(prefix) for r in kb.documents.list() if r.status == "ok"}


def test_a_first_crawl_indexes_the_site_within_its_prefix_and_limits(kb, site):
    seen = []
    report = kb.add_site(site.url("/docs/"), progress=lambda stats, url: seen.append((stats.found, stats.fetched, url)))
    paths = _paths(kb, site)
    assert sum(p.startswith(tuple(f"/docs/{s}/page" for s in SECTIONS)) for p in paths) == SECTION_PAGES
    assert "/docs/notes.md" in paths and report.by_type["markdown"] == 1  # read by its content type
    assert not any(p.startswith(("/docs/private/", "/elsewhere/")) for p in paths)  # robots.txt; the prefix
    assert not any(r.startswith("/docs/private/") for r, _ in site.requests)  # never even asked for
    assert not any("?" in p or "#" in p for p in paths)  # query and fragment duplicates folded
    assert "/docs/old/start.html" not in paths  # a redirect within the prefix: its target's document
    trap = [p for p in paths if p.startswith("/docs/trap/")]
    assert 0 < len(trap) <= kb.settings.crawl.max_depth  # the endless link trap ends at the depth limit
    failed = {path.removeprefix(site.url("")): reason for path, _, reason in report.failed}
    assert failed["/docs/missing.html"].startswith("404")
    assert "no answer within" in failed["/docs/slow.html"]
    assert "crawl.max_page_mb" in failed["/docs/huge.html"]
    assert "out of the crawl's prefix" in failed["/docs/out.html"]
    assert {"/robots.txt", "/docs/llms.txt", "/sitemap.xml", "/sitemaps/a.xml", "/sitemaps/b.xml"} <= {p for p, _ in site.requests}
    assert site.most_inflight <= kb.settings.crawl.per_host
    crawl = report.crawl
    assert crawl["fetched"] == len(report.added) and crawl["failed"] + crawl["gone"] == len(report.failed)
    assert seen and seen[-1][0] == crawl["found"] and max(f for _, f, _ in seen) == crawl["fetched"]


def test_an_unchanged_site_costs_304s_and_no_parsing(kb, site):
    first = kb.add_site(site.url("/docs/"))
    asked = len(site.requests)
    again = kb.add_site(site.url("/docs/"))
    answers = [status for _, status in site.requests[asked:] if status in (200, 304)]
    pages = [p for p, status in site.requests[asked:] if status == 304]
    assert not again.added and not again.updated and not again.removed and not again.failed
    assert len(again.unchanged) == len(first.added)
    assert len(pages) >= 0.9 * len(first.added)  # the trap's pages send no ETag: their content hash decides
    assert answers.count(304) >= 0.8 * len(answers)


def test_a_changed_page_is_replaced_and_a_vanished_one_removed_on_the_second_confirmation(kb, site):
    kb.add_site(site.url("/docs/"))
    kind, body = site.pages["/docs/guide/page2.html"]
    site.pages["/docs/guide/page2.html"] = (kind, body.replace("codeword zxguide2q", "codeword zxrenamedq"))
    del site.pages["/docs/howto/page4.html"]
    report = kb.add_site(site.url("/docs/"))
    assert report.updated == [site.url("/docs/guide/page2.html")]
    page2 = kb.documents.get(site.url("/docs/guide/page2.html"))
    assert "zxrenamedq" in kb.documents.text(page2.document_id) and "zxguide2q" not in kb.documents.text(page2.document_id)
    assert [h.path for h in kb.search("zxrenamedq", top_k=3)][:1] == [page2.path]
    gone = site.url("/docs/howto/page4.html")
    assert [u for u, _, _ in report.unreadable] == [gone] and not report.removed  # flagged, kept, still found
    assert any(h.path == gone for h in kb.search("zxhowto4q", top_k=3))
    report = kb.add_site(site.url("/docs/"))
    assert report.removed == [gone] and gone not in {r.path for r in kb.documents.list()}


def test_a_site_that_is_down_is_never_taken_for_deleted(kb, site):
    kb.add_site(site.url("/docs/"))
    before = _paths(kb, site)
    site.down = True
    for _ in range(2):  # twice: a second 503 is no confirmation either
        report = kb.add_site(site.url("/docs/"))
        assert not report.removed
    assert _paths(kb, site) == before


def test_a_page_that_came_back_is_whole_again(kb, site):
    kb.add_site(site.url("/docs/"))
    saved = site.pages.pop("/docs/tutorial/page1.html")
    kb.add_site(site.url("/docs/"))  # 404 once: flagged
    site.pages["/docs/tutorial/page1.html"] = saved
    report = kb.add_site(site.url("/docs/"))
    record = kb.documents.get(site.url("/docs/tutorial/page1.html"))
    assert record.status == "ok" and site.url("/docs/tutorial/page1.html") in report.updated


def test_hits_and_citations_carry_the_page_s_url_and_the_section_s_anchor(kb, site):
    kb.add_site(site.url("/docs/"))
    hit = kb.search("codeword zxreference5q", top_k=1)[0]
    assert hit.url == site.url("/docs/reference/page5.html#details")
    assert hit.to_dict()["url"] == hit.url
    answer = kb.ask("Which codeword does the reference5 option have?")
    urls = [c.url for c in answer.citations]
    assert urls and all(u.startswith(site.url("/docs/")) and "#" in u for u in urls)
    assert all(c["url"] for c in answer.to_dict()["citations"])


def test_a_served_crawl_reaches_only_the_hosts_the_setting_names(kb, site):
    from docqa.errors import PermissionDeniedError

    with pytest.raises(PermissionDeniedError, match="api.ingest_urls"):
        kb.add_site(site.url("/docs/"), served=True)  # empty by default: nothing
    kb.settings.api.ingest_urls = ["*"]
    report = kb.add_site(site.url("/docs/"), served=True)  # every host, but a loopback address only when named
    assert not report.added and report.failed and all("internal address" in r for _, _, r in report.failed)
    kb.settings.api.ingest_urls = ["127.0.0.1"]
    assert len(kb.add_site(site.url("/docs/"), served=True).added) > SECTION_PAGES


def test_robots_crawl_delay_paces_the_requests(kb, site):
    site.crawl_delay = 0.3
    kb.settings.crawl.max_pages = 4
    report = kb.add_site(site.url("/docs/"))
    assert "crawl.max_pages" in report.crawl["stopped"] and report.crawl["found"] == 4
    after = [t for p, t in site.times if p != "/robots.txt"]  # the delay is known once robots.txt is read
    assert len(after) >= 4
    # Each request leaves Crawl-delay after the one before: however late one arrives (a loaded machine),
    # the span of n requests is at least n - 2 delays
    assert after[-1] - after[0] >= (len(after) - 2) * 0.3, [round(b - a, 3) for a, b in zip(after, after[1:])]


def test_pages_parsed_inline_when_no_bound_is_asked_for(tmp_path, site):
    from docqa.kb import KnowledgeBase
    from docqa.settings import Settings

    from crawl.conftest import FAST

    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, search={"mode": "bm25"}, crawl=FAST,
                        ingest={"parse_timeout": 0, "worker_memory_mb": 0})
    with KnowledgeBase(settings) as kb:
        report = kb.add_site(site.url("/docs/"))
        assert len(report.added) > SECTION_PAGES and kb.search("codeword zxhowto7q", top_k=1)[0].url.endswith("#details")


def test_the_guard_checks_the_address_each_connection_goes_to(site):
    """Not only before a request: the connection itself goes to an address the guard allowed."""
    import asyncio

    import httpx

    from docqa.crawl import AddressGuard
    from docqa.errors import PermissionDeniedError

    async def get(allowed: list[str]) -> int:
        transport = AddressGuard(allowed).transport(httpx.Limits())
        async with httpx.AsyncClient(transport=transport) as client:
            return (await client.get(site.url("/docs/notes.md"))).status_code

    assert asyncio.run(get(["127.0.0.1"])) == 200
    with pytest.raises(PermissionDeniedError, match="internal address"):
        asyncio.run(get(["*"]))
    with pytest.raises(PermissionDeniedError, match="api.ingest_urls"):
        asyncio.run(get(["docs.example.org"]))
