"""One client interface for every controller and agent, with two transports.

`Client` (in `base`) is the seam: get/list/watch/create/update/patch/delete on Kubernetes resources, raising
`kjobs.api.errors.ApiError` with the server's `Status`. `HttpClient` speaks Kubernetes' REST protocol to any API
server (kjobs' own or a real cluster, from a kubeconfig); `LocalClient` calls kjobs' API service in process,
with no HTTP, for `kjobs run` and simulation. `Informer` builds a watched cache on either.
"""

from kjobs.client.base import Client, WatchEvent
from kjobs.client.resources import EVENTS, JOBS, LEASES, NAMESPACES, NODES, PDBS, PODS, ResourceRef

__all__ = ["EVENTS", "JOBS", "LEASES", "NAMESPACES", "NODES", "PDBS", "PODS", "Client", "ResourceRef", "WatchEvent"]
