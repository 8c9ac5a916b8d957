"""The pod warnings of pkg/api/pod/warnings.go (v1.32) that kjobs gave none of before: deprecated node labels in
the node selector, node affinity and topology spread keys, fractional byte quantities, and volume keys mapped onto
one another's paths. Each spec is sent twice over HTTP, as a Pod (`GetWarningsForPod`, paths from `spec`) and
as a Job's pod template (`GetWarningsForPodTemplate`, paths from `spec.template.spec`), and the `Warning`
headers are read as kubectl reads them."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
import pytest

from kjobs.api.types import Obj

PODS = "/api/v1/namespaces/default/pods"
JOBS = "/apis/batch/v1/namespaces/default/jobs"
_names = itertools.count()


def _texts(response: httpx.Response) -> list[str]:
    """The texts of `Warning: 299 - "..."` headers."""
    assert response.status_code == 201, response.text
    texts = []
    for header in response.headers.get_list("warning"):
        assert header.startswith('299 - "') and header.endswith('"'), header
        texts.append(header[len('299 - "') : -1].replace('\\"', '"'))
    return texts


def _both(http: httpx.Client, spec: Obj, meta: Obj | None = None) -> tuple[list[str], list[str]]:
    """The warnings of creating a Pod with `spec`, and of a Job whose template has it."""
    n = next(_names)
    container = {"name": "c", "image": "busybox:1.36"}
    pod_spec: Obj = {"restartPolicy": "Never", "containers": [container], **spec}
    pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{n}", **(meta or {})}, "spec": pod_spec}
    template: Obj = {"metadata": dict(meta or {}), "spec": pod_spec}
    job: Obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"j{n}"}, "spec": {"template": template}}
    return _texts(http.post(PODS, json=pod)), _texts(http.post(JOBS, json=job))


def _check(http: httpx.Client, spec: Obj, want: list[str]) -> None:
    """`want` written with `spec.` paths: the Pod's exactly, the Job's under `spec.template.`."""
    as_pod, as_job = _both(http, spec)
    assert as_pod == want
    assert as_job == [w.replace("spec.", "spec.template.spec.", 1) if w.startswith("spec.") else w for w in want]


ARCH = 'deprecated since v1.14; use "kubernetes.io/arch" instead'
ZONE = 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead'
INSTANCE = 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead'


def test_deprecated_node_labels_in_selector_affinity_and_topology(http: httpx.Client) -> None:
    """`GetNodeLabelDeprecatedMessage` (pkg/api/node/util.go): `nodeSelector` keys as `path: message`, node
    affinity expression keys and topology keys as `path: key is message`; the node labels come first."""
    expression = {"key": "failure-domain.beta.kubernetes.io/zone", "operator": "In", "values": ["a"]}
    spec = {
        "nodeSelector": {"beta.kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"},
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "Exists"}, expression]}]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "preference": {
                            "matchExpressions": [
                                {"key": "beta.kubernetes.io/instance-type", "operator": "In", "values": ["m"]}
                            ]
                        },
                    }
                ],
            }
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "failure-domain.beta.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"a": "b"}},
            }
        ],
    }
    _check(
        http,
        spec,
        [
            f"spec.nodeSelector[beta.kubernetes.io/arch]: {ARCH}",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            f".matchExpressions[1].key: failure-domain.beta.kubernetes.io/zone is {ZONE}",
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference"
            f".matchExpressions[0].key: beta.kubernetes.io/instance-type is {INSTANCE}",
            f"spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/zone is {ZONE}",
        ],
    )


def test_fractional_byte_values(http: httpx.Client) -> None:
    """Memory and ephemeral-storage of containers (limits, then requests) and an ephemeral volume's storage:
    a quantity that is no whole number of bytes is accepted with its canonical value in the warning."""
    resources = {
        "requests": {"memory": "1.1Ki", "ephemeral-storage": "0.5"},
        "limits": {"memory": "1.1Ki", "cpu": "0.5"},
    }
    claim = {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2.5"}}}}
    spec = {
        "containers": [{"name": "c", "image": "busybox:1.36", "resources": resources}],
        "volumes": [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": claim}}],
    }
    fractional = 'fractional byte value "{}" is invalid, must be an integer'
    _check(
        http,
        spec,
        [
            "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: "
            + fractional.format("2500m"),
            "spec.containers[0].resources.limits[memory]: " + fractional.format("1126400m"),
            "spec.containers[0].resources.requests[memory]: " + fractional.format("1126400m"),
            "spec.containers[0].resources.requests[ephemeral-storage]: " + fractional.format("500m"),
        ],
    )


def _items(*paths: str) -> list[Obj]:
    return [{"key": f"k{i}", "path": path} for i, path in enumerate(paths)]


@pytest.mark.parametrize(
    ("volume", "want"),
    [
        pytest.param(
            {"configMap": {"name": "c", "items": _items("x", "x/y", "z")}},
            ['volume "v" (ConfigMap "c"): overlapping paths: "x/y" with "x"'],
            id="configMap: a path inside another",
        ),
        pytest.param(
            {"secret": {"secretName": "s", "items": _items("a/", "a")}},
            ['volume "v" (Secret "s"): overlapping paths: "a" with "a"'],
            id="secret: the same path, trailing slash trimmed",
        ),
        pytest.param(
            {
                "downwardAPI": {
                    "items": [
                        {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                        {"path": "labels", "fieldRef": {"fieldPath": "metadata.annotations"}},
                    ]
                }
            },
            ['volume "v" (DownwardAPI): overlapping paths: "labels" with "labels"'],
            id="downwardAPI",
        ),
        pytest.param(
            {
                "projected": {
                    "sources": [
                        {"configMap": {"name": "c", "items": _items("p", "q")}},
                        # not "p" itself: the same path twice is refused ("conflicting duplicate paths")
                        {"secret": {"name": "s", "items": _items("p/x")}},
                        {"serviceAccountToken": {"path": "q/token"}},
                    ]
                }
            },
            [
                'volume "v" (Projected Secret "s"): overlapping paths: "p/x" with "p"',
                # upstream checks every path gathered so far again under each later source's words
                'volume "v" (Projected ServiceAccountToken): overlapping paths: "p/x" with "p"',
                'volume "v" (Projected ServiceAccountToken): overlapping paths: "q/token" with "q"',
            ],
            id="projected: across sources",
        ),
        pytest.param(
            {"projected": {"sources": [{}, {"configMap": {"name": "c", "items": _items("a")}}]}},
            ['volume "v" (Projected) has no sources provided'],
            id="projected: an empty source",
        ),
        pytest.param(
            {"configMap": {"name": "c", "items": _items("a", "b")}},
            [],
            id="no overlap",
        ),
    ],
)
def test_overlapping_volume_paths(http: httpx.Client, volume: Obj, want: list[str]) -> None:
    """`warningsForOverlappingVirtualPaths`: keys of one volume written to the same path, or one inside another,
    overwrite each other or fail to mount. The warning has no field path, so a Job's reads as a Pod's."""
    _check(http, {"volumes": [{"name": "v", **volume}]}, want)


def test_nothing_to_warn_about(http: httpx.Client) -> None:
    """Current labels, whole bytes, distinct paths: no warning."""
    spec: Any = {
        "nodeSelector": {"kubernetes.io/arch": "amd64"},
        "containers": [{"name": "c", "image": "busybox:1.36", "resources": {"requests": {"memory": "1Ki"}}}],
    }
    assert _both(http, spec) == ([], [])
