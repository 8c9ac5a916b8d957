"""How many examples a generated-input test draws in a run of the suite.

Most of the suite's generated-input tests hold a rewritten function against the form it replaced (an oracle kept
in the test, issue #15). They were written to draw hundreds to thousands of examples each; drawn in full, they are
a fifth of the suite's CPU time on the two-core machines CI runs on, where the end-to-end tests beside them need the
cores too (docs/ci-time.md). A run of the suite draws a quarter of each count, at least 100 (or the count itself
when smaller); `KJOBS_EXAMPLES_SCALE=1` draws them in full, and a larger scale explores further."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("KJOBS_EXAMPLES_SCALE", "0.25"))
"""The share of each test's written count that a run draws."""


def examples(written: int) -> int:
    """The `max_examples` of a test written for `written` examples, scaled by `SCALE`."""
    return max(min(written, 100), round(written * SCALE))
