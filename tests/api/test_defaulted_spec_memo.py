"""Stop 46: a created pod's spec is defaulted once per distinct spec (hostname aside), and later pods get the
remembered result decoded (`default_api_pod_in_place`).

Hypothesis makes pod specs with what the defaults read and set (containers and init containers with images of
every pull-policy kind, ports, env field refs, resources with limits only, probes and lifecycle handlers, volumes
of several sources, `hostNetwork`, set and unset scalars, values of other JSON types where maps and lists belong)
and a hostname or none; each is defaulted through the memo twice (a miss, then a hit with another hostname) and
once plainly: the same JSON, key order included, every time, and each result an object of its own.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import defaults
from kjobs.api.defaults import default_api_pod_in_place, default_pod_in_place
from kjobs.memo import Memo
from tests.hypothesis_budget import examples

odd = st.one_of(st.none(), st.just(""), st.integers(0, 3), st.just([]), st.just({}), st.just("x"))
images = st.sampled_from(["busybox", "busybox:latest", "busybox:1.36", "r.io/a@sha256:" + "0" * 64, ""])
probe = st.fixed_dictionaries(
    {},
    optional={
        "httpGet": st.fixed_dictionaries({"port": st.just(80)}, optional={"path": st.just("/x")}),
        "exec": st.just({"command": ["true"]}),
        "periodSeconds": st.one_of(st.just(0), st.just(5)),
    },
)
container = st.fixed_dictionaries(
    {"name": st.sampled_from(["main", "side"])},
    optional={
        "image": images,
        "ports": st.lists(
            st.fixed_dictionaries({"containerPort": st.integers(1, 90)}, optional={"protocol": st.just("UDP")}),
            max_size=2,
        ),
        "env": st.lists(
            st.fixed_dictionaries(
                {"name": st.just("I")},
                optional={"valueFrom": st.just({"fieldRef": {"fieldPath": "metadata.name"}})},
            ),
            max_size=2,
        ),
        "resources": st.one_of(
            odd,
            st.fixed_dictionaries(
                {}, optional={"limits": st.just({"cpu": "1"}), "requests": st.just({"memory": "1Mi"})}
            ),
        ),
        "livenessProbe": probe,
        "lifecycle": st.just({"preStop": {"httpGet": {"port": 1}}}),
        "imagePullPolicy": st.sampled_from(["Never", ""]),
    },
)
volume = st.fixed_dictionaries(
    {"name": st.just("v")},
    optional={
        "secret": st.just({"secretName": "s"}),
        "emptyDir": st.one_of(st.just({}), st.just({"sizeLimit": "1024Mi"})),
        "projected": st.just({"sources": [{"serviceAccountToken": {"path": "t"}}]}),
        "hostPath": st.just({"path": "/x"}),
    },
)
specs = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.one_of(st.lists(container, max_size=2), odd),
        "initContainers": st.lists(container, max_size=1),
        "volumes": st.lists(volume, max_size=2),
        "restartPolicy": st.sampled_from(["Never", "", "OnFailure"]),
        "hostNetwork": st.booleans(),
        "terminationGracePeriodSeconds": st.one_of(st.none(), st.just(5)),
        "securityContext": odd,
        "subdomain": st.just("s"),
        "enableServiceLinks": st.booleans(),
    },
)
hostnames = st.one_of(st.none(), st.just("bench-0"), st.just(""), st.just(7))


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "_DEFAULTED_SPECS", Memo(256))


def _with_hostname(spec: Any, hostname: Any, at_front: bool) -> Any:
    if hostname is None or type(spec) is not dict:
        return copy.deepcopy(spec)
    spec = copy.deepcopy(spec)
    return {"hostname": hostname, **spec} if at_front else {**spec, "hostname": hostname}


@settings(max_examples=examples(400), deadline=None)
@given(specs, hostnames, hostnames, st.booleans())
def test_a_remembered_default_is_the_default_made_afresh(spec: Any, first: Any, second: Any, at_front: bool) -> None:
    defaults._DEFAULTED_SPECS = Memo(256)  # hypothesis runs every example in one fixture's scope
    results = []
    for hostname in (first, second, first):
        pod = {"metadata": {"name": "p"}, "spec": _with_hostname(spec, hostname, at_front)}
        plain = default_pod_in_place(copy.deepcopy(pod), priority=False)
        got = default_api_pod_in_place(pod)
        assert got is pod
        assert orjson.dumps(got) == orjson.dumps(plain)
        results.append(got["spec"])
    assert results[0] is not results[1] and results[1] is not results[2]  # each pod's spec is its own


def test_the_second_pod_of_a_spec_is_decoded_not_defaulted(monkeypatch: pytest.MonkeyPatch) -> None:
    walks: list[int] = []
    real = defaults.default_pod_in_place

    def counting(out: Any, *, priority: bool = True) -> Any:
        walks.append(1)
        return real(out, priority=priority)

    monkeypatch.setattr(defaults, "default_pod_in_place", counting)
    for index in range(3):
        pod = {"spec": {"hostname": f"job-{index}", "containers": [{"name": "main", "image": "busybox"}]}}
        default_api_pod_in_place(pod)
        assert pod["spec"]["hostname"] == f"job-{index}"
        assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    assert walks == [1]
    not_json = {"spec": {"containers": [{"name": "main", "image": "busybox", "x": object()}]}}
    default_api_pod_in_place(not_json)  # does not encode: defaulted in place, as before
    assert not_json["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    assert walks == [1, 1]
