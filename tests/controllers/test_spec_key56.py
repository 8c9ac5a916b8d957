"""`shared_spec_info`'s key (docs/spec56.md), held against the key it replaced (`old_key`: the JSON of the whole
spec with `hostname`, `nodeName`, `volumes` and the containers' `volumeMounts` blanked): specs with equal keys
get the same `spec_info`, compared type-strictly (`1`, `1.0` and `True` are equal to Python's `==` but not to
`spec_info`'s `isinstance` tests); specs the old key shared still share; the memo's answer is always the computed
one; and `spec_info` reads no member the key leaves out."""

from __future__ import annotations

import contextlib
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.types import Obj
from kjobs.controllers.scheduling import shared_spec_info, spec_info, spec_key
from tests.hypothesis_budget import examples

KEY_MEMBERS = frozenset(
    {"affinity", "nodeSelector", "tolerations", "topologySpreadConstraints", "overhead", "containers", "initContainers"}
)
"""The spec's members `spec_key` encodes."""
CONTAINER_MEMBERS = frozenset({"resources", "ports", "restartPolicy"})
"""A container's members `spec_key` encodes."""


def _without_mounts(containers: Any) -> Any:
    if not isinstance(containers, list):
        return containers
    for container in containers:
        if isinstance(container, dict) and "volumeMounts" in container:
            return [{**c, "volumeMounts": None} if isinstance(c, dict) else c for c in containers]
    return containers


def old_key(spec: Obj) -> bytes:
    """The key before stop 56."""
    return orjson.dumps(
        {
            **spec,
            "hostname": None,
            "nodeName": None,
            "volumes": None,
            "containers": _without_mounts(spec.get("containers")),
            "initContainers": _without_mounts(spec.get("initContainers")),
        }
    )


def outcome(spec: Obj) -> tuple[str, str]:
    """`spec_info`'s answer, type-strictly (its `repr` shows `1`, `1.0` and `True` apart), or what it raised."""
    try:
        return ("info", repr(spec_info(spec)))
    except Exception as exc:  # malformed specs the API would refuse: equal keys must fail alike
        return ("raised", type(exc).__name__)


# Small pools, so that two drawn specs often agree, and values `==` equates that JSON does not.
_SCALARS = st.sampled_from([None, 0, 1, 1.0, True, False, 0.0, "", "1", "Always", "a", -1, 80, 80.0])
_QUANTITIES = st.sampled_from(["1", "500m", "1Gi", 1, 1.0, True, 2, "x", None, [], 0.5])
_REQUESTS = st.dictionaries(
    st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu"]), _QUANTITIES
)
_RESOURCES = st.one_of(_SCALARS, st.fixed_dictionaries({}, optional={"requests": st.one_of(_REQUESTS, _SCALARS)}))
_PORT = st.fixed_dictionaries(
    {},
    optional={
        "containerPort": st.sampled_from([80, 8080]),
        "hostPort": st.sampled_from([80, 81, 1, 80.0, True, 0, -1, "80"]),
        "hostIP": st.sampled_from(["", "10.0.0.1", 1]),
        "protocol": st.sampled_from(["TCP", "UDP", None]),
    },
)
_CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b"])},
    optional={
        "resources": _RESOURCES,
        "ports": st.one_of(st.lists(_PORT, max_size=2), st.lists(_SCALARS, max_size=1), _SCALARS),
        "restartPolicy": st.sampled_from(["Always", "Never", None, 1, True]),
        "image": st.sampled_from(["busybox", "alpine"]),
        "volumeMounts": st.sampled_from([None, [], [{"name": "kube-api-access-abcde", "mountPath": "/var/run"}]]),
        "env": st.just([{"name": "X", "value": "1"}]),
    },
)
_CONTAINERS = st.one_of(st.lists(st.one_of(_CONTAINER, _SCALARS), max_size=2), _SCALARS)
_TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(["k", "", 1, True]),
        "operator": st.sampled_from(["Exists", "Equal", None]),
        "value": st.sampled_from(["v", 1, 1.0, True, ""]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", ""]),
        "tolerationSeconds": st.sampled_from([300, 300.0]),
    },
)
_TERM = st.one_of(
    st.fixed_dictionaries({"matchExpressions": st.just([{"key": "k", "operator": "Exists"}])}),
    st.fixed_dictionaries({"topologyKey": st.sampled_from(["zone", 1]), "labelSelector": st.just({})}),
    _SCALARS,
)
_WEIGHTED = st.fixed_dictionaries(
    {},
    optional={
        "weight": st.sampled_from([1, 1.0, True, 0, 5, "1"]),
        "preference": _TERM,
        "podAffinityTerm": _TERM,
    },
)
_SECTION = st.fixed_dictionaries(
    {},
    optional={
        "requiredDuringSchedulingIgnoredDuringExecution": st.one_of(
            st.lists(_TERM, max_size=2),
            st.fixed_dictionaries({"nodeSelectorTerms": st.lists(_TERM, max_size=2)}),
            _SCALARS,
        ),
        "preferredDuringSchedulingIgnoredDuringExecution": st.one_of(st.lists(_WEIGHTED, max_size=2), _SCALARS),
    },
)
_AFFINITY = st.one_of(
    _SCALARS,
    st.fixed_dictionaries(
        {}, optional={"nodeAffinity": _SECTION, "podAffinity": _SECTION, "podAntiAffinity": _SECTION}
    ),
)
_SPREAD = st.fixed_dictionaries(
    {"whenUnsatisfiable": st.sampled_from(["DoNotSchedule", "ScheduleAnyway", 1])},
    optional={"maxSkew": st.sampled_from([1, 1.0, True]), "topologyKey": st.sampled_from(["zone", "host"])},
)
SPECS = st.fixed_dictionaries(
    {},
    optional={
        "containers": _CONTAINERS,
        "initContainers": _CONTAINERS,
        "affinity": _AFFINITY,
        "nodeSelector": st.one_of(st.dictionaries(st.sampled_from(["a", "b"]), _SCALARS, max_size=2), _SCALARS),
        "tolerations": st.one_of(st.lists(st.one_of(_TOLERATION, _SCALARS), max_size=2), _SCALARS),
        "topologySpreadConstraints": st.one_of(st.lists(_SPREAD, max_size=2), _SCALARS),
        "overhead": st.one_of(_REQUESTS, _SCALARS),
        # read by no one in `spec_info`
        "hostname": st.sampled_from(["job-0", "job-1"]),
        "nodeName": st.sampled_from(["", "n1"]),
        "volumes": st.just([{"name": "kube-api-access-fghij"}]),
        "schedulerName": st.sampled_from(["default-scheduler", "other"]),
        "priority": _SCALARS,
        "restartPolicy": st.sampled_from(["Never", "OnFailure"]),
    },
)


_FULL_PORT = st.fixed_dictionaries(
    {
        "hostPort": st.sampled_from([80, 81, 1, True]),
        "hostIP": st.sampled_from(["", "10.0.0.1"]),
        "protocol": st.sampled_from(["TCP", "UDP"]),
    }
)
_FULL_CONTAINER = st.fixed_dictionaries(
    {
        "name": st.just("c"),
        "resources": st.fixed_dictionaries(
            {
                "requests": st.dictionaries(
                    st.sampled_from(["cpu", "memory", "example.com/gpu"]), _QUANTITIES, min_size=1
                )
            }
        ),
        "ports": st.lists(_FULL_PORT, min_size=1, max_size=2),
        "restartPolicy": st.sampled_from(["Always", "Never"]),
    }
)
_FULL_SECTION = st.fixed_dictionaries(
    {
        "requiredDuringSchedulingIgnoredDuringExecution": st.lists(_TERM, min_size=1, max_size=2),
        "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
            st.fixed_dictionaries(
                {"weight": st.sampled_from([1, 5, True]), "preference": _TERM, "podAffinityTerm": _TERM}
            ),
            min_size=1,
            max_size=2,
        ),
    }
)
FULL_SPECS = st.fixed_dictionaries(
    {
        "containers": st.lists(_FULL_CONTAINER, min_size=1, max_size=2),
        "initContainers": st.lists(_FULL_CONTAINER, min_size=1, max_size=2),
        "affinity": st.fixed_dictionaries(
            {
                "nodeAffinity": st.fixed_dictionaries(
                    {
                        "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
                            {"nodeSelectorTerms": st.lists(_TERM, min_size=1, max_size=2)}
                        ),
                        "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
                            st.fixed_dictionaries({"weight": st.sampled_from([1, 5, True]), "preference": _TERM}),
                            min_size=1,
                            max_size=2,
                        ),
                    }
                ),
                "podAffinity": _FULL_SECTION,
                "podAntiAffinity": _FULL_SECTION,
            }
        ),
        "nodeSelector": st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["x", 1, True]), min_size=1),
        "tolerations": st.lists(
            st.fixed_dictionaries(
                {
                    "key": st.sampled_from(["k", 1]),
                    "operator": st.sampled_from(["Exists", "Equal"]),
                    "value": st.sampled_from(["v", 1, True]),
                    "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
                }
            ),
            min_size=1,
            max_size=2,
        ),
        "topologySpreadConstraints": st.lists(_SPREAD, min_size=1, max_size=2),
        "overhead": st.dictionaries(st.sampled_from(["cpu", "memory"]), _QUANTITIES, min_size=1),
        "hostname": st.sampled_from(["job-0", "job-1"]),
    }
)
"""Specs with every member `spec_info` reads, mostly well formed: a change at a random place of one is most often
one `spec_info` tells apart."""


_SWAPS: tuple[tuple[Any, Any], ...] = ((True, 1), (1, 1.0), (1.0, True), (0, False), (False, 0.0), (0.0, 0))
"""Pairs, not a dict: a dict would take `True`, `1` and `1.0` for one key."""


def _swap(value: Any) -> Any:
    """A value `==` takes for `value` but JSON does not (`True` → `1` → `1.0` → `True`, `0` → `False` → `0.0` →
    `0`), else None."""
    if isinstance(value, dict | list):
        return None
    for known, other in _SWAPS:
        if value == known and type(value) is type(known):
            return other
    return None


def _near_copy(draw: st.DrawFn, a: Obj) -> Obj:
    """A near copy of `a`: at one place at any depth, a value type-swapped, redrawn or dropped; or the containers
    and init containers exchanged; or nothing changed."""
    b = orjson.loads(orjson.dumps(a))
    how = draw(st.sampled_from(["swap", "swap", "redraw", "drop", "exchange", "same"]))
    if how == "exchange":
        containers, init = b.pop("containers", None), b.pop("initContainers", None)
        b.update({k: v for k, v in (("containers", init), ("initContainers", containers)) if v is not None})
    elif how != "same" and b:
        # a member, then down a random path, most often to a leaf
        parent: Any = b
        key: Any = draw(st.sampled_from(sorted(b)))
        while parent[key] and isinstance(parent[key], dict | list) and draw(st.integers(0, 3)):
            parent = parent[key]
            key = draw(st.sampled_from(sorted(parent) if isinstance(parent, dict) else range(len(parent))))
        if how == "swap":
            parent[key] = _swap(parent[key])
        elif how == "redraw":
            parent[key] = draw(_SCALARS)
        elif isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
    return b


@st.composite
def spec_variants(draw: st.DrawFn) -> tuple[Obj, list[Obj]]:
    """A spec and four near copies of it."""
    a = draw(FULL_SPECS if draw(st.booleans()) else SPECS)
    return a, [_near_copy(draw, a) for _ in range(4)]


@settings(max_examples=examples(1200), deadline=None)
@given(spec_variants())
def test_equal_keys_read_alike(variants: tuple[Obj, list[Obj]]) -> None:
    """Equal new keys, equal type-strict `spec_info` (or the same exception); equal old keys, equal new keys."""
    a, others = variants
    key, read = spec_key(a), outcome(a)
    for b in others:
        if spec_key(b) == key:
            assert outcome(b) == read, (a, b)
        if old_key(a) == old_key(b):
            assert spec_key(b) == key, (a, b)


def test_keys_tell_apart_what_spec_info_tells_apart() -> None:
    """The cases a careless key gets wrong: values `==` equates, and a container moved to `initContainers`."""
    cases: list[tuple[Obj, Obj]] = [
        ({"containers": [{}]}, {"initContainers": [{}]}),
        ({"containers": [{"ports": [{"hostPort": 80}]}]}, {"containers": [{"ports": [{"hostPort": True}]}]}),
        ({"containers": [{"ports": [{"hostPort": 80}]}]}, {"containers": [{"ports": [{"hostPort": 80.0}]}]}),
        ({"tolerations": [{"key": "k", "value": 1}]}, {"tolerations": [{"key": "k", "value": True}]}),
        ({"nodeSelector": {"a": 1}}, {"nodeSelector": {"a": 1.0}}),
        ({"initContainers": [{"restartPolicy": "Always", "ports": [{"hostPort": 1}]}]}, {"initContainers": [{}]}),
        ({"overhead": {"cpu": "1"}}, {"overhead": {"cpu": "2"}}),
    ]
    for a, b in cases:
        assert outcome(a) != outcome(b), (a, b)
        assert spec_key(a) != spec_key(b), (a, b)
    pod = {"containers": [{"name": "main", "image": "busybox", "volumeMounts": [{"name": "kube-api-access-abcde"}]}]}
    other = {**pod, "hostname": "job-1", "nodeName": "n1", "volumes": [{"name": "kube-api-access-fghij"}]}
    other["containers"] = [{**pod["containers"][0], "volumeMounts": [{"name": "kube-api-access-fghij"}]}]
    assert spec_key(pod) == spec_key(other)


@settings(max_examples=examples(400), deadline=None)
@given(spec_variants())
def test_the_memo_is_never_wrong(variants: tuple[Obj, list[Obj]]) -> None:
    """Whatever was remembered before, the shared answer is the computed one, type-strictly."""
    for spec in [variants[0], *variants[1]]:
        try:
            shared = ("info", repr(shared_spec_info(spec)))
        except Exception as exc:
            shared = ("raised", type(exc).__name__)
        assert shared == outcome(spec)


class _Recording(dict[str, Any]):
    """A dict that notes each member read from it (`*`: all of them)."""

    def __init__(self, values: Obj, seen: set[str]) -> None:
        super().__init__(values)
        self.seen = seen

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.seen.add(str(key))
        return super().__contains__(key)

    def __iter__(self) -> Any:
        self.seen.add("*")
        return super().__iter__()

    def keys(self) -> Any:
        self.seen.add("*")
        return super().keys()

    def items(self) -> Any:
        self.seen.add("*")
        return super().items()

    def values(self) -> Any:
        self.seen.add("*")
        return super().values()


@settings(max_examples=examples(400), deadline=None)
@given(SPECS)
def test_spec_info_reads_only_what_the_key_holds(spec: Obj) -> None:
    """A member `spec_info` came to read would have to join the key: the reads of the spec and of each container,
    recorded, stay within the key's members."""
    top: set[str] = set()
    inner: set[str] = set()
    recorded = _Recording(spec, top)
    for member in ("containers", "initContainers"):
        containers = spec.get(member)
        if isinstance(containers, list):
            dict.__setitem__(recorded, member, [_Recording(c, inner) if isinstance(c, dict) else c for c in containers])
    with contextlib.suppress(Exception):  # a malformed spec: what it read before failing still counts
        spec_info(recorded)
    assert top <= KEY_MEMBERS
    assert inner <= CONTAINER_MEMBERS
