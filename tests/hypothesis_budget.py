"""How many examples a generated-input test draws in a run of the suite.

Most of the suite's generated-input tests hold a rewritten function against the form it replaced (an oracle kept
in the test, issue #15). They were written to draw hundreds to thousands of examples each; drawn in full, they are
a fifth of the suite's CPU time on the two-core machines CI runs on, where the end-to-end tests beside them need the
cores too (docs/ci-time.md). A run of the suite draws a tenth of each count, at least 50 (or the count itself when
smaller), and a test that names no count draws 50 (the `suite` profile, tests/conftest.py) rather than hypothesis'
100: each CI run draws new examples (it keeps no example database), so the runs together go on exploring.
`KJOBS_EXAMPLES_SCALE=1` draws every written count (and hypothesis' default for the rest), a larger scale explores
further: for a change to the code an oracle holds."""

from __future__ import annotations

import os

SCALE = float(os.environ.get("KJOBS_EXAMPLES_SCALE", "0.1"))
"""The share of each test's written count that a run draws."""

FLOOR = 50
"""The fewest examples a scaled count comes to (a written count below it is drawn whole)."""


def examples(written: int) -> int:
    """The `max_examples` of a test written for `written` examples, scaled by `SCALE`."""
    return max(min(written, FLOOR), round(written * SCALE))


def default_examples() -> int:
    """The `max_examples` of a test that names none: hypothesis' 100, scaled (at least `FLOOR`)."""
    return examples(100)
