"""Suite-wide: the cache mutation detector is on, and every test fails if it changed a shared watch object."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from kjobs.store import mutation
from tests.hypothesis_budget import default_examples

mutation.enable()

settings.register_profile("suite", max_examples=default_examples())
settings.load_profile("suite")  # a generated-input test that names no count (tests/hypothesis_budget.py)


@pytest.fixture(autouse=True)
def _no_cache_mutation() -> Iterator[None]:
    mutation.check()  # what earlier tests left is theirs
    yield
    mutation.check()


def _module_rank(item: pytest.Item) -> int:
    if item.get_closest_marker("slow") is not None:
        return 0
    return 1 if item.get_closest_marker("e2e") is not None else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files with a `slow` test first, then those with an end-to-end test, each group in collection order.

    `--dist loadfile` hands the workers whole files in the order collected (pyproject's `--no-loadscope-reorder`;
    xdist would otherwise send the files with the most tests first): a long file sent last ran alone at the end of
    the run, the other workers idle (docs/ci-time.md, "Stop 56")."""
    rank: dict[str, int] = {}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        rank[module] = min(rank.get(module, 2), _module_rank(item))
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])
