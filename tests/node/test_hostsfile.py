"""A pod's hostname and hosts file, row for row as the kubelet's tests have them (pkg/kubelet/kubelet_pods_test.go
`TestManagedHostsFileContent`, `TestNodeHostsFileContent`; pkg/kubelet/kubelet_test.go `TestTruncatePodHostname`,
kubernetes/kubernetes v1.32), and the DNS lines kjobs writes below them for headless Services
(`kjobs.node.poddns`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kjobs.node import hostsfile, poddns

LOCAL = (
    "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n"
    "fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
)
MANAGED = "# Kubernetes-managed hosts file.\n" + LOCAL
FOO = {"ip": "123.45.67.89", "hostnames": ["foo", "bar", "baz"]}
PARK = {"ip": "456.78.90.123", "hostnames": ["park", "doo", "boo"]}
ALIASES_FOO = "\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\tbaz\n"
ALIASES_BOTH = ALIASES_FOO + "456.78.90.123\tpark\tdoo\tboo\n"


@pytest.mark.parametrize(
    ("host_ips", "hostname", "domain", "aliases", "expected"),
    [
        (["123.45.67.89"], "podFoo", "", [], MANAGED + "123.45.67.89\tpodFoo\n"),
        (["203.0.113.1"], "podFoo", "domainFoo", [], MANAGED + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n"),
        (
            ["203.0.113.1"],
            "podFoo",
            "domainFoo",
            [FOO],
            MANAGED + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n" + ALIASES_FOO,
        ),
        (
            ["203.0.113.1"],
            "podFoo",
            "domainFoo",
            [FOO, PARK],
            MANAGED + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\n" + ALIASES_BOTH,
        ),
        (
            ["203.0.113.1", "fd00::6"],
            "podFoo",
            "domainFoo",
            [],
            MANAGED + "203.0.113.1\tpodFoo.domainFoo\tpodFoo\nfd00::6\tpodFoo.domainFoo\tpodFoo\n",
        ),
    ],
)
def test_managed_hosts_file_content(
    host_ips: list[str], hostname: str, domain: str, aliases: list[Any], expected: str
) -> None:
    assert hostsfile.managed_hosts_file_content(host_ips, hostname, domain, aliases) == expected


FILE1 = "# hosts file for testing.\n" + LOCAL + "123.45.67.89\tsome.domain\n"
FILE2 = "# another hosts file for testing.\n" + LOCAL + "12.34.56.78\tanother.domain\n"
HOST_NETWORK = "# Kubernetes-managed hosts file (host network).\n"


@pytest.mark.parametrize(
    ("name", "aliases", "raw", "expected"),
    [
        ("hosts_test_file1", [], FILE1, HOST_NETWORK + FILE1),
        ("hosts_test_file2", [], FILE2, HOST_NETWORK + FILE2),
        ("hosts_test_file1_with_host_aliases", [FOO], FILE1, HOST_NETWORK + FILE1 + ALIASES_FOO),
        ("hosts_test_file2_with_host_aliases", [FOO, PARK], FILE2, HOST_NETWORK + FILE2 + ALIASES_BOTH),
    ],
    ids=lambda v: v if isinstance(v, str) and v.startswith("hosts_test") else "",
)
def test_node_hosts_file_content(tmp_path: Path, name: str, aliases: list[Any], raw: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(raw)
    assert hostsfile.node_hosts_file_content(str(path), aliases) == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param("test.pod.hostname", "test.pod.hostname", id="valid hostname"),
        pytest.param("1234567." * 9, "1234567." * 7 + "1234567", id="too long hostname"),
        pytest.param("1234567." * 7 + "123456.1234567.", "1234567." * 7 + "123456", id="hostname end with ."),
        pytest.param("1234567." * 7 + "123456-1234567.", "1234567." * 7 + "123456", id="hostname end with -"),
    ],
)
def test_truncate_pod_hostname(given: str, expected: str) -> None:
    assert hostsfile.truncate_pod_hostname("test-pod", given) == expected


def _pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "example-job-0-abcde", "namespace": "team"}, "spec": spec}


def test_an_indexed_job_pod_is_named_by_its_hostname_in_its_subdomain() -> None:
    pod = _pod(hostname="example-job-0", subdomain="headless-svc")
    assert hostsfile.pod_hostname_and_domain(pod) == ("example-job-0", "headless-svc.team.svc.cluster.local")
    assert hostsfile.pod_kernel_hostname(pod) == "example-job-0"
    assert hostsfile.pod_kernel_hostname({**pod, "spec": {**pod["spec"], "setHostnameAsFQDN": True}}) == (
        "example-job-0.headless-svc.team.svc.cluster.local"
    )
    assert hostsfile.pod_hostname_and_domain(_pod()) == ("example-job-0-abcde", "")
    assert hostsfile.pod_hosts_file_content(pod, ["127.0.0.1"]) == (
        MANAGED + "127.0.0.1\texample-job-0.headless-svc.team.svc.cluster.local\texample-job-0\n"
    )


def test_a_fqdn_longer_than_64_characters_fails_as_the_kubelet_fails_the_sandbox() -> None:
    pod = _pod(hostname="h" * 40, subdomain="headless-svc", setHostnameAsFQDN=True)
    with pytest.raises(hostsfile.HostnameError) as raised:
        hostsfile.pod_kernel_hostname(pod)
    assert str(raised.value) == (
        f"failed to construct FQDN from pod hostname and cluster domain, FQDN {'h' * 40}.headless-svc.team.svc"
        ".cluster.local is too long (64 characters is the max, 76 characters requested)"
    )


def test_only_pods_that_set_a_name_or_aliases_get_their_own_network_view() -> None:
    assert not hostsfile.wants_own_network(_pod(containers=[{"name": "c"}]))
    for field, value in [("hostname", "h"), ("subdomain", "s"), ("hostAliases", [FOO]), ("setHostnameAsFQDN", True)]:
        assert hostsfile.wants_own_network(_pod(**{field: value}))
    indexed = _pod(hostname="example-job-0")
    indexed["metadata"]["annotations"] = {"batch.kubernetes.io/job-completion-index": "0"}
    assert not hostsfile.wants_own_network(indexed)  # the Job controller's name alone: started as before
    assert hostsfile.wants_own_network({**indexed, "spec": {**indexed["spec"], "subdomain": "headless-svc"}})


def test_rewriting_in_place_keeps_the_inode_a_bind_mount_holds(tmp_path: Path) -> None:
    path = tmp_path / "etc-hosts"
    hostsfile.write_in_place(str(path), "a much longer first content\n")
    inode = path.stat().st_ino
    hostsfile.write_in_place(str(path), "short\n")
    assert (path.read_text(), path.stat().st_ino) == ("short\n", inode)


def _svc(name: str, cluster_ip: str = "None", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "team"}, "spec": {"clusterIP": cluster_ip, **spec}}


def _member(index: int, *, ready: bool = True, phase: str = "Running", **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": f"example-job-{index}-x", "namespace": "team", "labels": {"job-name": "example-job"}},
        "spec": {"hostname": f"example-job-{index}", "subdomain": "headless-svc", **extra},
        "status": {
            "phase": phase,
            "podIP": "127.0.0.1",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


SELECTOR = {"job-name": "example-job"}


def _names(lines: list[str]) -> list[str]:
    return [line.split("\t")[1] for line in lines]


def test_a_headless_service_names_itself_and_its_ready_pods_with_every_search_path_form() -> None:
    lines = poddns.records("team", [_svc("headless-svc", selector=SELECTOR)], [_member(1), _member(0)])
    assert lines[0].split("\t") == [
        "127.0.0.1",
        "headless-svc.team.svc.cluster.local",
        "headless-svc.team.svc",
        "headless-svc.team",
        "headless-svc",
    ]
    assert lines[1].split("\t") == [
        "127.0.0.1",
        "example-job-0.headless-svc.team.svc.cluster.local",
        "example-job-0.headless-svc.team.svc",
        "example-job-0.headless-svc.team",
        "example-job-0.headless-svc",
    ]
    assert _names(lines[2:]) == ["example-job-1.headless-svc.team.svc.cluster.local"]


def test_what_cluster_dns_would_not_answer_is_left_out() -> None:
    pods = [
        _member(0, ready=False),  # not ready
        _member(1, phase="Succeeded"),  # terminal
        _member(2, subdomain="other"),  # ready, selected, but names another Service: the Service name only
        {**_member(3), "metadata": {**_member(3)["metadata"], "namespace": "elsewhere"}},
    ]
    services = [_svc("headless-svc", selector=SELECTOR), _svc("normal", "10.96.0.10", selector=SELECTOR)]
    assert _names(poddns.records("team", services, pods)) == ["headless-svc.team.svc.cluster.local"]
    assert poddns.records("team", [_svc("headless-svc")], [_member(0)]) == []  # no selector, no endpoints


def test_publish_not_ready_addresses_names_pods_that_are_not_ready_yet() -> None:
    services = [_svc("headless-svc", selector=SELECTOR, publishNotReadyAddresses=True)]
    lines = poddns.records("team", services, [_member(0, ready=False)])
    assert _names(lines) == ["headless-svc.team.svc.cluster.local", "example-job-0.headless-svc.team.svc.cluster.local"]
    assert poddns.render([]) == ""
    assert poddns.render(lines).startswith("\n# Cluster DNS names of headless Services")


def test_more_hosts_files_gather_changes_longer_before_rewriting_them() -> None:
    assert [poddns.batch_seconds(n) for n in (1, 49, 50, 500, 5000)] == [0.05, 0.05, 0.1, 0.55, 1.0]


def test_a_pod_that_ended_keeps_its_names_for_the_dns_cache_ttl() -> None:
    ended = _member(1, ready=False, phase="Succeeded")
    ended["status"]["containerStatuses"] = [{"state": {"terminated": {"finishedAt": "2026-12-04T19:00:00Z"}}}]
    at = poddns.ended_at(ended)
    assert at is not None
    services = [_svc("headless-svc", selector=SELECTOR)]
    named = ["headless-svc.team.svc.cluster.local", "example-job-1.headless-svc.team.svc.cluster.local"]
    assert _names(poddns.records("team", services, [ended], now=at + 29)) == named
    assert poddns.records("team", services, [ended], now=at + poddns.LINGER_SECONDS) == []
    assert poddns.records("team", services, [ended]) == []


def test_write_in_place_does_not_follow_a_symlink_put_in_the_files_place(tmp_path: Path) -> None:
    """The hosts file is in the pod's directory: a container that swapped it for a symlink must not have the node
    write the hosts lines into a file of its choosing (docs/security.md)."""
    victim = tmp_path / "kjobs.db"
    victim.write_text("data")
    (tmp_path / "etc-hosts").symlink_to(victim)
    with pytest.raises(OSError):
        hostsfile.write_in_place(str(tmp_path / "etc-hosts"), "127.0.0.1 localhost\n")
    assert victim.read_text() == "data"
    hostsfile.write_in_place(str(tmp_path / "hosts"), "127.0.0.1 localhost\n")
    assert (tmp_path / "hosts").read_text() == "127.0.0.1 localhost\n"
