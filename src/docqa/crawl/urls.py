"""URLs as the crawler keys them: fragments dropped, query strings sorted, within one prefix."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
# query parameters that never change a page's content: folded away so one page is one document
_TRACKING = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid", "ref_src")


def is_url(text: str) -> bool:
    """True for an http(s) URL with a host (what `docqa add` crawls instead of reading a path)."""
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def fold(url: str, base: str | None = None) -> str | None:
    """The one form of a page's URL: absolute, lower-case scheme and host, no default port, no
    fragment, query parameters sorted and tracking ones dropped; None for anything not http(s)."""
    try:
        parts = urlsplit(urljoin(base, url.strip()) if base else url.strip())
        port = parts.port
    except ValueError:  # a malformed port or IPv6 literal
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host if port in (None, _DEFAULT_PORTS[parts.scheme]) else f"{host}:{port}"
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if not k.lower().startswith(_TRACKING)))
    return urlunsplit((parts.scheme, netloc, parts.path or "/", query, ""))


def fragment(url: str) -> str:
    """The fragment of a URL ('' when none)."""
    return urlsplit(url).fragment


def prefix_of(start: str) -> str:
    """The part of the site a crawl keeps to: the start URL's folder (`…/docs/` for `…/docs/index.html`)."""
    folded = fold(start) or start
    parts = urlsplit(folded)
    folder = parts.path if parts.path.endswith("/") else parts.path.rsplit("/", 1)[0] + "/"
    return urlunsplit((parts.scheme, parts.netloc, folder, "", ""))


def within(url: str, prefix: str) -> bool:
    """True when a folded URL lies under the prefix (the prefix's folder itself included)."""
    return url.startswith(prefix) or url == prefix.rstrip("/")


def site_root(url: str) -> str:
    """`scheme://host[:port]/` of a URL."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/", "", ""))
