"""A value its Go type cannot hold is refused as kube-apiserver's JSON decoder refuses it: a 400 naming the Go
struct, the field path and the Go type (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kjobs.api.types import Obj
from kjobs.server import gotime
from kjobs.server.gotypes import first_type_error, well_typed


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
    """Unknown fields are the strict check's; a Time decodes itself (into what Go writes again, see below); an
    integral float (YAML `2.0`) is the `2` kubectl sends, stored back as an int."""
    obj = job({"completions": 2.0, "unknownField": {"x": 1}}, creationTimestamp="2026-01-01T00:00:00+00:00")
    assert first_type_error(obj, "Job") is None
    assert type(obj["spec"]["completions"]) is int
    assert obj["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
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


@pytest.mark.parametrize(
    ("obj", "group", "message"),
    [
        (
            {"kind": "Lease", "spec": {"leaseDurationSeconds": "15"}},
            "coordination.k8s.io",
            "string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32",
        ),
        (
            {"kind": "PriorityClass", "value": "1000"},
            "scheduling.k8s.io",
            "string into Go struct field PriorityClass.value of type int32",
        ),
        (
            {"kind": "PodDisruptionBudget", "spec": {"unhealthyPodEvictionPolicy": 1}},
            "policy",
            "number into Go struct field PodDisruptionBudgetSpec.spec.unhealthyPodEvictionPolicy of type "
            "v1.UnhealthyPodEvictionPolicyType",
        ),
        (
            {"kind": "Event", "deprecatedCount": "2"},
            "events.k8s.io",
            "string into Go struct field Event.deprecatedCount of type int32",
        ),
        ({"kind": "Event", "count": "2"}, "", "string into Go struct field Event.count of type int32"),
        (
            {"kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"verb": 1}}},
            "authorization.k8s.io",
            "number into Go struct field ResourceAttributes.spec.resourceAttributes.verb of type string",
        ),
        (
            {"kind": "Eviction", "deleteOptions": {"preconditions": {"uid": 1}}},
            "policy",
            "number into Go struct field Preconditions.deleteOptions.preconditions.uid of type types.UID",
        ),
        (
            {"kind": "Binding", "target": {"name": 5}},
            "",
            "number into Go struct field ObjectReference.target.name of type string",
        ),
    ],
)
def test_every_served_kind_and_request_body_is_decoded_into_its_go_struct(obj: Obj, group: str, message: str) -> None:
    """Each kind into the struct of its own API group: an `Event` of events.k8s.io is not core/v1's."""
    assert first_type_error(obj, str(obj["kind"]), group=group) == f"json: cannot unmarshal {message}"


def pod(status: Obj, **spec: Any) -> Obj:
    return {
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "main", "image": "x"}], **spec},
        "status": status,
    }


def test_a_merge_patch_walks_only_what_it_names() -> None:
    """`within`: the result of a merge patch applied to an object that decodes; only the patch's keys can hold
    a wrong type, and the answer is the full walk's."""
    patch: Obj = {"status": {"phase": 5, "conditions": [{"type": "Ready", "status": True}]}}
    result = pod(patch["status"])
    full = first_type_error(pod(patch["status"]), "Pod")
    assert full == (  # conditions before phase: kubectl's sorted keys
        "json: cannot unmarshal bool into Go struct field PodCondition.status.conditions.status of type "
        "v1.ConditionStatus"
    )
    assert first_type_error(result, "Pod", within=patch) == full
    # what the patch does not name is not walked (a stored object has no error there)
    unnamed = pod({"phase": "Running"}, restartPolicy=1)
    assert first_type_error(unnamed, "Pod", within={"status": {"phase": "Running"}}) is None
    assert first_type_error(unnamed, "Pod") is not None
    # a key the patch maps to a scalar or a list is walked whole; a map's keys only as the patch names them
    labels = pod({}, nodeSelector={"disk": 1})
    labels["metadata"]["labels"]["n"] = 2
    assert first_type_error(labels, "Pod", within={"metadata": {"labels": {"n": 2}}}) == (
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"
    )
    assert first_type_error(labels, "Pod", within={"metadata": {"labels": {"a": "c"}}}) is None


def test_every_kind_served_has_its_go_struct() -> None:
    from kjobs.server import registry
    from kjobs.server.gotypes import ROOTS, _resolve
    from kjobs.server.registry import RESOURCES

    # apiextensions' types are not in the shipped Go type tables (kjobs.api.crds checks a CRD's shape itself;
    # docs/crds.md); custom resources have no Go struct at all
    without = {("apiextensions.k8s.io", "CustomResourceDefinition")}
    for r in RESOURCES:
        if (r.group, r.kind) in without or r not in registry.BUILT_IN:
            continue
        assert (r.group, r.kind) in ROOTS, r.kind
        assert _resolve(ROOTS[(r.group, r.kind)])[0] == "struct", r.kind


@pytest.mark.parametrize(
    ("text", "time", "micro"),
    [
        ("2026-12-05T07:28:56Z", "2026-12-05T07:28:56Z", None),
        ("2026-12-05T07:28:56+00:00", "2026-12-05T07:28:56Z", None),  # Python's isoformat()
        ("2026-12-05T09:28:56.999+02:00", "2026-12-05T07:28:56Z", None),  # to UTC, the fraction cut
        ("2026-12-31T23:30:00-01:00", "2027-01-01T00:30:00Z", None),
        ("2026-12-05T07:28:56,5Z", "2026-12-05T07:28:56Z", None),  # Go reads a comma too
        ("2026-12-05T07:28:56.123456+00:00", "2026-12-05T07:28:56Z", "2026-12-05T07:28:56.123456Z"),
    ],
)
def test_times_are_stored_as_go_writes_them_again(text: str, time: str, micro: str | None) -> None:
    assert gotime.normalize(text) == time
    if micro is not None:
        assert gotime.normalize(text, micro=True) == micro


TIME, MICRO = '"2006-01-02T15:04:05Z07:00"', '"2006-01-02T15:04:05.000000Z07:00"'


@pytest.mark.parametrize(
    ("text", "micro", "error"),
    [
        ("garbage", False, f'parsing time "garbage" as {TIME}: cannot parse "garbage" as "2006"'),
        (  # the JavaScript client's Date.toISOString() in a MicroTime
            "2026-12-05T07:49:50.143Z",
            True,
            f'parsing time "2026-12-05T07:49:50.143Z" as {MICRO}: cannot parse ".143Z" as ".000000"',
        ),
        (
            "2026-12-05T07:49:50+00:00",
            True,
            f'parsing time "2026-12-05T07:49:50+00:00" as {MICRO}: cannot parse "+00:00" as ".000000"',
        ),
        (
            "2026-12-05 07:28:56Z",
            False,
            f'parsing time "2026-12-05 07:28:56Z" as {TIME}: cannot parse " 07:28:56Z" as "T"',
        ),
        ("2026-12-05T07:28:56", False, f'parsing time "2026-12-05T07:28:56" as {TIME}: cannot parse "" as "Z07:00"'),
        ("2026-13-05T00:00:00Z", False, 'parsing time "2026-13-05T00:00:00Z": month out of range'),
        ("2026-02-30T00:00:00Z", False, 'parsing time "2026-02-30T00:00:00Z": day out of range'),
        ("2026-12-05T24:00:00Z", False, 'parsing time "2026-12-05T24:00:00Z": hour out of range'),
        ("2026-12-05T07:28:56Zjunk", False, 'parsing time "2026-12-05T07:28:56Zjunk": extra text: "junk"'),
        (
            "2026-12-05T07:28:56+25:00",
            False,
            'parsing time "2026-12-05T07:28:56+25:00": time zone offset hour out of range',
        ),
        ('2026-"é', False, f'parsing time "2026-\\"\\xc3\\xa9" as {TIME}: cannot parse "\\"\\xc3\\xa9" as "01"'),
    ],
)
def test_times_go_cannot_parse_fail_with_its_error(text: str, micro: bool, error: str) -> None:
    with pytest.raises(gotime.ParseError) as failed:
        gotime.normalize(text, micro=micro)
    assert str(failed.value) == error


def test_a_time_that_does_not_parse_stops_the_decode() -> None:
    """As `Lease in version "v1" cannot be handled as a Lease: parsing time ...` (the API server's 400)."""
    lease = {"spec": {"holderIdentity": "me", "renewTime": "2026-12-05T07:49:50.143Z", "leaseDurationSeconds": "x"}}
    assert first_type_error(lease, "Lease", group="coordination.k8s.io") == (
        f'parsing time "2026-12-05T07:49:50.143Z" as {MICRO}: cannot parse ".143Z" as ".000000"'
    )
    assert first_type_error({"status": {"startTime": 5}}, "Job", group="batch") == (
        "json: cannot unmarshal number into Go value of type string"
    )


def test_a_job_status_and_an_event_written_with_offsets_are_normalized_in_place() -> None:
    """What the official Python client's `sanitize_for_serialization` writes back (`+00:00`) is stored as a
    cluster stores it; `well_typed` does not call such a body plain, so the walk that normalizes it runs."""
    status = {"startTime": "2026-12-05T07:28:56+00:00", "conditions": [{"type": "Complete", "status": "True"}]}
    status["conditions"][0]["lastTransitionTime"] = "2026-12-05T08:28:57.5+01:00"
    body = {**job({}), "status": status}
    assert not well_typed(body, "Job", group="batch")
    assert first_type_error(body, "Job", group="batch") is None
    assert status == {
        "startTime": "2026-12-05T07:28:56Z",
        "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": "2026-12-05T07:28:57Z"}],
    }
    assert well_typed(body, "Job", group="batch")
    event = {"firstTimestamp": "2026-12-05T07:28:56.5+00:00", "eventTime": "2026-12-05T07:28:56.123456+00:00"}
    assert first_type_error(event, "Event", group="") is None
    assert event == {"firstTimestamp": "2026-12-05T07:28:56Z", "eventTime": "2026-12-05T07:28:56.123456Z"}
