"""What tests/server/test_hostile_inputs.py and tests/e2e/test_hostile_inputs_up.py share: one valid object of
every served kind, the ways to spoil one, and a raw ASGI driver that reads a streaming answer's status without
waiting for its end (a watch with `timeoutSeconds=9999` answers at once, then streams).

The generators follow docs/api-robustness.md ("Stop 37"): wrong types at every field path of every kind's
body, each patch type's directives in the wrong places, query parameters at their syntax edges, paths with
encoded slashes, dot segments and names invalid for the kind.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gzip
import json
import time
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import orjson
import yaml
from hypothesis import strategies as st

NS = "default"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.fz.example.com"},
    "spec": {
        "group": "fz.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
                },
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "string", "maxLength": 10},
                                    "replicas": {"type": "integer", "minimum": 0},
                                    "tags": {
                                        "type": "array",
                                        "items": {"type": "string"},
                                        "x-kubernetes-list-type": "set",
                                    },
                                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                },
                            },
                            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                        },
                    }
                },
            }
        ],
    },
}


def _template(labels: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "busybox:1.36",
                    "command": ["true"],
                    "env": [{"name": "A", "value": "b"}],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "100m"}},
                }
            ],
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


@dataclass(frozen=True)
class Kind:
    """One served kind: where its objects live and a valid object of it (named `name`)."""

    plural: str
    prefix: str  # "/api/v1" or "/apis/GROUP/VERSION"
    namespaced: bool
    body: dict[str, Any]
    subresources: tuple[str, ...] = ()

    def collection(self, namespace: str = NS) -> str:
        if self.namespaced:
            return f"{self.prefix}/namespaces/{namespace}/{self.plural}"
        return f"{self.prefix}/{self.plural}"

    def item(self, name: str | None = None, namespace: str = NS) -> str:
        return f"{self.collection(namespace)}/{name or self.body['metadata']['name']}"


def _obj(api_version: str, kind: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "labels": {"fz": "1"}}, **fields}


KINDS: list[Kind] = [
    Kind(
        "jobs",
        "/apis/batch/v1",
        True,
        _obj(
            "batch/v1",
            "Job",
            "fzjob",
            spec={
                "parallelism": 1,
                "completions": 2,
                "backoffLimit": 3,
                "suspend": True,
                "podFailurePolicy": {
                    "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]
                },
                "template": _template({"app": "fz"}),
            },
        ),
        ("status",),
    ),
    Kind(
        "cronjobs",
        "/apis/batch/v1",
        True,
        _obj(
            "batch/v1",
            "CronJob",
            "fzcron",
            spec={"schedule": "*/5 * * * *", "suspend": True, "jobTemplate": {"spec": {"template": _template({})}}},
        ),
        ("status",),
    ),
    Kind(
        "pods",
        "/api/v1",
        True,
        _obj("v1", "Pod", "fzpod", spec={**_template({})["spec"], "nodeName": "fznode"}),
        ("status", "ephemeralcontainers"),
    ),
    Kind("configmaps", "/api/v1", True, _obj("v1", "ConfigMap", "fzcm", data={"k": "v"}, binaryData={"b": "aGk="})),
    Kind("secrets", "/api/v1", True, _obj("v1", "Secret", "fzsecret", type="Opaque", stringData={"k": "v"})),
    Kind(
        "services",
        "/api/v1",
        True,
        _obj(
            "v1",
            "Service",
            "fzsvc",
            spec={"selector": {"app": "fz"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
        ),
        ("status",),
    ),
    Kind(
        "nodes",
        "/api/v1",
        False,
        _obj("v1", "Node", "fznode", spec={"taints": [{"key": "k", "effect": "NoSchedule"}]}),
        ("status",),
    ),
    Kind(
        "leases",
        "/apis/coordination.k8s.io/v1",
        True,
        _obj("coordination.k8s.io/v1", "Lease", "fzlease", spec={"holderIdentity": "me", "leaseDurationSeconds": 15}),
    ),
    Kind(
        "events",
        "/api/v1",
        True,
        _obj(
            "v1",
            "Event",
            "fzevent",
            involvedObject={"kind": "Pod", "name": "fzpod", "namespace": NS},
            reason="R",
            message="m",
            type="Normal",
            count=1,
        ),
    ),
    Kind(
        "events",
        "/apis/events.k8s.io/v1",
        True,
        _obj(
            "events.k8s.io/v1",
            "Event",
            "fzevent2",
            eventTime="2026-01-01T00:00:00.000000Z",
            reportingController="fz/x",
            reportingInstance="i",
            action="A",
            reason="R",
            type="Normal",
            regarding={"kind": "Pod", "name": "fzpod", "namespace": NS},
        ),
    ),
    Kind(
        "poddisruptionbudgets",
        "/apis/policy/v1",
        True,
        _obj(
            "policy/v1",
            "PodDisruptionBudget",
            "fzpdb",
            spec={"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}},
        ),
        ("status",),
    ),
    Kind(
        "priorityclasses",
        "/apis/scheduling.k8s.io/v1",
        False,
        _obj("scheduling.k8s.io/v1", "PriorityClass", "fzprio", value=10),
    ),
    Kind("serviceaccounts", "/api/v1", True, _obj("v1", "ServiceAccount", "fzsa")),
    Kind(
        "resourcequotas",
        "/api/v1",
        True,
        _obj("v1", "ResourceQuota", "fzquota", spec={"hard": {"pods": "100", "requests.cpu": "50"}}),
        ("status",),
    ),
    Kind(
        "limitranges",
        "/api/v1",
        True,
        _obj("v1", "LimitRange", "fzlimits", spec={"limits": [{"type": "Container", "max": {"cpu": "40"}}]}),
    ),
    Kind(
        "persistentvolumeclaims",
        "/api/v1",
        True,
        _obj(
            "v1",
            "PersistentVolumeClaim",
            "fzpvc",
            spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        ),
        ("status",),
    ),
    Kind(
        "persistentvolumes",
        "/api/v1",
        False,
        _obj(
            "v1",
            "PersistentVolume",
            "fzpv",
            spec={"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/fz"}},
        ),
        ("status",),
    ),
    Kind(
        "storageclasses",
        "/apis/storage.k8s.io/v1",
        False,
        _obj("storage.k8s.io/v1", "StorageClass", "fzsc", provisioner="kjobs.io/local"),
    ),
    Kind(
        "roles",
        "/apis/rbac.authorization.k8s.io/v1",
        True,
        _obj(
            "rbac.authorization.k8s.io/v1",
            "Role",
            "fzrole",
            rules=[{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        ),
    ),
    Kind(
        "rolebindings",
        "/apis/rbac.authorization.k8s.io/v1",
        True,
        _obj(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            "fzrb",
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "fzrole"},
            subjects=[{"kind": "ServiceAccount", "name": "fzsa", "namespace": NS}],
        ),
    ),
    Kind(
        "endpointslices",
        "/apis/discovery.k8s.io/v1",
        True,
        _obj(
            "discovery.k8s.io/v1",
            "EndpointSlice",
            "fzslice",
            addressType="IPv4",
            endpoints=[{"addresses": ["10.0.0.1"], "conditions": {"ready": True}}],
            ports=[{"name": "http", "port": 80, "protocol": "TCP"}],
        ),
    ),
    Kind("namespaces", "/api/v1", False, _obj("v1", "Namespace", "fzns"), ("status",)),
    Kind("customresourcedefinitions", "/apis/apiextensions.k8s.io/v1", False, CRD, ("status",)),
    Kind(
        "widgets",
        "/apis/fz.example.com/v1",
        True,
        _obj(
            "fz.example.com/v1",
            "Widget",
            "fzwidget",
            spec={"size": "s", "replicas": 1, "tags": ["a"], "free": {"x": 1}},
        ),
        ("status", "scale"),
    ),
]


# ---------------------------------------------------------------------------------------------- values

RAW_NUMBERS = [b"1e400", b"-1e400", b"-0", b"-0.0", b"1E+2", b"123456789012345678901234567890", b"0.1e-400", b"1.0"]
"""Numbers JSON allows but float64/int64 do not hold (Go: `json: cannot unmarshal number 1e400 ...`)."""

SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    -0.0,
    2**63 - 1,
    -(2**63),
    1e308,
    "",
    "NaN",
    "Infinity",
    "-0",
    "x",
    "\u00e9\u0000",
    "A..B",
    "../x",
    "a/b",
    "x" * 300,
    "9223372036854775808",
    "1Gi",
    "2026-01-01T00:00:00Z",
]


def hostile_json(max_leaves: int = 6) -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.sampled_from(SCALARS), st.integers(), st.floats(allow_nan=False, allow_infinity=False))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(
                st.sampled_from(["", "a", "name", "$patch", "metadata", "spec", "x" * 70]), inner, max_size=3
            ),
        ),
        max_leaves=max_leaves,
    )


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in `value` (the root too): a tuple of keys and indexes."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths_of(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += paths_of(item, (*prefix, i))
    return out


def replaced(body: Any, where: tuple[Any, ...], value: Any) -> Any:
    if not where:
        return value
    copy = deepcopy(body)
    node = copy
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return copy


def pointer(where: tuple[Any, ...]) -> str:
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in where)


def encode(body: Any, raw: bytes | None = None) -> bytes:
    """`body` as JSON; with `raw`, the placeholder string `"@RAW@"` in it becomes those bytes (a number no JSON
    library writes, such as 1e400)."""
    text = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")
    return text.replace(b'"@RAW@"', raw) if raw is not None else text


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def continue_token(rv: int, start: str, version: str = "meta.k8s.io/v1") -> str:
    raw = orjson.dumps({"v": version, "rv": rv, "start": start})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


LABEL_SELECTORS = st.one_of(
    st.sampled_from(
        [
            "a",
            "!a",
            "a=b",
            "a==b",
            "a!=b",
            "a in (b,c)",
            "a notin (b)",
            "a in ()",
            "a in (",
            "a=",
            "=b",
            "a=b,",
            ",",
            "a=b=c",
            "a in (b c)",
            "a>1",
            "a<1",
            "a>x",
            "a>",
            "!",
            "!!a",
            "a,!",
            "x" * 64 + "=b",
            "a=" + "b" * 64,
            "ex.com/" + "a" * 63 + "=b",
            "a=b" + ",a=b" * 2000,
            "a in (" + ",".join("v" * 5 for _ in range(3000)) + ")",
            "\u00e9=b",
            "a=\x00",
            "a = b",
            "  ",
            "a in (b),b notin (c),!d,e",
            "(a)",
        ]
    ),
    st.text(alphabet="ab=!,()<> in", max_size=12),
)

FIELD_SELECTORS = st.one_of(
    st.sampled_from(
        [
            "metadata.name=x",
            "metadata.name==x",
            "metadata.name!=x",
            "metadata.namespace=default",
            "spec.nodeName=fznode",
            "status.phase=Running",
            "status.successful=1",
            "spec.unschedulable=false",
            "type=Opaque",
            "metadata.name",
            "metadata.name=",
            "=x",
            "metadata.name in (x)",
            "metadata.name=x,",
            "metadata.name=a\\,b",
            "metadata.name=a\\",
            "metadata.name=a\\x",
            "nope=x",
            "spec.foo=bar",
            "metadata.name=x" + ",metadata.name=x" * 2000,
            "\u00e9=x",
            "metadata.labels=x",
            "involvedObject.name=fzpod",
            "regarding.name=fzpod",
        ]
    ),
    st.text(alphabet="metadn.=!,\\x", max_size=14),
)

QUERY_VALUES = [
    "",
    "0",
    "1",
    "-1",
    "1.5",
    "abc",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "true",
    "false",
    "True",
    "All",
    "all",
    "Strict",
    "Warn",
    "Ignore",
    "strict",
    "Exact",
    "NotOlderThan",
    "Foreground",
    "Background",
    "Orphan",
    "x" * 129,
    "a\x07",
    "\u00e9",
    "kubectl-client-side-apply",
]


# ---------------------------------------------------------------------------------------------- driver


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float
    streamed: bool = False
    chunks: list[bytes] = field(default_factory=list)

    def json(self) -> Any:
        return orjson.loads(self.body)


async def call(
    app: Any,
    method: str,
    raw_path: str,
    *,
    query: bytes = b"",
    headers: dict[str, str | bytes] | None = None,
    body: bytes = b"",
    stream_for: float = 0.2,
    budget: float = 20.0,
) -> Answer:
    """One request straight into the ASGI app. A streaming answer (a watch) is read for `stream_for` seconds
    after its start and then disconnected, as a client hanging up; anything else must end within `budget`."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": unquote(raw_path),  # as uvicorn decodes it: bytes that are not UTF-8 become U+FFFD
        "raw_path": raw_path.encode("latin-1", "replace"),
        "query_string": query,
        "root_path": "",
        "headers": [
            (k.lower().encode("latin-1"), v if isinstance(v, bytes) else v.encode("latin-1", "replace"))
            for k, v in (headers or {}).items()
        ]
        + [(b"host", b"kjobs")],
        "client": ("127.0.0.1", 40000),
        "server": ("kjobs", 443),
        "extensions": {},
    }
    sent = False
    done = asyncio.Event()
    started = asyncio.Event()
    answer = Answer(0, {}, b"", 0.0)

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])}
            started.set()
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            answer.chunks.append(chunk)
            if not message.get("more_body", False):
                done.set()

    start = time.monotonic()
    task = asyncio.ensure_future(app(scope, receive, send))
    try:
        await asyncio.wait_for(started.wait(), budget)
        try:
            await asyncio.wait_for(asyncio.shield(done.wait()), stream_for if answer.status == 200 else budget)
        except TimeoutError:
            answer.streamed = True
            done.set()  # the client hangs up
        await asyncio.wait_for(task, budget)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):  # the cancelled handler's own ending
                await task
    answer.seconds = time.monotonic() - start
    answer.body = b"".join(answer.chunks)
    return answer


def check_status(answer: Answer, method: str, path: str = "") -> None:
    """No 5xx but 504 (a wait the client asked for) and, on a proxy path, 503 (kube-apiserver's `error trying to
    reach service`), and every refusal a Kubernetes Status with its code."""
    allowed = (504, 503) if "/proxy" in path else (504,)
    assert answer.status < 500 or answer.status in allowed, (answer.status, answer.body[:2000])
    if answer.status >= 400 and method != "HEAD":
        ctype = answer.headers.get("content-type", "")
        if "protobuf" in ctype:  # a Status in kube's protobuf envelope
            assert answer.body.startswith(b"k8s\x00"), answer.body[:200]
            return
        body = yaml.safe_load(answer.body) if "yaml" in ctype else orjson.loads(answer.body)
        assert isinstance(body, dict) and body.get("kind") == "Status", answer.body[:2000]
        assert body["code"] == answer.status and body["status"] == "Failure", body
        assert isinstance(body.get("reason"), str) and isinstance(body.get("message"), str), body


def q(params: dict[str, str] | list[tuple[str, str]]) -> bytes:
    items = params.items() if isinstance(params, dict) else params
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in items).encode()
