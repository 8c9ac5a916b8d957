"""`kjobs validate` takes every kind `kjobs up` stores (Services, Endpoints, EndpointSlices, Namespaces, Nodes,
Events, Leases, PodDisruptionBudgets, PriorityClasses, RBAC), and answers each as the API server answers its
create: checked here against a dry-run create to an in-process server, message for message."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest
import yaml

from kjobs.server.app import create_app
from kjobs.server.registry import RESOURCES
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.cli.test_validate_cli import run
from tests.support import client_tls, shared_pki

MANIFESTS = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: Bad_Name}
spec: {ports: [{port: 70000, targetPort: 0}]}
---
apiVersion: v1
kind: Service
metadata: {name: np}
spec: {type: NodePort, ports: [{port: 80, nodePort: 5}]}
---
apiVersion: v1
kind: Service
metadata: {name: outside}
spec: {clusterIP: 192.168.1.1, ports: [{port: 80}]}
---
apiVersion: v1
kind: Endpoints
metadata: {name: e}
subsets: [{addresses: [{ip: not-an-ip}], ports: [{port: 80}]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: s}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1]}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: s2}
addressType: IPv9
endpoints: []
---
apiVersion: v1
kind: Namespace
metadata: {name: Team}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {"a/b/c": x}}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: l}
spec: {leaseDurationSeconds: 0}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: p}
spec: {minAvailable: 1, maxUnavailable: 1, selector: {matchLabels: {app: web}}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 2000000000
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: ev}
eventTime: "2024-01-01T00:00:00.000000Z"
---
apiVersion: v1
kind: Event
metadata: {name: core-ev}
involvedObject: {kind: Pod, name: p, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r}
rules: [{verbs: [get], resources: [pods]}]
"""


def _path(r: object, namespace: str) -> str:
    group, version, plural, namespaced = r.group, r.version, r.plural, r.namespaced  # type: ignore[attr-defined]
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    return f"{base}/namespaces/{namespace}/{plural}" if namespaced else f"{base}/{plural}"


def _resource(obj: dict[str, object]) -> object:
    return next(r for r in RESOURCES if r.kind == obj["kind"] and r.api_version == obj["apiVersion"])


def test_every_served_kind_is_answered_as_the_api_server_answers_its_create(tmp_path: Path) -> None:
    manifest = tmp_path / "all.yaml"
    manifest.write_text(MANIFESTS)
    code, out, _ = run("validate", "-o", "json", str(manifest))
    assert code == 1
    ours = [item["message"] for item in orjson.loads(out)["items"]]
    objects = list(yaml.safe_load_all(MANIFESTS))
    store = MemoryStore()
    theirs = []
    with (
        serve(store, app=create_app(store), pki=shared_pki()) as url,
        httpx.Client(base_url=url, verify=client_tls(), timeout=10) as http,
    ):
        for obj in objects:
            answer = http.post(_path(_resource(obj), "default"), params={"dryRun": "All"}, json=obj)
            valid = f'{obj["kind"]} "{obj["metadata"]["name"]}" is valid'
            theirs.append(valid if answer.status_code == 201 else answer.json()["message"])
    store.close()
    assert ours == theirs
    valid = [m for m in ours if m.endswith("is valid")]
    assert valid == ['Service "web" is valid', 'EndpointSlice "s" is valid', 'Event "core-ev" is valid']
    assert len(ours) - len(valid) == 12  # every other one is refused, with the server's words


@pytest.mark.parametrize("kind", ["Service", "Endpoints", "EndpointSlice"])
def test_the_text_output_names_the_kind_as_kubectl_does(tmp_path: Path, kind: str) -> None:
    docs = [d for d in yaml.safe_load_all(MANIFESTS) if d["kind"] == kind]
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    code, out, _ = run("validate", str(manifest))
    assert code == 1
    assert f"{manifest}: The {kind} " in out and " is invalid: " in out
    assert "* kind: Unsupported value" not in out  # what it said before it took these kinds
