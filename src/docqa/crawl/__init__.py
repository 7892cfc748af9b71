"""Documentation sites as sources: discover a site's pages, fetch them politely, keep them in step.

    urls.py      folding URLs to one form, the crawl's prefix
    discover.py  llms.txt, sitemaps, a page's links and canonical URL
    robots.py    robots.txt (protego)
    guard.py     the hosts and addresses a server may reach (api.ingest_urls)
    fetch.py     httpx requests: conditional, paced, bounded, redirects by hand
    crawler.py   one crawl: discovery, breadth-first fetching, progress

The pages become documents in docqa.ingest.web; nothing here touches the store.
"""

from docqa.crawl.crawler import Crawler, CrawlStats
from docqa.crawl.fetch import CrawlLimits, Fetched, Validators
from docqa.crawl.guard import AddressGuard
from docqa.crawl.urls import fold, is_url, prefix_of

__all__ = ["AddressGuard", "CrawlLimits", "CrawlStats", "Crawler", "Fetched", "Validators", "fold", "is_url", "prefix_of"]
