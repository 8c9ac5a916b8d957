"""How the simulated runtime reads a container's shell command: `sleep` with its units and `infinity` as a node's
`sleep` would run it, and a warning, not a silent misreading, for the control flow it does not run (per-index
fates are `outcome=`'s job, shown as the README shows it)."""

from __future__ import annotations

import pytest

from kjobs.api.types import Obj
from kjobs.testing import KjobsCluster, Outcome, SimulatedCommandWarning

HOUR = 3600
YEAR = 365 * 86400


def job(name: str, command: str, **spec: object) -> Obj:
    template = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", command]}],
        }
    }
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"template": template, **spec}}


@pytest.mark.kjobs(runtime="simulated", virtual_time="manual")
def test_sleep_infinity_never_ends_by_itself(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply(job("server", "sleep infinity"))
    kjobs_cluster.advance(HOUR)
    assert kjobs_cluster.get("job", "server")["status"].get("active") == 1  # not Complete at once, as before
    first = kjobs_cluster.pod_of("server", timeout=5)["metadata"]["name"]
    kjobs_cluster.evict(first)
    kjobs_cluster.advance(60)  # only a signal ends it; its replacement runs on
    status = kjobs_cluster.get("job", "server")["status"]
    assert (status.get("active"), status.get("failed")) == (1, 1)
    assert kjobs_cluster.pod_of("server", timeout=5)["metadata"]["name"] != first


@pytest.mark.kjobs(runtime="simulated", virtual_time="manual")
def test_sleep_reads_its_units(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply(job("two-minutes", "sleep 2m"))
    kjobs_cluster.advance(100)
    assert not kjobs_cluster.get("job", "two-minutes")["status"].get("succeeded")  # 2 minutes, not 2 seconds
    kjobs_cluster.advance(30)
    assert kjobs_cluster.wait_for("job", "two-minutes", "Complete", timeout=5)["status"]["succeeded"] == 1


PER_INDEX = 'if [ "$JOB_COMPLETION_INDEX" = 1 ]; then exit 3; fi; exit 0'


@pytest.mark.kjobs(runtime="simulated")
def test_control_flow_is_read_with_a_warning(kjobs_cluster: KjobsCluster) -> None:
    indexed = job("per-index", PER_INDEX, completionMode="Indexed", completions=3, parallelism=3)
    with pytest.warns(SimulatedCommandWarning, match=r"does not run shell: .* read as running 0 s, then exiting 3"):
        kjobs_cluster.apply({**indexed, "spec": {**indexed["spec"], "backoffLimitPerIndex": 0}})
        kjobs_cluster.wait_for("job", "per-index", "Failed")


def index_1_fails(pod: Obj, container: Obj, attempt: int) -> Outcome:
    index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
    return Outcome(duration=30, exit_code=3 if index == "1" else 0)


@pytest.mark.kjobs(runtime="simulated", outcome=index_1_fails)
def test_outcome_decides_each_index(kjobs_cluster: KjobsCluster) -> None:
    indexed = job("per-index", "true", completionMode="Indexed", completions=3, parallelism=3)
    kjobs_cluster.apply({**indexed, "spec": {**indexed["spec"], "backoffLimitPerIndex": 1, "maxFailedIndexes": 1}})
    done = kjobs_cluster.wait_for("job", "per-index", "Failed")
    assert [c["reason"] for c in done["status"]["conditions"] if c["type"] == "Failed"] == ["FailedIndexes"]
    assert (done["status"]["failedIndexes"], done["status"]["completedIndexes"], done["status"]["failed"]) == (
        "1",
        "0,2",
        2,
    )


@pytest.mark.kjobs(runtime="simulated", virtual_time="manual")
def test_an_advance_longer_than_its_timeout_says_how_far_it_got(kjobs_cluster: KjobsCluster) -> None:
    start = kjobs_cluster.clock.now()
    with pytest.raises(TimeoutError, match=r"did not finish the helper's work in 0\.2s \(virtual time ran \d"):
        kjobs_cluster.advance(YEAR, timeout=0.2)
    assert start < kjobs_cluster.clock.now() < start + YEAR
    kjobs_cluster.advance(60)  # the cluster goes on from there


@pytest.mark.kjobs(runtime="simulated", virtual_time="manual")
def test_sigterm_ends_only_a_command_that_traps_it(kjobs_cluster: KjobsCluster) -> None:
    """As a container's PID 1 (docs/sigterm42.md): `sleep` takes no SIGTERM and an evicted pod runs out its 30 s
    grace period; `trap 'exit 7' TERM` exits at once, as the same commands on the process runtime do."""
    for name, command in (("plain", "sleep 3600"), ("trapping", "trap 'echo bye; exit 7' TERM; sleep 3600 & wait")):
        # with a podFailurePolicy a deleted pod is counted once it has ended, not while it terminates
        policy = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}
        kjobs_cluster.apply(job(name, command, backoffLimit=0, podFailurePolicy=policy))
        kjobs_cluster.evict(kjobs_cluster.pod_of(name, timeout=5)["metadata"]["name"])
    kjobs_cluster.advance(5)
    failed = {name: kjobs_cluster.get("job", name)["status"].get("failed") for name in ("plain", "trapping")}
    assert failed == {"plain": None, "trapping": 1}
    kjobs_cluster.advance(30)
    assert kjobs_cluster.get("job", "plain")["status"].get("failed") == 1
