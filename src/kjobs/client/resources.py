"""The resources kjobs' components read and write, and their REST paths."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """A group/version/plural, and whether it lives in namespaces."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        """`batch/v1` or `v1`."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The REST path: `/api/v1/namespaces/ns/pods/name/status`, `/apis/batch/v1/jobs`, ..."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base


PODS = ResourceRef("", "v1", "pods", "Pod")
NODES = ResourceRef("", "v1", "nodes", "Node", namespaced=False)
EVENTS = ResourceRef("", "v1", "events", "Event")
CONFIG_MAPS = ResourceRef("", "v1", "configmaps", "ConfigMap")
SECRETS = ResourceRef("", "v1", "secrets", "Secret")
SERVICES = ResourceRef("", "v1", "services", "Service")
NAMESPACES = ResourceRef("", "v1", "namespaces", "Namespace", namespaced=False)
JOBS = ResourceRef("batch", "v1", "jobs", "Job")
CRONJOBS = ResourceRef("batch", "v1", "cronjobs", "CronJob")
LEASES = ResourceRef("coordination.k8s.io", "v1", "leases", "Lease")
PDBS = ResourceRef("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget")
PRIORITY_CLASSES = ResourceRef("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False)
SERVICE_ACCOUNTS = ResourceRef("", "v1", "serviceaccounts", "ServiceAccount")
RESOURCE_QUOTAS = ResourceRef("", "v1", "resourcequotas", "ResourceQuota")
LIMIT_RANGES = ResourceRef("", "v1", "limitranges", "LimitRange")
ENDPOINTS = ResourceRef("", "v1", "endpoints", "Endpoints")
ENDPOINT_SLICES = ResourceRef("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice")
ROLES = ResourceRef("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDINGS = ResourceRef("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
CLUSTER_ROLES = ResourceRef("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False)
CLUSTER_ROLE_BINDINGS = ResourceRef(
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False
)
PERSISTENT_VOLUME_CLAIMS = ResourceRef("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
PERSISTENT_VOLUMES = ResourceRef("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
STORAGE_CLASSES = ResourceRef("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False)
