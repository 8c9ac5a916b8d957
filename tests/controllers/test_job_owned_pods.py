"""The Job controller's per-Job pod set stays in name order as pods come, change and go."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.controllers.job import _OwnedPods

_ops = st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.integers(0, 3)), max_size=80)


@settings(max_examples=200, deadline=None)
@given(ops=_ops)
def test_pods_come_out_in_name_order_with_their_newest_versions(ops: list[tuple[bool, int, int]]) -> None:
    owned, model = _OwnedPods(), {}
    for present, n, version in ops:
        uid, pod = f"uid-{n}", {"metadata": {"name": f"pod-{n * 7 % 31}", "uid": f"uid-{n}"}, "v": version}
        if present:
            owned.observe(uid, pod)
            model[uid] = pod
        else:
            owned.observe(uid, None)
            model.pop(uid, None)
    expected = sorted(model.values(), key=lambda p: (p["metadata"]["name"], p["metadata"]["uid"]))
    assert owned.in_name_order() == expected
