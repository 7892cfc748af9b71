"""The one clock and the one version."""

from __future__ import annotations

import re
from datetime import datetime, UTC

import docqa
from docqa.clock import now
from docqa.version import __version__, installed_version


def test_now_is_iso_utc_with_milliseconds():
    stamp = now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", stamp), stamp
    assert abs((datetime.now(UTC) - datetime.fromisoformat(stamp)).total_seconds()) < 5
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", now("seconds"))


def test_one_version():
    assert docqa.__version__ == __version__ == installed_version()
    assert installed_version("docqa-no-such-distribution") == "0+unknown"
