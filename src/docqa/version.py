"""The package version, read from the installed package's metadata (a leaf: imports nothing of ours).

pyproject.toml is the only place the number is written; a source tree that was never installed
reports "0+unknown".
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def installed_version(distribution: str = "docqa") -> str:
    """The installed version of `distribution`, or "0+unknown" when it is not installed."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "0+unknown"


__version__ = installed_version()
