"""The paths of the fields a server-side apply configuration has that its kind's schema does not declare, as
structured-merge-diff's type converter writes them (`kjobs.server.schema.undeclared_fields`)."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.server import schema

JOB = "io.k8s.api.batch.v1.Job"


def _job(**container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "labels": {"a": "b"}},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox", **container}]}}},
    }


@pytest.mark.parametrize(
    ("container", "path"),
    [
        ({"imagePullPolice": "Always"}, '.spec.template.spec.containers[name="c"].imagePullPolice'),
        # a `map` list with two keys: sorted by name, the omitted protocol by its schema default
        ({"ports": [{"containerPort": 80, "hostIp": "x"}]}, '[containerPort=80,protocol="TCP"].hostIp'),
        (
            {"env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPth": "x"}}}]},
            '[name="A"].valueFrom.fieldRef.fieldPth',
        ),
        # a `map` list keyed by another field than `name`
        (
            {"command": ["true"], "volumeDevices": [{"name": "d", "devicePath": "/d", "x": 1}]},
            '.volumeDevices[devicePath="/d"].x',
        ),
        ({"resources": {"claims": [{"name": "g", "requst": "r"}]}}, '.resources.claims[name="g"].requst'),
    ],
)
def test_each_path_is_written_as_the_type_converter_writes_it(container: dict[str, Any], path: str) -> None:
    (found,) = schema.undeclared_fields(_job(**container), JOB)
    assert found.endswith(f"{path}: field not declared in schema")


def test_an_atomic_lists_items_go_by_index_and_a_declared_config_has_none() -> None:
    job = _job()
    job["spec"]["template"]["spec"]["tolerations"] = [{"key": "k"}, {"key": "k", "efect": "NoSchedule"}]
    assert schema.undeclared_fields(job, JOB) == [
        ".spec.template.spec.tolerations[1].efect: field not declared in schema"
    ]
    assert schema.undeclared_fields(_job(command=["true"]), JOB) == []


def test_a_map_stops_at_its_first_undeclared_field() -> None:
    # `visitMapItems` returns false on the first: later fields of that map, and maps under them, are not walked
    job = _job(imagePullPolice="Always")
    job["spec"] = {"backofLimit": 1, **job["spec"], "completions": {"nested": 1}}
    job["metadata"]["labelz"] = {}
    assert schema.undeclared_fields(job, JOB) == [
        ".metadata.labelz: field not declared in schema",
        ".spec.backofLimit: field not declared in schema",
    ]
