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
)
"""Every controller kjobs has, by the name `kjobs controller --controllers` and `kjobs.cluster` use."""
