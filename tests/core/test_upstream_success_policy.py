"""pkg/controller/job/success_policy_test.go at 46f9e4b41f6e, row by row (docs/upstream-job-utils.md).

`TestMatchSuccessPolicy` runs `kjobs.job.success_policy.match_success_policy` with the row's policy, completions
and succeeded intervals. The two rows upstream runs with the JobSuccessPolicy gate off (GA and locked on in the
Kubernetes kjobs follows) expect no match either way: one has no policy, the other no succeeded index.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.job.intervals import Intervals
from kjobs.job.success_policy import match_success_policy

MATCHED_0 = "Matched rules at index 0"


def rules(*items: dict[str, Any]) -> dict[str, Any]:
    """A `successPolicy` with these rules."""
    return {"rules": list(items)}


# (successPolicy, completions, succeededIndexes, wanted message or None for "not met")
ROWS: dict[str, tuple[dict[str, Any] | None, int, list[tuple[int, int]], str | None]] = {
    "JobSuccessPolicy is disabled": (None, 10, [(0, 0)], None),
    "successPolicy is null": (None, 10, [(0, 0)], None),
    "any rules are nothing": (rules(), 10, [(0, 0)], None),
    "rules.succeededIndexes is invalid format": (rules({"succeededIndexes": "invalid-form"}), 10, [(0, 0)], None),
    "rules.succeededIndexes is specified; succeededIndexes matched rules": (
        rules({"succeededIndexes": "0-2"}),
        10,
        [(0, 2), (4, 7)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules": (
        rules({"succeededIndexes": "3"}),
        10,
        [(0, 2)],
        None,
    ),
    "rules.succeededCount is specified; succeededIndexes matched rules": (
        rules({"succeededCount": 2}),
        10,
        [(0, 2)],
        MATCHED_0,
    ),
    "rules.succeededCount is specified; succeededIndexes didn't match rules": (
        rules({"succeededCount": 4}),
        10,
        [(0, 2)],
        None,
    ),
    "multiple rules; rules.succeededIndexes is specified; succeededIndexes met one of rules": (
        rules({"succeededIndexes": "9"}, {"succeededIndexes": "4,6"}),
        10,
        [(0, 2), (4, 7)],
        "Matched rules at index 1",
    ),
    "multiple rules; rules.succeededIndexes is specified; succeededIndexes met all rules": (
        rules({"succeededIndexes": "0,1"}, {"succeededIndexes": "5"}),
        10,
        [(0, 2), (4, 7)],
        MATCHED_0,
    ),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes met all rules": (
        rules({"succeededIndexes": "3-6", "succeededCount": 2}),
        10,
        [(0, 2), (4, 7)],
        MATCHED_0,
    ),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes didn't match rules": (
        rules({"succeededIndexes": "3-6", "succeededCount": 2}),
        10,
        [(0, 2), (6, 7)],
        None,
    ),
    "rules.succeededIndexes is specified; succeededIndexes are nothing": (
        rules({"succeededCount": 4}),
        10,
        [],
        None,
    ),
    "rules.succeededIndexes is specified; succeededIndexes matched rules; rules is proper subset of succeededIndexes": (
        rules({"succeededIndexes": "2-4,6-8"}),
        10,
        [(1, 5), (6, 9)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes matched rules; rules equals succeededIndexes": (
        rules({"succeededIndexes": "2-4,6-9"}),
        10,
        [(2, 4), (6, 9)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes matched rules; rules is subset of succeededIndexes": (
        rules({"succeededIndexes": "2-4,8-12"}),
        10,
        [(2, 5), (7, 15)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules is an empty set": (
        rules({"succeededIndexes": ""}),
        10,
        [(1, 3)],
        None,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; succeededIndexes is an empty set": (
        rules({"succeededIndexes": ""}),
        10,
        [],
        None,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules and succeededIndexes are "
    "empty set": (rules({"succeededIndexes": ""}), 10, [], None),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; all elements of "
    "rules.succeededIndexes aren't included in succeededIndexes": (
        rules({"succeededIndexes": "10-12,14-16"}),
        10,
        [(1, 3), (5, 7)],
        None,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at "
    "first": (rules({"succeededIndexes": "1-3,5-7"}), 10, [(2, 4), (6, 8)], None),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
    "succeededIndexes at first": (
        rules({"succeededIndexes": "1-3,5-7", "succeededCount": 4}),
        10,
        [(2, 4), (6, 8)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at "
    "last": (rules({"succeededIndexes": "2-4,6-9"}), 10, [(1, 3), (5, 7)], None),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
    "succeededIndexes at last": (
        rules({"succeededIndexes": "2-4,6-9", "succeededCount": 4}),
        10,
        [(1, 3), (5, 7)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules completely overlaps "
    "succeededIndexes": (rules({"succeededIndexes": "0-4,6-9"}), 10, [(1, 3), (7, 8)], None),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules "
    "completely overlaps succeededIndexes": (
        rules({"succeededIndexes": "0-4,6-9", "succeededCount": 5}),
        10,
        [(1, 3), (7, 8)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps multiple "
    "succeededIndexes at last": (rules({"succeededIndexes": "0-6,8-9"}), 10, [(1, 3), (5, 9)], None),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
    "multiple succeededIndexes at last": (
        rules({"succeededIndexes": "0-6,8-9", "succeededCount": 7}),
        10,
        [(1, 3), (5, 9)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; rules overlaps succeededIndexes at "
    "first, and rules equals succeededIndexes at last": (
        rules({"succeededIndexes": "0-5,7-9"}),
        10,
        [(1, 5), (7, 10)],
        None,
    ),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; rules overlaps "
    "succeededIndexes at first, and rules equals succeededIndexes at last": (
        rules({"succeededIndexes": "0-5,7-9", "succeededCount": 8}),
        10,
        [(1, 5), (7, 10)],
        MATCHED_0,
    ),
    "rules.succeededIndexes is specified; succeededIndexes didn't match rules; the first rules overlaps "
    "succeededIndexes at first": (rules({"succeededIndexes": "0-3,6-9"}), 10, [(1, 10)], None),
    "rules.succeededIndexes and rules.succeededCount are specified; succeededIndexes matched rules; the first rules "
    "overlaps succeededIndexes at first": (
        rules({"succeededIndexes": "0-3,6-9", "succeededCount": 7}),
        10,
        [(1, 10)],
        MATCHED_0,
    ),
}


@pytest.mark.parametrize(("policy", "completions", "succeeded", "want"), list(ROWS.values()), ids=list(ROWS))
def test_match_success_policy(
    policy: dict[str, Any] | None, completions: int, succeeded: list[tuple[int, int]], want: str | None
) -> None:
    """`matchSuccessPolicy`: the first rule the succeeded indexes meet, by its position (SuccessCriteriaMet's
    message), or none."""
    assert match_success_policy(policy, completions, Intervals(succeeded)) == want
