"""Suite-wide: the cache mutation detector is on, and every test fails if it changed a shared watch object."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kjobs.store import mutation

mutation.enable()


@pytest.fixture(autouse=True)
def _no_cache_mutation() -> Iterator[None]:
    mutation.check()  # what earlier tests left is theirs
    yield
    mutation.check()
