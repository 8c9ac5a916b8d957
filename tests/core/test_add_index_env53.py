"""Stop 53: `_add_index_env` looks for a container's own `JOB_COMPLETION_INDEX` in a loop, not `any` over a
generator (docs/node53.md). Stop 52's form is kept here; hypothesis makes init and regular containers whose `env`
is missing, null, empty, or holds the variable (first, later, twice) or others: the same pod spec."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION, JOB_COMPLETION_INDEX_ENV
from kjobs.api.types import Obj
from kjobs.job.sync import _add_index_env
from tests.hypothesis_budget import examples


def old_add_index_env(pod_spec: Obj) -> None:
    """Stop 52's `_add_index_env`."""
    field_path = f"metadata.labels['{JOB_COMPLETION_INDEX_ANNOTATION}']"
    for key in ("initContainers", "containers"):
        for container in pod_spec.get(key) or ():
            env = list(container.get("env") or ())
            if any(v.get("name") == JOB_COMPLETION_INDEX_ENV for v in env):
                continue
            env.append({"name": JOB_COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": field_path}}})
            container["env"] = env


_env = st.one_of(
    st.none(),
    st.lists(
        st.builds(lambda n: {"name": n, "value": "v"}, st.sampled_from([JOB_COMPLETION_INDEX_ENV, "A", "B"])),
        max_size=3,
    ),
)
_containers = st.lists(
    st.builds(lambda env: {"name": "c"} if env is None else {"name": "c", "env": env}, _env), max_size=2
)


@settings(max_examples=examples(800), deadline=None)
@given(_containers, st.one_of(st.none(), _containers))
def test_add_index_env_is_stop_52s(containers: list[Obj], init: list[Obj] | None) -> None:
    spec: Obj = {"containers": containers}
    if init is not None:
        spec["initContainers"] = init
    old = copy.deepcopy(spec)
    _add_index_env(spec)
    old_add_index_env(old)
    assert spec == old
