"""Controllers: each a loop of watch → informer cache → rate-limited work queue → reconcile → write.

They run on the `kjobs.client.Client` interface, so the same controller runs inside `kjobs up`, inside
`kjobs run`, or alone against any Kubernetes API server (`kjobs controller --kubeconfig ...`).
"""

CONTROLLER_NAMES = (
    "job",
    "scheduler",
    "nodelifecycle",
    "tainteviction",
    "podgc",
    "disruption",
    "garbagecollector",
    "ttl",
    "cronjob",
    "rootcacertpublisher",
    "serviceaccount-controller",
    "clusterrole-aggregation-controller",
    "endpoint-controller",
    "endpointslice-controller",
    "persistentvolume-binder",
    "persistentvolumeclaim-protection",
    "persistentvolume-protection",
    "resourcequota-controller",
)
"""Every controller kjobs has, by the name `kjobs controller --controllers` and `kjobs.cluster` use."""

SERVED_ONLY = (
    "rootcacertpublisher",
    "clusterrole-aggregation-controller",
    "endpoint-controller",
    "endpointslice-controller",
)
"""What only a served cluster needs: the root CA publisher's ConfigMap is for clients of its TLS, RBAC's
aggregated roles matter only to users other than the embedded cluster's own, and a Service's Endpoints and
EndpointSlices are for users reading them (nothing routes to a Service here); `kjobs up` runs them all."""

EMBEDDED_CONTROLLERS = tuple(name for name in CONTROLLER_NAMES if name not in SERVED_ONLY)
"""What an embedded cluster runs unless told otherwise (`kjobs run`, `kjobs simulate`, the pytest plugin)."""


def select_controllers(spec: str) -> tuple[str, ...]:
    """The controllers a `--controllers` value names, in `CONTROLLER_NAMES` order, read as kube-controller-manager
    reads its flag (cmd/kube-controller-manager/app/options: `*` enables every controller, `foo` enables foo,
    `-foo` disables foo, whatever the order); `all` is kjobs' spelling of `*`. Raises ValueError naming any
    unknown controller."""
    items = [item.strip() for item in spec.split(",") if item.strip()]
    unknown = [item for item in items if item.lstrip("-") not in (*CONTROLLER_NAMES, "*", "all")]
    if unknown:
        raise ValueError(f"unknown controller(s) {', '.join(unknown)}; choose from {', '.join(CONTROLLER_NAMES)}")
    every = any(item in ("*", "all") for item in items)
    disabled = {item[1:] for item in items if item.startswith("-")}
    enabled = {item for item in items if not item.startswith("-")}
    return tuple(n for n in CONTROLLER_NAMES if (every or n in enabled) and n not in disabled)
