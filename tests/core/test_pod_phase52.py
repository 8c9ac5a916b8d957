"""Stop 52: `kjobs.job.pods.phase` hands a str phase back as it is, without a call to `str`. The same answer as the
form it replaced for every status a pod may carry, the phase absent, null, empty, or not a string at all."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kjobs.job.pods import phase

PHASES = st.one_of(
    st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown", ""]),
    st.text(max_size=6),
    st.none(),
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=False),
)


def old_phase(pod: Any) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


@given(value=PHASES, shape=st.sampled_from(["phase", "no phase", "empty status", "null status", "no status"]))
def test_phase_as_before(value: Any, shape: str) -> None:
    pod: dict[str, Any] = {
        "phase": {"status": {"phase": value, "conditions": []}},
        "no phase": {"status": {"conditions": []}},
        "empty status": {"status": {}},
        "null status": {"status": None},
        "no status": {},
    }[shape]
    assert phase(pod) == old_phase(pod)
    assert type(phase(pod)) is str
