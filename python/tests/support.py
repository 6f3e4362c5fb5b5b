"""Shared paths for the tests: the repository's fixtures and the shared suites beside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PYTHON = Path(__file__).resolve().parents[1]
REPO = PYTHON.parent
FIXTURES = REPO / "fixtures"
SHARED = Path(os.environ.get("JSONGATE_SHARED", REPO.parent / "shared"))


def shared(rel: str) -> Path:
    """A path under the shared folder; skips the test when it is missing, unless
    JSONGATE_REQUIRE_SHARED is set (as CI sets it), where a missing folder fails."""
    p = SHARED / rel
    if not p.exists():
        if os.environ.get("JSONGATE_REQUIRE_SHARED"):
            pytest.fail(f"{p} is missing (JSONGATE_REQUIRE_SHARED is set)")
        pytest.skip(f"{p} is missing")
    return p
