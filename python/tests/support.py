"""Paths for the tests: the repository's fixtures and the third-party suites vendored in it
(``tests/data``)."""

from __future__ import annotations

from pathlib import Path

import pytest

PYTHON = Path(__file__).resolve().parents[1]
REPO = PYTHON.parent
FIXTURES = REPO / "fixtures"
DATA = REPO / "tests" / "data"


def data_path(rel: str) -> Path:
    """A path under the repository's vendored third-party data (``tests/data``); a missing
    path fails the test (it is part of the checkout)."""
    p = DATA / rel
    if not p.exists():
        pytest.fail(f"{p} is missing: the suites and corpora are vendored under tests/data")
    return p
