"""`settle_heap` (the end of `kjobs up`'s and `kjobs node join`'s start): start-up's heap goes to the permanent
generation as it is, with no full collection first, which is sound only while start-up leaves little garbage."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import pytest

from kjobs.cli.up import settle_heap
from kjobs.cluster import INTERPRETER_FROZEN

START_UP_GARBAGE_BOUND = 2_000
"""Objects start-up's imports may leave in reference cycles (about 740 measured: the first classes of
`dataclass(slots=True)` and the enums the standard library converts), all frozen with the heap."""


def test_settle_heap_freezes_the_heap_without_walking_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def collect(*args: object) -> int:
        raise AssertionError("a full collection at settle walks the whole start-up heap")

    monkeypatch.setattr(gc, "collect", collect)
    assert gc.get_freeze_count() <= INTERPRETER_FROZEN
    try:
        settle_heap()
        assert gc.get_freeze_count() > INTERPRETER_FROZEN
    finally:
        gc.unfreeze()


def test_the_start_up_imports_leave_little_garbage_to_freeze() -> None:
    """What `kjobs up` imports before it is ready, in a fresh interpreter with the collector off: the garbage a
    collection then finds is what `settle_heap` freezes for the process's life."""
    script = textwrap.dedent(
        """
        import gc
        gc.disable()
        import kjobs.cli.up, kjobs.server.runner, kjobs.cluster, kjobs.server.app, kjobs.node.agent
        import kjobs.node.process_runtime, kjobs.controllers.leaderelection
        print(gc.collect())
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert 0 < int(result.stdout) < START_UP_GARBAGE_BOUND
