"""robots.txt through protego (the parser Scrapy uses): allowed URLs, Crawl-delay, Sitemap lines."""

from __future__ import annotations

from dataclasses import dataclass, field

from docqa.errors import MissingExtraError

INSTALL = "pip install 'docqa[crawl]'"


@dataclass(slots=True)
class Robots:
    """What a site's robots.txt allows this crawler."""

    rules: object | None = None  # a protego.Protego, or None: everything allowed
    agent: str = "*"
    sitemaps: list[str] = field(default_factory=list)
    delay: float = 0.0
    deny: bool = False

    @classmethod
    def allow_all(cls) -> Robots:
        return cls()

    @classmethod
    def deny_all(cls) -> Robots:
        return cls(deny=True)

    @classmethod
    def parse(cls, text: str, agent: str) -> Robots:
        try:
            from protego import Protego
        except ImportError as exc:
            raise MissingExtraError("Crawling a site (robots.txt)", INSTALL) from exc
        rules = Protego.parse(text)
        delay = rules.crawl_delay(agent) or 0.0
        rate = rules.request_rate(agent)
        if rate is not None and rate.requests:
            delay = max(delay, rate.seconds / rate.requests)
        return cls(rules, agent, list(rules.sitemaps), float(delay))

    def allowed(self, url: str) -> bool:
        if self.deny:
            return False
        return self.rules is None or bool(self.rules.can_fetch(url, self.agent))  # type: ignore[attr-defined]
