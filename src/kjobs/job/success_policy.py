"""`spec.successPolicy` (Indexed Jobs): a Job may succeed once chosen indexes, or enough of them, succeeded."""

from __future__ import annotations

from kjobs.api.types import Obj
from kjobs.job.intervals import Intervals


def match_success_policy(policy: Obj | None, completions: int, succeeded: Intervals) -> str | None:
    """The SuccessCriteriaMet message (`Matched rules at index <i>`) for the first matching rule, else None."""
    if not policy or succeeded.total() == 0:
        return None
    for index, rule in enumerate(policy.get("rules") or ()):
        count = rule.get("succeededCount")
        wanted_text = rule.get("succeededIndexes")
        if wanted_text is not None:
            wanted = Intervals.parse(wanted_text, completions)
            if wanted.total() == 0:
                continue
            overlap = _overlap(wanted, succeeded)
            if overlap == wanted.total() or (count is not None and overlap >= count):
                return f"Matched rules at index {index}"
        elif count is not None and succeeded.total() >= count:
            return f"Matched rules at index {index}"
    return None


def _overlap(a: Intervals, b: Intervals) -> int:
    total, i, j = 0, 0, 0
    sa, sb = a.spans, b.spans
    while i < len(sa) and j < len(sb):
        lo, hi = max(sa[i][0], sb[j][0]), min(sa[i][1], sb[j][1])
        if hi >= lo:
            total += hi - lo + 1
        if sa[i][1] < sb[j][1]:
            i += 1
        else:
            j += 1
    return total
