"""Stop 50: a remembered pod-spec default is made as the changes defaulting made, to the pod's own spec.

`default_api_pod_in_place` used to decode the whole remembered defaulted spec for each pod (stop 46); it now
makes the remembered changes (fields added or set) to the spec it was given, when they reproduce defaulting's
JSON byte for byte, and decodes the JSON otherwise. Hypothesis makes pod specs (those of
tests/api/test_defaulted_spec_memo.py) and each is defaulted through the memo, then again with another hostname:
the JSON of the decoding version kept here (key order included), the changes path taken where they reproduce it,
and no map or list shared between two pods' specs.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings

from kjobs.api import defaults
from kjobs.api.defaults import default_api_pod_in_place, default_pod_in_place
from kjobs.memo import Memo
from tests.api.test_defaulted_spec_memo import hostnames, specs
from tests.hypothesis_budget import examples

_ABSENT = object()


def decoding_default(pod: Any, memo: Memo[bytes, bytes]) -> Any:
    """Stop 46's version: the defaulted spec's JSON remembered and decoded for each pod."""
    spec = pod.get("spec") if type(pod) is dict else None
    if type(spec) is not dict:
        return default_pod_in_place(pod, priority=False)
    hostname = spec.get("hostname", _ABSENT)
    try:
        key = orjson.dumps(spec if hostname is _ABSENT else {**spec, "hostname": ""})
    except TypeError:
        return default_pod_in_place(pod, priority=False)
    done = memo.get(key)
    if done is not None:
        fresh = orjson.loads(done)
        if hostname is not _ABSENT:
            fresh["hostname"] = hostname
        pod["spec"] = fresh
        return pod
    default_pod_in_place(pod, priority=False)
    defaulted = pod["spec"]
    memo.put(key, orjson.dumps(defaulted if hostname is _ABSENT else {**defaulted, "hostname": ""}))
    return pod


def containers_of(value: Any) -> list[int]:
    """The ids of every map and list in `value`."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            found.append(id(item))
            stack.extend(item.values())
        elif type(item) is list:
            found.append(id(item))
            stack.extend(item)
    return found


@pytest.fixture(autouse=True)
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "_DEFAULTED_SPECS", Memo(256))


@settings(max_examples=examples(500), deadline=None)
@given(specs, hostnames, hostnames)
def test_remembered_changes_give_the_decoded_default(spec: Any, first: Any, second: Any) -> None:
    defaults._DEFAULTED_SPECS = Memo(256)
    old_memo: Memo[bytes, bytes] = Memo(256)
    kept = []
    for hostname in (first, second, first):
        body = {"metadata": {"name": "p"}, "spec": copy.deepcopy(spec)}
        if hostname is not None:
            body["spec"]["hostname"] = hostname
        before = decoding_default(copy.deepcopy(body), old_memo)
        got = default_api_pod_in_place(body)
        assert orjson.dumps(got) == orjson.dumps(before)
        kept.append(got)
    ids = [set(containers_of(pod["spec"])) for pod in kept]
    assert not ids[0] & ids[1] and not ids[1] & ids[2] and not ids[0] & ids[2]  # (kept alive: ids not reused)
    remembered = list(defaults._DEFAULTED_SPECS._values.values())
    assert all(type(done) is tuple for done in remembered)  # defaulting only adds and sets: changes reproduce it


def test_a_job_pod_spec_is_remembered_as_two_changes() -> None:
    spec = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "imagePullPolicy": "Always",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "resources": {},
                "env": [{"name": "I", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
        "hostname": "bench-0",
    }
    default_api_pod_in_place({"spec": copy.deepcopy(spec)})
    (done,) = defaults._DEFAULTED_SPECS._values.values()
    assert done == (
        (("containers", 0, "env", 0, "valueFrom", "fieldRef"), "apiVersion", "v1", None),
        ((), "enableServiceLinks", True, None),
    )
    pod = {"spec": {**copy.deepcopy(spec), "hostname": "bench-7"}}
    given_spec = pod["spec"]
    default_api_pod_in_place(pod)
    assert pod["spec"] is given_spec  # changed in place, not decoded
    assert list(given_spec)[-2:] == ["hostname", "enableServiceLinks"]


def test_changes_that_do_not_reproduce_the_default_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A default that removed a field, or moved a key, is remembered as the defaulted JSON and decoded."""
    real = defaults.default_pod_in_place

    def removing(out: Any, *, priority: bool = True) -> Any:
        real(out, priority=priority)
        out["spec"].pop("dnsPolicy", None)
        out["spec"]["restartPolicy"] = out["spec"].pop("restartPolicy")  # moved last
        return out

    monkeypatch.setattr(defaults, "default_pod_in_place", removing)
    spec = {"dnsPolicy": "ClusterFirst", "restartPolicy": "Never", "containers": [{"name": "m", "image": "b"}]}
    results = []
    for hostname in ("a-0", "a-1"):
        pod = {"spec": {**copy.deepcopy(spec), "hostname": hostname}}
        default_api_pod_in_place(pod)
        results.append(pod["spec"])
    (done,) = defaults._DEFAULTED_SPECS._values.values()
    assert type(done) is bytes
    assert orjson.dumps({**results[1], "hostname": "a-0"}) == orjson.dumps(results[0])
    assert "dnsPolicy" not in results[1] and list(results[1])[-1] == "restartPolicy"
