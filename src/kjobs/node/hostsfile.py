"""A pod's hostname and the `/etc/hosts` its containers see, as the kubelet makes them.

Design note: the kubelet names a pod's sandbox (pkg/kubelet/kubelet_pods.go `GeneratePodHostNameAndDomain`,
`truncatePodHostnameIfNeeded`; pkg/kubelet/util/util.go `GetNodenameForKernel`) and writes its hosts file
`/var/lib/kubelet/pods/<uid>/etc-hosts` (`ensureHostsFile`, `managedHostsFileContent`, `nodeHostsFileContent`,
`hostsEntriesFromHostAliases`), bound at `/etc/hosts` in every container that has no volumeMount there. A
hostNetwork pod keeps the node's hostname and gets the node's hosts file (plus its hostAliases). Upstream files as
of kubernetes/kubernetes v1.32.

kjobs adds, below the kubelet's part, what cluster DNS (CoreDNS's kubernetes plugin) would answer for the
namespace's headless Services (`kjobs.node.poddns`): there is no DNS server here, and every pod's IP is this
machine's loopback, so a name that resolves is reachable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from kjobs.api.names import JOB_COMPLETION_INDEX_ANNOTATION
from kjobs.api.types import Obj

MANAGED_HOSTS_HEADER = "# Kubernetes-managed hosts file.\n"
MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK = "# Kubernetes-managed hosts file (host network).\n"
ETC_HOSTS_PATH = "/etc/hosts"
HOSTNAME_MAX_LEN = 63
"""`hostnameMaxLen` (pkg/kubelet/kubelet_pods.go): a DNS label."""
FQDN_MAX_LEN = 64
"""`GetNodenameForKernel`'s limit (the kernel's `HOST_NAME_MAX`)."""
CLUSTER_DOMAIN = "cluster.local"
"""The kubelet's `--cluster-domain` as kubeadm and kind set it."""


class HostnameError(ValueError):
    """The pod's hostname cannot be set: the kubelet's sandbox-creation error text."""


def wants_own_network(pod: Obj) -> bool:
    """Whether a pod sets anything that only its own hostname or hosts file shows (`subdomain`, `hostAliases`,
    `setHostnameAsFQDN`, `hostname`): its containers then run in their own UTS and mount namespaces. A few dict
    lookups: most pods set none.

    The `hostname` the Job controller gives every pod of an Indexed Job (`<job>-<index>`) alone does not count:
    it would put an interpreter start before each container of every Indexed Job (the `kjobs run` benchmark is
    one), for a name its `$HOSTNAME` already carries; with a `subdomain` (the pod-to-pod case) it does."""
    spec = pod.get("spec") or {}
    if spec.get("subdomain") or spec.get("hostAliases") or spec.get("setHostnameAsFQDN"):
        return True
    if not spec.get("hostname"):
        return False
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return JOB_COMPLETION_INDEX_ANNOTATION not in annotations


def truncate_pod_hostname(pod_name: str, hostname: str) -> str:
    """`truncatePodHostnameIfNeeded`: at most 63 characters, without a trailing `-` or `.`."""
    if len(hostname) <= HOSTNAME_MAX_LEN:
        return hostname
    truncated = hostname[:HOSTNAME_MAX_LEN].rstrip("-.")
    if not truncated:
        raise HostnameError(f'hostname for pod "{pod_name}" was invalid: "{truncated}"')
    return truncated


def pod_hostname_and_domain(pod: Obj, cluster_domain: str = CLUSTER_DOMAIN) -> tuple[str, str]:
    """`GeneratePodHostNameAndDomain`: (spec.hostname or the pod's name, truncated; `<subdomain>.<ns>.svc.<cluster
    domain>` when a subdomain is set, else ""). Both fields were validated as DNS labels by the API server."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    name = str(meta.get("name") or "")
    hostname = truncate_pod_hostname(name, str(spec.get("hostname") or name))
    subdomain = str(spec.get("subdomain") or "")
    domain = f"{subdomain}.{meta.get('namespace') or 'default'}.svc.{cluster_domain}" if subdomain else ""
    return hostname, domain


def kernel_hostname(hostname: str, domain: str, set_hostname_as_fqdn: bool) -> str:
    """`GetNodenameForKernel`: the FQDN when `setHostnameAsFQDN` and there is a domain, else the hostname."""
    if not set_hostname_as_fqdn or not domain:
        return hostname
    fqdn = f"{hostname}.{domain}"
    if len(fqdn) > FQDN_MAX_LEN:
        raise HostnameError(
            f"failed to construct FQDN from pod hostname and cluster domain, FQDN {fqdn} is too long "
            f"({FQDN_MAX_LEN} characters is the max, {len(fqdn)} characters requested)"
        )
    return fqdn


def pod_kernel_hostname(pod: Obj) -> str:
    """The hostname a (non-hostNetwork) pod's containers see."""
    hostname, domain = pod_hostname_and_domain(pod)
    return kernel_hostname(hostname, domain, (pod.get("spec") or {}).get("setHostnameAsFQDN") is True)


def host_aliases_entries(host_aliases: Iterable[Obj] | None) -> str:
    """`hostsEntriesFromHostAliases`: a blank line, the header, then one `IP<TAB>name<TAB>name...` line per alias."""
    aliases = list(host_aliases or ())
    if not aliases:
        return ""
    lines = ["\n", "# Entries added by HostAliases.\n"]
    for alias in aliases:
        lines.append("\t".join([str(alias.get("ip") or ""), *(str(h) for h in alias.get("hostnames") or ())]) + "\n")
    return "".join(lines)


def managed_hosts_file_content(
    host_ips: Iterable[str], hostname: str, domain: str, host_aliases: Iterable[Obj] | None
) -> str:
    """`managedHostsFileContent`: the header, localhost lines, a line per pod IP, then the aliases."""
    parts = [
        MANAGED_HOSTS_HEADER,
        "127.0.0.1\tlocalhost\n",
        "::1\tlocalhost ip6-localhost ip6-loopback\n",
        "fe00::0\tip6-localnet\n",
        "fe00::0\tip6-mcastprefix\n",
        "fe00::1\tip6-allnodes\n",
        "fe00::2\tip6-allrouters\n",
    ]
    for ip in host_ips:
        parts.append(f"{ip}\t{hostname}.{domain}\t{hostname}\n" if domain else f"{ip}\t{hostname}\n")
    parts.append(host_aliases_entries(host_aliases))
    return "".join(parts)


def node_hosts_file_content(path: str, host_aliases: Iterable[Obj] | None) -> str:
    """`nodeHostsFileContent`: the host-network header, the node's file as it is, then the aliases."""
    with open(path, encoding="utf-8", errors="surrogateescape") as source:
        content = source.read()
    return MANAGED_HOSTS_HEADER_WITH_HOST_NETWORK + content + host_aliases_entries(host_aliases)


def pod_hosts_file_content(pod: Obj, pod_ips: Iterable[str], node_hosts: str = ETC_HOSTS_PATH) -> str:
    """What the kubelet's `ensureHostsFile` writes for `pod`."""
    spec = pod.get("spec") or {}
    if spec.get("hostNetwork") is True:
        return node_hosts_file_content(node_hosts, spec.get("hostAliases"))
    hostname, domain = pod_hostname_and_domain(pod)
    return managed_hosts_file_content(pod_ips, hostname, domain, spec.get("hostAliases"))


def mounts_etc_hosts(container: Obj) -> bool:
    """Whether the container mounts a volume at `/etc/hosts` itself (the kubelet then binds no hosts file)."""
    return any(
        os.path.normpath(str(m.get("mountPath") or "")) == ETC_HOSTS_PATH for m in container.get("volumeMounts") or ()
    )


def write_in_place(path: str, content: str) -> None:
    """Replace the file's contents without replacing the file: it is bind-mounted into running containers, which
    keep seeing the inode they were given (a rename would leave them the old one). A symlink put in its place (the
    pod's directory is its working directory) is not followed: the write would land in a file of the user's
    choosing (docs/security.md)."""
    data = content.encode("utf-8", "surrogateescape")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
