"""The linters, as CI runs them: `ruff check` over the code, tests, benchmarks and tools, and `mypy` over
src/docqa (both configured in pyproject.toml).  Skipped with the install command when the test extra's
linters are missing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(tool) is None:
        pytest.skip(f"{tool} is not installed: pip install -e '.[test]'")
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    done = _run("ruff", "check", "src", "tests", "benchmarks", "tools")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow  # a minute or two on a busy machine
def test_mypy_is_clean():
    done = _run("mypy")  # files, plugins and options: [tool.mypy] in pyproject.toml
    assert done.returncode == 0, done.stdout + done.stderr
