"""Pod spec, pod template and ObjectMeta validation: the core rules a Job manifest touches."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kjobs.api.defaults import default_pod
from kjobs.api.types import Obj
from kjobs.api.validation import validate_job, validate_object_meta, validate_pod
from kjobs.memo import Memo
from tests.api.job_fixtures import api_job, template_spec

DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def _raw_pod(**spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36"}], **spec},
    }


def _pod(**spec: Any) -> Obj:
    return default_pod(_raw_pod(**spec))


def _container_errors(change: Callable[[Obj], None]) -> list[str]:
    pod = _raw_pod()
    change(pod["spec"]["containers"][0])
    return [str(e) for e in validate_pod(default_pod(pod))]


def test_valid_pod() -> None:
    assert validate_pod(_pod()) == []


def test_containers_required_and_names() -> None:
    assert [str(e) for e in validate_pod(_pod(containers=[]))] == ["spec.containers: Required value"]
    pod = _pod(
        containers=[{"name": "Main", "image": "a:1"}, {"name": "x", "image": "a:1"}, {"name": "x", "image": "a:1"}],
        initContainers=[{"name": "x", "image": "a:1"}, {"name": "", "image": ""}],
    )
    assert [str(e) for e in validate_pod(pod)] == [
        f'spec.containers[0].name: Invalid value: "Main": {DNS_LABEL}',
        'spec.containers[2].name: Duplicate value: "x"',
        'spec.initContainers[0].name: Duplicate value: "x"',
        "spec.initContainers[1].name: Required value",
        "spec.initContainers[1].image: Required value",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(lambda c: c.pop("image"), ["spec.containers[0].image: Required value"], id="image required"),
        pytest.param(
            lambda c: c.update(image=" busybox "),
            ['spec.containers[0].image: Invalid value: " busybox ": must not have leading or trailing whitespace'],
            id="image whitespace",
        ),
        pytest.param(
            lambda c: c.update(imagePullPolicy="Sometimes"),
            [
                'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", '
                '"IfNotPresent", "Never"'
            ],
            id="pull policy",
        ),
        pytest.param(
            lambda c: c.update(resources={"limits": {"memory": "1Gi"}, "requests": {"cpu": "2x", "memory": "2Gi"}}),
            [
                'spec.containers[0].resources.requests[cpu]: Invalid value: "2x": quantities must match the regular '
                "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                'spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory '
                "limit of 1Gi",
            ],
            id="quantities",
        ),
        pytest.param(
            lambda c: c.update(resources={"requests": {"gpu": "1", "example.com/dongle": "1500m"}}),
            [
                "spec.containers[0].resources.requests[example.com/dongle]: Invalid value: 1500m: must be an integer",
                "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
                "resources",
                'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource type '
                "or fully qualified",
                'spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for '
                "containers",
            ],
            id="resource names",
        ),
        pytest.param(
            lambda c: c.update(resources={"requests": {"cpu": "-1"}}),
            ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
            id="negative quantity",
        ),
        pytest.param(
            lambda c: c.update(
                env=[
                    {"name": ""},
                    {"name": "A=B"},
                    {"name": "OK", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                ]
            ),
            [
                "spec.containers[0].env[0].name: Required value",
                'spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist '
                "only of printable ASCII characters other than '='",
                'spec.containers[0].env[2].valueFrom: Invalid value: "": may not be specified when '
                "`value` is not empty",
            ],
            id="env",
        ),
        pytest.param(
            lambda c: c.update(env=[{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.restartPolicy"}}}]),
            [
                'spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.restartPolicy": '
                'supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", '
                '"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"'
            ],
            id="env fieldRef path",
        ),
        pytest.param(
            lambda c: c.update(
                env=[
                    {
                        "name": "JOB_COMPLETION_INDEX",
                        "valueFrom": {
                            "fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}
                        },
                    }
                ]
            ),
            [],
            id="completion index env",
        ),
        pytest.param(
            lambda c: c.update(
                ports=[{"containerPort": 0}, {"containerPort": 70000, "protocol": "HTTP", "name": "Web"}]
            ),
            [
                "spec.containers[0].ports[0].containerPort: Required value",
                'spec.containers[0].ports[1].name: Invalid value: "Web": must contain only alpha-numeric characters '
                "(a-z, 0-9), and hyphens (-)",
                "spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, "
                "inclusive",
                'spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", '
                '"UDP"',
            ],
            id="ports",
        ),
        pytest.param(
            lambda c: c.update(volumeMounts=[{"name": "data", "mountPath": "/data"}]),
            ['spec.containers[0].volumeMounts[0].name: Not found: "data"'],
            id="mount of unknown volume",
        ),
        pytest.param(
            lambda c: c.update(readinessProbe={"periodSeconds": 10}),
            ["spec.containers[0].readinessProbe: Required value: must specify a handler type"],
            id="probe without handler",
        ),
    ],
)
def test_container_rules(change: Callable[[Obj], None], expected: list[str]) -> None:
    assert _container_errors(change) == expected


def test_pod_spec_rules() -> None:
    pod = _pod(
        restartPolicy="Sometimes",
        dnsPolicy="Nearest",
        activeDeadlineSeconds=0,
        hostname="Host",
        nodeSelector={"zone": "a b"},
        tolerations=[{"operator": "Equal", "value": "x"}, {"key": "k", "operator": "Exists", "value": "v"}],
        volumes=[{"name": "v", "emptyDir": {}, "hostPath": {"path": "/tmp"}}, {"name": "v", "emptyDir": {}}],
    )
    rendered = [str(e) for e in validate_pod(pod)]
    assert rendered == [
        # the first "v" is invalid, so it does not count for the duplicate check (as in Kubernetes)
        "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type",
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
        'spec.dnsPolicy: Unsupported value: "Nearest": supported values: "ClusterFirstWithHostNet", "ClusterFirst", '
        '"Default", "None"',
        'spec.nodeSelector: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
        f'spec.hostname: Invalid value: "Host": {DNS_LABEL}',
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
        'means "match all values and all keys"',
        "spec.tolerations[1].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
    ]


def test_pod_metadata_and_create_only_rules() -> None:
    pod = _pod(ephemeralContainers=[{"name": "debug", "image": "busybox"}])
    del pod["metadata"]["namespace"]
    pod["metadata"]["finalizers"] = ["custom"]
    assert [str(e) for e in validate_pod(pod)] == [
        "metadata.namespace: Required value",
        'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully '
        "qualified",
        "spec.ephemeralContainers: Forbidden: cannot be set on create",
    ]


def test_template_rules_inside_a_job() -> None:
    job = api_job()
    template_spec(job)["containers"][0]["image"] = ""
    # with its defaulted policies: the container itself is valid (validateEphemeralContainers checks it here too)
    debug = {"name": "debug", "image": "busybox", "imagePullPolicy": "Always", "terminationMessagePolicy": "File"}
    template_spec(job)["ephemeralContainers"] = [debug]
    job["spec"]["template"]["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": "lots"}
    assert [str(e) for e in validate_job(job)] == [
        'spec.template.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "lots": must be a '
        "32bit integer",
        "spec.template.spec.containers[0].image: Required value",
        "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template",
    ]


def test_object_meta_namespaced_and_cluster_scoped() -> None:
    meta = {
        "name": "ok",
        "namespace": "Bad NS",
        "generation": -1,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Event"}],
    }
    rendered = [str(e) for e in validate_object_meta(meta, namespaced=True)]
    assert rendered[0].startswith('metadata.namespace: Invalid value: "Bad NS": a lowercase RFC 1123 label')
    assert rendered[1] == "metadata.generation: Invalid value: -1: must be greater than or equal to 0"
    assert 'metadata.ownerReferences.name: Invalid value: "": must not be empty' in rendered
    assert rendered[-1].endswith(": /v1, Kind=Event is disallowed from being an owner")
    assert [str(e) for e in validate_object_meta({"name": "n", "namespace": "x"}, namespaced=False)] == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]
    generated = {"generateName": "Pi-", "name": "pi-abcde", "namespace": "d"}
    assert next(str(e) for e in validate_object_meta(generated, namespaced=True, path="x")).startswith(
        'x.generateName: Invalid value: "Pi-": a lowercase RFC 1123 subdomain'
    )


def test_pod_wrong_types() -> None:
    pod = _pod()
    pod["spec"]["containers"] = [{"name": 3, "image": ["busybox"]}, "not a container"]
    pod["metadata"]["labels"] = ["a"]
    rendered = [str(e) for e in validate_pod(copy.deepcopy(pod))]
    assert 'metadata.labels: Invalid value: ["a"]: must be of type object' in rendered
    assert "spec.containers[0].name: Invalid value: 3: must be of type string" in rendered
    assert 'spec.containers[1]: Invalid value: "not a container": must be of type object' in rendered


def test_object_meta_update_rules() -> None:
    from kjobs.api.validation_meta import validate_object_meta_update

    old = {"name": "a", "namespace": "d", "uid": "u1", "resourceVersion": "5", "generation": 3}
    deleting = dict(old, deletionTimestamp="2025-01-01T00:00:00Z", finalizers=["x.io/keep"])
    new = dict(deleting, finalizers=["x.io/keep", "y.io/new"], generation=2, uid="u2")
    assert [str(e) for e in validate_object_meta_update(new, deleting)] == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new "
        'finalizers []string{"y.io/new"}',
        "metadata.generation: Invalid value: 2: must not be decremented",
        'metadata.uid: Invalid value: "u2": field is immutable',
    ]
    assert validate_object_meta_update(dict(old), old) == []


def _count_spec_walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Start with no remembered spec and list the full walks of `validate_pod_spec`, each by its spec's hostname."""
    from kjobs.api import validation_pod

    walks: list[str] = []
    real = validation_pod._validate_pod_spec

    def counting(spec: Obj, path: str, errs: list[Any], *, is_pod: bool, features: Any) -> None:
        walks.append(str(spec.get("hostname")))
        real(spec, path, errs, is_pod=is_pod, features=features)

    monkeypatch.setattr(validation_pod, "_validate_pod_spec", counting)
    monkeypatch.setattr(validation_pod, "_VALID_SPECS", Memo(256))
    return walks


def test_a_remembered_valid_spec_still_checks_another_hostname(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Job's pods differ only in their hostname: the spec's walk is done once, yet a bad hostname is caught."""
    walks = _count_spec_walks(monkeypatch)
    assert validate_pod(_pod(hostname="job-0")) == []
    assert validate_pod(_pod(hostname="job-1")) == []
    assert walks == ["job-0"]
    bad = [str(e) for e in validate_pod(_pod(hostname="Job_2"))]
    assert bad == [f'spec.hostname: Invalid value: "Job_2": {DNS_LABEL}']
    assert walks == ["job-0", "Job_2"]


def test_an_invalid_spec_is_reported_with_its_own_values_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    from kjobs.api import validation_pod

    monkeypatch.setattr(validation_pod, "_VALID_SPECS", Memo(256))
    pod = _pod(restartPolicy="Sometimes")
    first = [str(e) for e in validate_pod(pod)]
    assert first and first == [str(e) for e in validate_pod(copy.deepcopy(pod))]
    assert len(validation_pod._VALID_SPECS) == 0


def _token_volume_pod(volume: str, mount: str) -> Obj:
    projected = {"sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}
    pod = _raw_pod()
    pod["spec"]["volumes"] = [{"name": volume, "projected": projected}]
    pod["spec"]["containers"][0]["volumeMounts"] = [
        {"name": mount, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
    ]
    return default_pod(pod)


def test_pods_differing_in_their_token_volumes_random_name_are_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ServiceAccount admission's `kube-api-access-XXXXX` name differs in every pod: a Job's pods still share
    one remembered walk, while a mount naming another such volume than the pod has is still refused."""
    walks = _count_spec_walks(monkeypatch)
    assert validate_pod(_token_volume_pod("kube-api-access-abcde", "kube-api-access-abcde")) == []
    assert validate_pod(_token_volume_pod("kube-api-access-x2z4q", "kube-api-access-x2z4q")) == []
    assert len(walks) == 1
    mismatched = [str(e) for e in validate_pod(_token_volume_pod("kube-api-access-abcde", "kube-api-access-fghij"))]
    assert mismatched == ['spec.containers[0].volumeMounts[0].name: Not found: "kube-api-access-fghij"']
    blank = [str(e) for e in validate_pod(_token_volume_pod("kube-api-access-", "kube-api-access-"))]
    # a spec written with the blank name itself is walked on its own, and refused
    assert len(walks) == 3 and blank and blank[0].startswith('spec.volumes[0].name: Invalid value: "kube-api-access-"')


def test_the_remembered_spec_covers_hugepages_amounts_only_where_they_were_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stop 46: the hugepages amounts are checked inside the remembered walk (`validate_pod_spec(hugepages=True)`).
    A spec remembered valid where indivisible amounts are allowed (an update of a pod stored with one) does not
    make a create of the same spec pass, and a valid spec is walked once for two creates."""
    walks = _count_spec_walks(monkeypatch)
    amounts = {"hugepages-2Mi": "5Mi", "cpu": "1"}
    pod = _raw_pod()
    pod["spec"]["containers"][0]["resources"] = {"requests": dict(amounts), "limits": dict(amounts)}
    pod = default_pod(pod)
    refused = [
        "spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "
        '"5Mi": 5Mi is not positive integer multiple of hugepages-2Mi',
        "spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: "
        '"5Mi": 5Mi is not positive integer multiple of hugepages-2Mi',
    ]
    assert validate_pod(pod, allow_indivisible_hugepages=True) == []
    assert [str(e) for e in validate_pod(copy.deepcopy(pod))] == refused
    assert [str(e) for e in validate_pod(copy.deepcopy(pod))] == refused  # not remembered: refused each time
    assert len(walks) == 3
    fine = copy.deepcopy(pod)
    for part in ("requests", "limits"):
        fine["spec"]["containers"][0]["resources"][part]["hugepages-2Mi"] = "4Mi"
    assert validate_pod(fine) == validate_pod(copy.deepcopy(fine)) == []
    assert len(walks) == 4
