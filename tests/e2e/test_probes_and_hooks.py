"""Probes and lifecycle hooks of a Job's containers, run on real processes as a kubelet runs them
(docs/lifecycle41.md; `kjobs.node.handlerrunner`, `kjobs.node.probing`).

Each test is a Job whose container is a shell script, on the plugin's in-process cluster (process runtime), with
probe periods and grace periods of a second or two: what a user reads through the API (pod phase, container
state and exit code, `started`/`ready`, the Job's `ready` and `failed` counts, events) is checked against what the
kubelet does (pkg/kubelet/prober, pkg/kubelet/lifecycle, pkg/kubelet/kuberuntime/kuberuntime_container.go).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from kjobs.api.types import Obj
from kjobs.testing import KjobsCluster

pytestmark = pytest.mark.e2e


def job(name: str, script: str, *, restart: str = "Never", grace: int = 2, retries: int = 0, **container: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": retries,
            "template": {
                "spec": {
                    "restartPolicy": restart,
                    "terminationGracePeriodSeconds": grace,
                    "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", script], **container}],
                }
            },
        },
    }


def events(cluster: KjobsCluster, pod: Obj, reason: str) -> list[str]:
    name = pod["metadata"]["name"]
    return [
        e.get("message", "")
        for e in cluster.objects("events")
        if e.get("reason") == reason and (e.get("involvedObject") or {}).get("name") == name
    ]


def main_status(pod: Obj) -> Obj:
    return next(s for s in pod["status"].get("containerStatuses") or () if s["name"] == "main")


def delete_and_keep(cluster: KjobsCluster, pod: Obj) -> Obj:
    """Delete the pod with a finalizer of the test's on it, so that its last status can be read, as upstream's
    e2e tests do; the stopped pod."""
    from kubernetes import client

    core = client.CoreV1Api(cluster.api_client)
    name = pod["metadata"]["name"]
    finalizers = [*(pod["metadata"].get("finalizers") or ()), "kjobs.test/keep"]
    core.patch_namespaced_pod(name, "default", {"metadata": {"finalizers": finalizers}})
    core.delete_namespaced_pod(name, "default")
    return cluster.wait_for("pods", name, lambda p: p["status"].get("phase") in ("Succeeded", "Failed"))


def wait_until(check: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return result


def test_a_failed_liveness_probe_kills_the_container_and_fails_the_pod_once(kjobs_cluster: KjobsCluster) -> None:
    """restartPolicy Never: the kubelet kills a container whose liveness probe failed `failureThreshold` times
    (`Unhealthy` events, `Killing` "Container main failed liveness probe"); the shell, PID 1 with no trap, takes no
    SIGTERM and is SIGKILLed at the end of its 2 s grace period (137), the pod fails and the Job counts one
    failure. Before, kjobs ran no probe: the container slept its 100 s."""
    probe = {"exec": {"command": ["cat", "healthy"]}, "periodSeconds": 1, "failureThreshold": 2}
    kjobs_cluster.apply(job("live", "touch healthy; sleep 0.5; rm healthy; sleep 100", livenessProbe=probe))
    found = kjobs_cluster.wait_for("job", "live", "Failed", timeout=20)
    assert found["status"]["failed"] == 1
    [pod] = kjobs_cluster.objects("pods", label_selector="job-name=live")
    assert pod["status"]["phase"] == "Failed"
    terminated = main_status(pod)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "Error")
    unhealthy = events(kjobs_cluster, pod, "Unhealthy")
    assert unhealthy and unhealthy[0].startswith("Liveness probe failed: cat:"), unhealthy
    assert "Container main failed liveness probe" in events(kjobs_cluster, pod, "Killing")


def test_a_readiness_probe_decides_ready_and_the_jobs_ready_count(kjobs_cluster: KjobsCluster) -> None:
    """A container with a readinessProbe is not ready until the probe succeeds (the kubelet's default before the
    first success is failure), and the Job's `status.ready` follows; before, kjobs read it ready at its start."""
    probe = {"exec": {"command": ["test", "-e", "ready"]}, "periodSeconds": 1}
    kjobs_cluster.apply(job("ready", "sleep 1.5; touch ready; sleep 100", readinessProbe=probe))
    pod = kjobs_cluster.pod_of("ready", "phase=Running")
    status = main_status(pod)
    assert (status["started"], status["ready"]) == (True, False)
    assert kjobs_cluster.get("job", "ready")["status"].get("ready") == 0
    kjobs_cluster.wait_for("job", "ready", lambda j: j.get("status", {}).get("ready") == 1, timeout=20)
    assert main_status(kjobs_cluster.get("pods", pod["metadata"]["name"]))["ready"] is True


def test_a_startup_probe_holds_started_and_a_failed_one_restarts_the_container(kjobs_cluster: KjobsCluster) -> None:
    """restartPolicy OnFailure: `started` is false until the startup probe succeeds; one that fails
    `failureThreshold` times kills the container, which restarts (restartCount 1) and runs again."""
    probe = {"exec": {"command": ["test", "-e", "up"]}, "periodSeconds": 1, "failureThreshold": 2}
    script = "if [ -e first ]; then touch up; sleep 100; fi; touch first; sleep 100"
    kjobs_cluster.apply(job("startup", script, restart="OnFailure", retries=3, startupProbe=probe))
    pod = kjobs_cluster.pod_of("startup", "phase=Running")
    assert main_status(pod)["started"] is False
    name = pod["metadata"]["name"]

    def restarted_and_started() -> bool:
        status = main_status(kjobs_cluster.get("pods", name))
        return status["restartCount"] == 1 and status.get("started") is True

    wait_until(restarted_and_started)
    found = kjobs_cluster.get("pods", name)
    assert "Container main failed startup probe, will be restarted" in events(kjobs_cluster, found, "Killing")


def test_pre_stop_runs_before_sigterm_and_the_pod_deleted_after_exit_0_succeeds(kjobs_cluster: KjobsCluster) -> None:
    """`kubectl delete pod`: the preStop hook runs first (it writes a file the SIGTERM trap prints), then SIGTERM;
    the container exits 0, so the deleted pod ends Succeeded (KEP-3329: all containers exited 0)."""
    script = "trap 'cat stopped; exit 0' TERM; echo up; while true; do sleep 0.1; done"
    hook = {"preStop": {"exec": {"command": ["sh", "-c", "sleep 0.3; echo pre-stop ran > stopped"]}}}
    kjobs_cluster.apply(job("prestop", script, grace=5, lifecycle=hook))
    pod = kjobs_cluster.pod_of("prestop", "phase=Running")
    name = pod["metadata"]["name"]
    wait_until(lambda: kjobs_cluster.logs(name) == "up\n")
    ended = delete_and_keep(kjobs_cluster, pod)
    assert ended["status"]["phase"] == "Succeeded"
    assert main_status(ended)["state"]["terminated"]["exitCode"] == 0
    assert "pre-stop ran" in kjobs_cluster.logs(name)


def test_a_pre_stop_hook_longer_than_the_grace_period_is_cut_short(kjobs_cluster: KjobsCluster) -> None:
    """A preStop hook that outlasts the grace period: SIGTERM at its end, SIGKILL 2 s later (the kubelet's minimum
    after the hook): a container that ignores SIGTERM ends 137 about grace + 2 s after the deletion."""
    script = "trap '' TERM; echo up; while true; do sleep 0.1; done"
    hook = {"preStop": {"exec": {"command": ["sleep", "30"]}}}
    kjobs_cluster.apply(job("longstop", script, grace=1, lifecycle=hook))
    pod = kjobs_cluster.pod_of("longstop", "phase=Running")
    begun = time.monotonic()
    ended = delete_and_keep(kjobs_cluster, pod)
    took = time.monotonic() - begun
    assert main_status(ended)["state"]["terminated"]["exitCode"] == 137
    assert 2.5 <= took < 8, took


def test_a_failed_post_start_hook_kills_the_container(kjobs_cluster: KjobsCluster) -> None:
    """`startContainer`: a postStart hook that fails is a `FailedPostStartHook` event with the hook runner's
    message, and the container is killed (`sleep`, with no SIGTERM handler, at the end of its grace period: 137):
    the pod fails."""
    hook = {"postStart": {"exec": {"command": ["sh", "-c", "echo no; exit 3"]}}}
    kjobs_cluster.apply(job("poststart", "sleep 100", lifecycle=hook))
    kjobs_cluster.wait_for("job", "poststart", "Failed", timeout=20)
    [pod] = kjobs_cluster.objects("pods", label_selector="job-name=poststart")
    assert main_status(pod)["state"]["terminated"]["exitCode"] == 137
    [message] = events(kjobs_cluster, pod, "FailedPostStartHook")
    meta = pod["metadata"]
    assert message == (
        'Exec lifecycle hook ([sh -c echo no; exit 3]) for Container "main" in Pod '
        f"\"{meta['name']}_default({meta['uid']})\" failed - error: command 'sh -c echo no; exit 3' exited with 3: "
        ', message: "no\\n"'
    )
    assert "FailedPostStartHook" in events(kjobs_cluster, pod, "Killing")


def test_what_follows_a_sidecar_waits_for_its_post_start_hook(kjobs_cluster: KjobsCluster) -> None:
    """The kubelet runs postStart within `startContainer`: the container reads as being created until the hook has
    run, and the container after a sidecar starts only then. Here the main container checks that the sidecar's
    hook wrote its file; before, it started beside a sidecar whose hook was still sleeping, and failed."""
    job_obj = job("hooked", "test -e hooked && echo saw the hook")
    spec = job_obj["spec"]["template"]["spec"]
    hook = {"postStart": {"exec": {"command": ["sh", "-c", "sleep 1; touch hooked"]}}}
    sidecar = {"name": "proxy", "image": "busybox", "restartPolicy": "Always", "lifecycle": hook}
    spec["initContainers"] = [{**sidecar, "command": ["sh", "-c", "trap 'exit 0' TERM; sleep 100 & wait"]}]
    kjobs_cluster.apply(job_obj)
    pod = kjobs_cluster.pod_of("hooked", "phase=Pending")
    proxy = (pod["status"].get("initContainerStatuses") or [{}])[0]
    assert "running" not in (proxy.get("state") or {}), proxy  # its hook sleeps: not running yet
    kjobs_cluster.wait_for("job", "hooked", "Complete", timeout=20)
    [done] = kjobs_cluster.objects("pods", label_selector="job-name=hooked")
    assert kjobs_cluster.logs(done, "main") == "saw the hook\n"


def test_regular_containers_start_one_after_another_behind_post_start_hooks(kjobs_cluster: KjobsCluster) -> None:
    """`SyncPod` starts the regular containers in spec order, each once the one before it has run its postStart
    hook: the second container sees the file the first one's hook wrote. Before, both started together."""
    job_obj = job("inorder", "sleep 100")
    spec = job_obj["spec"]["template"]["spec"]
    hook = {"postStart": {"exec": {"command": ["sh", "-c", "sleep 1; touch hooked"]}}}
    spec["containers"][0]["lifecycle"] = hook
    spec["containers"][0]["command"] = ["sh", "-c", "trap 'exit 0' TERM; sleep 100 & wait"]
    spec["containers"].append({"name": "second", "image": "busybox", "command": ["sh", "-c", "test -e hooked"]})
    kjobs_cluster.apply(job_obj)
    pod = kjobs_cluster.pod_of("inorder", "phase=Running")

    def second_ended() -> Obj | None:
        found = kjobs_cluster.get("pods", pod["metadata"]["name"])
        second = next((s for s in found["status"].get("containerStatuses") or () if s["name"] == "second"), {})
        return (second.get("state") or {}).get("terminated")

    assert wait_until(second_ended)["exitCode"] == 0


def test_a_probe_that_cannot_run_never_kills_the_container(kjobs_cluster: KjobsCluster) -> None:
    """A probe command that cannot be started is an error, not a failure: the kubelet records `Unhealthy` ("...
    probe errored and resulted in unknown state: ...") and throws the result away (worker.go `doProbe`), so the
    container runs to its end and the Job completes. Before, each error counted as a failure and killed it."""
    probe = {"exec": {"command": ["/nonexistent/check"]}, "periodSeconds": 1, "failureThreshold": 1}
    kjobs_cluster.apply(job("errored", "sleep 2.5", livenessProbe=probe))
    kjobs_cluster.wait_for("job", "errored", "Complete", timeout=20)
    [pod] = kjobs_cluster.objects("pods", label_selector="job-name=errored")
    unhealthy = events(kjobs_cluster, pod, "Unhealthy")
    assert unhealthy and unhealthy[0].startswith("Liveness probe errored and resulted in unknown state: "), unhealthy
    assert "no such file or directory" in unhealthy[0]


def test_readiness_is_probed_during_pre_stop_but_liveness_is_not(kjobs_cluster: KjobsCluster) -> None:
    """container_lifecycle_test.go "should execute readiness probe while in preStop, but not liveness": once the pod
    is being deleted the kubelet stops its liveness probe (worker.go `doProbe`), its readiness probe goes on."""
    trace = "trace"
    script = f"trap 'cat {trace}; exit 0' TERM; echo up; while true; do sleep 0.1; done"
    kjobs_cluster.apply(
        job(
            "probed-stop",
            script,
            grace=10,
            lifecycle={"preStop": {"exec": {"command": ["sh", "-c", f"echo pre-stop >> {trace}; sleep 2.5"]}}},
            readinessProbe={"exec": {"command": ["sh", "-c", f"echo readiness >> {trace}"]}, "periodSeconds": 1},
            livenessProbe={"exec": {"command": ["sh", "-c", f"echo liveness >> {trace}"]}, "periodSeconds": 1},
        )
    )
    statuses = lambda p: (p.get("status") or {}).get("containerStatuses") or [{}]  # noqa: E731
    pod = kjobs_cluster.pod_of("probed-stop", lambda p: statuses(p)[0].get("ready") is True)
    name = pod["metadata"]["name"]
    ended = delete_and_keep(kjobs_cluster, pod)
    assert ended["status"]["phase"] == "Succeeded"
    lines = kjobs_cluster.logs(name).split()
    during = lines[lines.index("pre-stop") + 1 :]
    assert "readiness" in during and "liveness" not in during, lines
    assert "liveness" in lines[: lines.index("pre-stop")], lines


def test_a_grpc_probe_kjobs_does_not_run_holds_nothing_back(kjobs_cluster: KjobsCluster) -> None:
    """kjobs runs no grpc probe (the `HandlersNotRun` warning says so): its container reads started and ready as
    one without the probe, rather than never (before this fix a grpc startupProbe or readinessProbe kept it
    unstarted, or unready, for good)."""
    probe = {"grpc": {"port": 9000}, "periodSeconds": 1}
    kjobs_cluster.apply(job("grpc", "sleep 100", startupProbe=probe, readinessProbe=probe))
    kjobs_cluster.wait_for("job", "grpc", lambda j: j.get("status", {}).get("ready") == 1, timeout=20)
    pod = kjobs_cluster.pod_of("grpc")
    assert (main_status(pod)["started"], main_status(pod)["ready"]) == (True, True)
