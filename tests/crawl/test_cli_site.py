"""`docqa add URL` and `docqa watch URL --every` from the command line, against the loopback docs site."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from crawl.site import SECTIONS

pytestmark = pytest.mark.slow

ENV = {"DOCQA_CRAWL__REQUEST_TIMEOUT": "1", "DOCQA_CRAWL__MAX_PAGE_MB": "1", "DOCQA_CRAWL__RATE": "0",
       "DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none"}


def _env() -> dict:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("DOCQA_")}, **ENV}


def docqa(kb, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "docqa", "--kb", str(kb), *args], capture_output=True, text=True,
                          env=_env(), timeout=300)


def test_add_a_site_and_search_it_with_page_urls(tmp_path, site):
    kb = tmp_path / "kb.db"
    proc = docqa(kb, "add", site.url("/docs/"), "--json")
    assert proc.returncode == 1  # pages failed (the 404, the slow and the huge page): listed, the rest indexed
    report = json.loads(proc.stdout)
    assert len(report["added"]) > sum(SECTIONS.values()) and report["crawl"]["found"] >= len(report["added"])
    assert {f["path"] for f in report["failed"]} >= {site.url("/docs/missing.html"), site.url("/docs/slow.html")}
    hits = json.loads(docqa(kb, "search", "codeword zxtutorial3q", "--json").stdout)
    assert hits[0]["url"] == site.url("/docs/tutorial/page3.html#details")
    again = docqa(kb, "add", site.url("/docs/"))
    assert again.returncode == 0 and "unchanged" in again.stdout and "found" in again.stdout
    removed = docqa(kb, "remove", site.url("/docs/guide/"), "--json")
    assert removed.returncode == 0 and len(json.loads(removed.stdout)) == SECTIONS["guide"] + 1


def test_watch_a_site_crawls_it_again_until_stopped(tmp_path, site):
    kb = tmp_path / "kb.db"
    lines = []
    with subprocess.Popen([sys.executable, "-m", "docqa", "--kb", str(kb), "watch", site.url("/docs/"), "--every", "1s"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env(),
                          # a suite run in the background ignores SIGINT, and exec keeps it ignored: give it back
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as proc:
        try:
            for line in proc.stdout:  # until the second crawl's line: every page indexed before answers 304
                lines.append(line)
                if sum("found" in x for x in lines) >= 2:
                    break
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    crawls = [x for x in lines if "found" in x]
    assert len(crawls) == 2 and "unchanged 0" in crawls[0] and "fetched 0" not in crawls[0]
    assert site.statuses(304)


def test_watch_a_site_needs_every(tmp_path, site):
    proc = docqa(tmp_path / "kb.db", "watch", site.url("/docs/"))
    assert proc.returncode == 2 and "--every" in proc.stderr
