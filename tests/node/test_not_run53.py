"""Stop 53: `handlers.not_run` makes its probe comprehension only for a container that names a probe and its hook
comprehension only for one with a `lifecycle` (docs/node53.md). Stop 52's form is kept here; hypothesis makes init
and regular containers with and without probes and hooks (runnable, `grpc`, not maps, empty), for both runtimes:
the same list."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.node.handlers import _HOOKS, not_run
from kjobs.node.probing import PROBES, RUNNABLE_HOOK_ACTIONS, RUNNABLE_PROBE_ACTIONS, action_of
from tests.hypothesis_budget import examples


def old_not_run(pod: Obj, *, runs_handlers: bool = True) -> list[str]:
    """Stop 52's `not_run`."""
    spec = pod.get("spec") or {}
    found: list[str] = []
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            names = [
                probe
                for probe in PROBES
                if isinstance(container.get(probe), dict)
                and not (runs_handlers and action_of(container[probe], RUNNABLE_PROBE_ACTIONS))
            ]
            lifecycle = container.get("lifecycle") or {}
            names += [
                f"lifecycle.{hook}"
                for hook in _HOOKS
                if isinstance(lifecycle.get(hook), dict)
                and not (runs_handlers and action_of(lifecycle[hook], RUNNABLE_HOOK_ACTIONS))
            ]
            if names:
                found.append(f"{', '.join(names)} (container {container.get('name', '')})")
    return found


_handler = st.sampled_from([{}, {"exec": {"command": ["x"]}}, {"grpc": {"port": 1}}, {"sleep": {"seconds": 1}}, "x"])


def _container(name: str) -> Any:
    return st.builds(
        lambda probes, lifecycle: {"name": name, "image": "x", **probes, **lifecycle},
        st.dictionaries(st.sampled_from(PROBES), _handler, max_size=2),
        st.one_of(
            st.just({}),
            st.builds(lambda hooks: {"lifecycle": hooks}, st.dictionaries(st.sampled_from(_HOOKS), _handler)),
            st.just({"lifecycle": None}),
        ),
    )


@settings(max_examples=examples(1000), deadline=None)
@given(
    st.lists(_container("a"), max_size=2),
    st.lists(_container("i"), max_size=2),
    st.booleans(),
)
def test_not_run_is_stop_52s(containers: list[Obj], init: list[Obj], runs_handlers: bool) -> None:
    pod = {"spec": {"containers": containers, "initContainers": init}}
    assert not_run(pod, runs_handlers=runs_handlers) == old_not_run(pod, runs_handlers=runs_handlers)
