"""A value its Go type cannot hold is refused as kube-apiserver's JSON decoder refuses it: a 400 naming the Go
struct, the field path and the Go type (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kjobs.api.types import Obj
from kjobs.server.gotypes import first_type_error


def job(spec: Obj, template: Obj | None = None, **meta: Any) -> Obj:
    pod = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}], **(template or {})}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", **meta},
        "spec": {**spec, "template": {"spec": pod}},
    }


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        # the mistakes of a hand-written manifest, with the text a real API server answers
        (job({"completions": "3"}), "string into Go struct field JobSpec.spec.completions of type int32"),
        (job({"backoffLimit": 1.5}), "number 1.5 into Go struct field JobSpec.spec.backoffLimit of type int32"),
        (job({"parallelism": 2**31}), "number 2147483648 into Go struct field JobSpec.spec.parallelism of type int32"),
        (job({"suspend": "yes"}), "string into Go struct field JobSpec.spec.suspend of type bool"),
        (
            job({}, {"containers": {"name": "main", "image": "x"}}),
            "object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container",
        ),
        (
            job({}, {"containers": [{"name": "main", "image": "x", "command": "sh -c 'exit 1'"}]}),
            "string into Go struct field Container.spec.template.spec.containers.command of type []string",
        ),
        (
            job({}, {"containers": [{"name": "main", "image": "x", "args": ["--threads", 10]}]}),
            "number into Go struct field Container.spec.template.spec.containers.args of type string",
        ),
        (
            job({}, {"containers": [{"name": "main", "image": "x", "env": [{"name": "N", "value": 1}]}]}),
            "number into Go struct field EnvVar.spec.template.spec.containers.env.value of type string",
        ),
        (
            job({}, {"restartPolicy": 1}),
            "number into Go struct field PodSpec.spec.template.spec.restartPolicy of type v1.RestartPolicy",
        ),
        (
            job(
                {
                    "podFailurePolicy": {
                        "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": "42"}}]
                    }
                }
            ),
            "string into Go struct field PodFailurePolicyOnExitCodesRequirement.spec.podFailurePolicy.rules.onExitCodes"
            ".values of type []int32",
        ),
        (job({}, labels={"app": True}), "bool into Go struct field ObjectMeta.metadata.labels of type string"),
        ({"kind": "Job", "metadata": "x"}, "string into Go struct field Job.metadata of type v1.ObjectMeta"),
        (
            job({}, {"containers": [{"name": "main", "image": "x", "resources": {"limits": ["1"]}}]}),
            "array into Go struct field ResourceRequirements.spec.template.spec.containers.resources.limits of type "
            "v1.ResourceList",
        ),
        (
            {"kind": "Secret", "metadata": {"name": "s"}, "data": {"k": 1}},
            "number into Go struct field Secret.data of type []uint8",
        ),
    ],
)
def test_the_first_value_of_a_wrong_type_is_named_as_go_names_it(obj: Obj, message: str) -> None:
    assert first_type_error(obj, str(obj["kind"])) == f"json: cannot unmarshal {message}"


def test_the_first_in_the_order_kubectl_sends_is_reported() -> None:
    """kubectl marshals a map: keys sorted at every level, so backoffLimit comes before completions."""
    obj = job({"completions": "3", "backoffLimit": "1"})
    assert first_type_error(obj, "Job") == (
        "json: cannot unmarshal string into Go struct field JobSpec.spec.backoffLimit of type int32"
    )


def test_what_is_not_a_field_is_left_to_the_strict_check_and_an_integral_float_is_an_int() -> None:
    """Unknown fields are the strict check's; Times decode themselves (left to the validators); an integral
    float (YAML `2.0`) is the `2` kubectl sends, stored back as an int."""
    obj = job({"completions": 2.0, "unknownField": {"x": 1}}, creationTimestamp=5)
    assert first_type_error(obj, "Job") is None
    assert type(obj["spec"]["completions"]) is int
    assert first_type_error({"kind": "Deployment", "spec": "x"}, "Deployment") is None


@pytest.mark.parametrize("cpu", ["abc", True, {"a": 1}, ""])
def test_a_quantity_that_does_not_parse_stops_the_decode_with_its_own_error(cpu: Any) -> None:
    """Quantity's UnmarshalJSON error is returned at once, bare, even after a type error read before it (Go's
    decoder saves type errors and reads on; apimachinery pkg/api/resource/quantity.go)."""
    obj = job(
        {"completions": "3"}, {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"cpu": cpu}}}]}
    )
    assert first_type_error(obj, "Job") == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = " 500m "
    assert first_type_error(obj, "Job") == (
        "json: cannot unmarshal string into Go struct field JobSpec.spec.completions of type int32"
    )


def test_an_int_or_string_that_is_neither_is_a_bare_int32_error() -> None:
    """IntOrString decodes a non-string with a fresh json.Unmarshal into int32: no struct context."""
    probe = {"tcpSocket": {"port": True}}
    obj = job({}, {"containers": [{"name": "main", "image": "x", "livenessProbe": probe}]})
    assert first_type_error(obj, "Job") == "json: cannot unmarshal bool into Go value of type int32"
    probe["tcpSocket"]["port"] = "http"
    assert first_type_error(obj, "Job") is None


def test_kubectl_apply_of_a_mistyped_job_is_the_decoders_400(http: httpx.Client) -> None:
    """`completions: "3"` through the API of `kjobs up`: the 400 kube-apiserver returns, not a 422 of the
    validators; the Job is not created."""
    url = "/apis/batch/v1/namespaces/default/jobs"
    response = http.post(url, json=job({"completions": "3"}))
    assert response.status_code == 400, response.text
    assert response.json()["reason"] == "BadRequest"
    assert response.json()["message"] == (
        'Job in version "v1" cannot be handled as a Job: '
        "json: cannot unmarshal string into Go struct field JobSpec.spec.completions of type int32"
    )
    assert http.get(f"{url}/j").status_code == 404
