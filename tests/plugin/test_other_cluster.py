"""`KjobsCluster.connect`: the helpers over HTTP to another cluster's kubeconfig (here an in-process cluster's,
reached only through its kubeconfig), and the faults that need the in-process components refused."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kjobs.testing import KjobsCluster, UnsupportedFault

SCRIPT = "trap 'exit 143' TERM; echo over http; sleep 30 & wait"
"""Takes the eviction's SIGTERM (a trap): as PID 1 with no handler it would run out its 30 s grace period."""
JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "remote"},
    "spec": {
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "m", "image": "x", "command": ["sh", "-c", SCRIPT]}],
            }
        }
    },
}


@pytest.fixture
def other(kjobs_cluster: KjobsCluster) -> Iterator[KjobsCluster]:
    remote = KjobsCluster.connect(kjobs_cluster.kubeconfig)
    yield remote
    remote.stop()


def test_helpers_work_through_the_kubeconfig_alone(other: KjobsCluster) -> None:
    assert other.embedded is None
    other.mark()
    other.apply(JOB)
    pod = other.pod_of("remote")
    assert other.logs(pod) == "over http\n"
    other.evict(pod)
    name = pod["metadata"]["name"]
    # the pod's trap ends it at once: it may be gone before the wait looks (then the wait gives `{}`)
    last = other.wait_for("pod", name, "delete")
    assert last.get("metadata", {}).get("name", name) == name
    assert name not in [p["metadata"]["name"] for p in other.objects("pod")]
    other.clean()
    assert other.objects("job") == []


def test_in_process_faults_are_refused(other: KjobsCluster) -> None:
    with pytest.raises(UnsupportedFault, match="not --kjobs-kubeconfig"):
        other.kill_node_agent("kjobs-node")
    with pytest.raises(UnsupportedFault, match="virtual time needs the in-process cluster"):
        other.advance(10)
