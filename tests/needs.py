"""Tests that need real outside programs fail loudly when one is missing.

A silently skipped test would count as passing; `scripts/setup.sh` installs everything these
tests need, so a missing program is a broken setup, not a reason to skip.
"""

from __future__ import annotations

import shutil

import pytest


def need(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.fail(
            f"missing programs {missing}: run ./scripts/setup.sh (installs the Debian packages)",
            pytrace=False,
        )
