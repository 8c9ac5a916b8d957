"""Server-side Table cells, compared with what `kubectl get` shows on a real cluster."""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api.timeutil import parse_time
from kjobs.server.tables import (
    event_cells,
    format_label_selector,
    human_duration,
    job_cells,
    node_cells,
    pod_cells,
    to_table,
)

NOW = parse_time("2025-01-01T01:00:00Z")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-0.5, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (600, "10m"),
        (179 * 60 + 59, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60 * 5, "3h5m"),
        (20 * 3600 + 60, "20h"),
        (3 * 86400 + 3600, "3d1h"),
        (3 * 86400, "3d"),
        (30 * 86400, "30d"),
        (3 * 365 * 86400, "3y"),
        (3 * 365 * 86400 + 86400 * 2, "3y2d"),
        (10 * 365 * 86400, "10y"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def _job(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "ok", "creationTimestamp": "2025-01-01T00:55:00Z"},
        "spec": {
            "completions": 1,
            "parallelism": 1,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
            "template": {"spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}},
        },
        "status": status,
    }


def test_job_row_complete() -> None:
    job = _job(
        succeeded=1,
        startTime="2025-01-01T00:55:00Z",
        completionTime="2025-01-01T00:55:04Z",
        conditions=[{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}],
    )
    assert job_cells(job, NOW) == [
        "ok",
        "Complete",
        "1/1",
        "4s",
        "5m",
        "main",
        "busybox:1.36",
        "batch.kubernetes.io/controller-uid=u1",
    ]


@pytest.mark.parametrize(
    ("conditions", "deleting", "status"),
    [
        ([{"type": "Failed", "status": "True"}], False, "Failed"),
        ([{"type": "FailureTarget", "status": "True"}], False, "FailureTarget"),
        ([{"type": "SuccessCriteriaMet", "status": "True"}], False, "Running"),
        ([{"type": "Suspended", "status": "True"}], False, "Suspended"),
        ([], True, "Terminating"),
        ([], False, "Running"),
    ],
)
def test_job_status_column(conditions: list[Any], deleting: bool, status: str) -> None:
    job = _job(conditions=conditions)
    if deleting:
        job["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
    assert job_cells(job, NOW)[1] == status


def test_job_failed_duration_keeps_growing_and_parallel_completions() -> None:
    job = _job(startTime="2025-01-01T00:58:00Z", conditions=[{"type": "Failed", "status": "True"}])
    del job["spec"]["completions"]
    job["spec"]["parallelism"] = 3
    cells = job_cells(job, NOW)
    assert cells[2:4] == ["0/1 of 3", "2m"]


def _pod(phase: str, state: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "creationTimestamp": "2025-01-01T00:59:30Z", **extra},
        "spec": {"containers": [{"name": "main"}], "nodeName": "node-1"},
        "status": {
            "phase": phase,
            "containerStatuses": [{"name": "main", "ready": False, "restartCount": 0, "state": state}],
        },
    }


@pytest.mark.parametrize(
    ("pod", "ready", "status"),
    [
        (_pod("Succeeded", {"terminated": {"exitCode": 0, "reason": "Completed"}}), "0/1", "Completed"),
        (_pod("Failed", {"terminated": {"exitCode": 42, "reason": "Error"}}), "0/1", "Error"),
        (_pod("Failed", {"terminated": {"exitCode": 137, "signal": 9}}), "0/1", "Signal:9"),
        (_pod("Failed", {"terminated": {"exitCode": 3}}), "0/1", "ExitCode:3"),
        (_pod("Pending", {"waiting": {"reason": "ContainerCreating"}}), "0/1", "ContainerCreating"),
        (_pod("Running", {"running": {}}, deletionTimestamp="2025-01-01T01:00:00Z"), "0/1", "Terminating"),
    ],
)
def test_pod_ready_and_status(pod: dict[str, Any], ready: str, status: str) -> None:
    cells = pod_cells(pod, NOW)
    assert cells[1:3] == [ready, status]
    assert cells[4:] == ["30s", "<none>", "node-1", "<none>", "<none>"]


def test_pending_pod_without_status_and_restart_column() -> None:
    pod = {
        "metadata": {"name": "p", "creationTimestamp": "2025-01-01T00:59:00Z"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
        "status": {"phase": "Pending"},
    }
    assert pod_cells(pod, NOW)[:4] == ["p", "0/2", "Pending", "0"]
    running = _pod("Running", {"running": {}})
    running["status"]["containerStatuses"][0].update(
        ready=True, restartCount=2, lastState={"terminated": {"exitCode": 1, "finishedAt": "2025-01-01T00:55:00Z"}}
    )
    running["status"]["podIPs"] = [{"ip": "10.0.0.5"}]
    assert pod_cells(running, NOW)[1:6] == ["1/1", "Running", "2 (5m ago)", "30s", "10.0.0.5"]


def test_restarts_count_the_init_containers_while_the_pod_initializes() -> None:
    # printPod: an `Init:CrashLoopBackOff` pod shows its init container's restarts (kjobs showed 0); once the pod
    # is initialized, only the containers' count (printers_test.go: `4 (20s ago)` for init 2, container 4).
    def restarted(name: str, count: int, finished: str, state: dict[str, Any]) -> dict[str, Any]:
        last = {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": finished}}
        return {"name": name, "ready": False, "restartCount": count, "state": state, "lastState": last}

    crashing = _pod("Pending", {"waiting": {"reason": "PodInitializing"}})
    crashing["spec"]["initContainers"] = [{"name": "setup"}]
    waiting = {"waiting": {"reason": "CrashLoopBackOff"}}
    crashing["status"]["initContainerStatuses"] = [restarted("setup", 2, "2025-01-01T00:59:40Z", waiting)]
    assert pod_cells(crashing, NOW)[2:4] == ["Init:CrashLoopBackOff", "2 (20s ago)"]

    initialized = _pod("Running", waiting)
    initialized["spec"]["initContainers"] = [{"name": "setup"}]
    initialized["status"]["initContainerStatuses"] = [
        restarted("setup", 2, "2025-01-01T00:50:00Z", {"terminated": {"exitCode": 0, "reason": "Completed"}})
    ]
    initialized["status"]["containerStatuses"] = [restarted("main", 4, "2025-01-01T00:59:40Z", waiting)]
    assert pod_cells(initialized, NOW)[2:4] == ["CrashLoopBackOff", "4 (20s ago)"]


def test_node_row() -> None:
    node = {
        "metadata": {
            "name": "n1",
            "creationTimestamp": "2025-01-01T00:00:00Z",
            "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"},
        },
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "nodeInfo": {
                "kubeletVersion": "v1.32.0",
                "osImage": "Debian",
                "kernelVersion": "6.1",
                "containerRuntimeVersion": "",
            },
        },
    }
    assert node_cells(node, NOW) == [
        "n1",
        "Ready,SchedulingDisabled",
        "control-plane,worker",
        "60m",
        "v1.32.0",
        "127.0.0.1",
        "<none>",
        "Debian",
        "6.1",
        "<unknown>",
    ]


def test_event_row() -> None:
    event = {
        "metadata": {"name": "ok.1"},
        "involvedObject": {"kind": "Job", "name": "ok"},
        "reason": "SuccessfulCreate",
        "message": "Created pod: ok-abcde\n",
        "source": {"component": "job-controller"},
        "firstTimestamp": "2025-01-01T00:58:00Z",
        "lastTimestamp": "2025-01-01T00:59:50Z",
        "type": "Normal",
    }
    assert event_cells(event, NOW) == [
        "10s",
        "Normal",
        "SuccessfulCreate",
        "job/ok",
        "",
        "job-controller",
        "Created pod: ok-abcde",
        "2m",
        1,
        "ok.1",
    ]


def test_selector_format() -> None:
    selector = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [
            {"key": "c", "operator": "In", "values": ["y", "x"]},
            {"key": "d", "operator": "DoesNotExist"},
        ],
    }
    assert format_label_selector(selector) == "a=1,b=2,c in (x,y),!d"
    assert format_label_selector({}) == "<none>"


def test_table_shape() -> None:
    pod = _pod("Succeeded", {"terminated": {"exitCode": 0, "reason": "Completed"}})
    table = to_table([pod], kind="Pod", api_version="v1", now=NOW, resource_version="7")
    assert table["metadata"] == {"resourceVersion": "7"}
    assert [c["name"] for c in table["columnDefinitions"]][:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    row = table["rows"][0]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["conditions"][0]["reason"] == "Succeeded"
    bare = to_table([pod], kind="Pod", api_version="v1", now=NOW, include_object="None", with_headers=False)
    assert bare["columnDefinitions"] == [] and "object" not in bare["rows"][0]


def test_other_printers() -> None:
    ns = {"metadata": {"name": "default", "creationTimestamp": "2025-01-01T00:00:00Z"}, "status": {"phase": "Active"}}
    assert to_table([ns], kind="Namespace", api_version="v1", now=NOW)["rows"][0]["cells"] == [
        "default",
        "Active",
        "60m",
    ]
    pdb = {
        "metadata": {"name": "p", "creationTimestamp": "2025-01-01T00:59:00Z"},
        "spec": {"minAvailable": 1},
        "status": {"disruptionsAllowed": 0},
    }
    assert to_table([pdb], kind="PodDisruptionBudget", api_version="policy/v1", now=NOW)["rows"][0]["cells"] == [
        "p",
        "1",
        "N/A",
        0,
        "60s",
    ]
    lease = {"metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1"}}
    assert to_table([lease], kind="Lease", api_version="coordination.k8s.io/v1", now=NOW)["rows"][0]["cells"] == [
        "n1",
        "n1",
        "<unknown>",
    ]


def _sidecar_pod(setup: dict[str, Any], proxy: dict[str, Any] | None, main: dict[str, Any], **status: Any) -> Any:
    """A pod with an init container `setup`, a sidecar `proxy` and a container `main`, with the states given
    (a state dict, or with `restartCount`/`ready`/`started`/`lastState` beside it under `extra`)."""

    def cs(name: str, given: dict[str, Any]) -> dict[str, Any]:
        extra = given.pop("extra", {})
        return {"name": name, "state": given, "ready": False, "restartCount": 0, **extra}

    statuses = [cs("setup", setup)] + ([cs("proxy", proxy)] if proxy is not None else [])
    return {
        "metadata": {"name": "p", "creationTimestamp": "2025-01-01T00:59:30Z"},
        "spec": {
            "initContainers": [{"name": "setup"}, {"name": "proxy", "restartPolicy": "Always"}],
            "containers": [{"name": "main"}],
        },
        "status": {"initContainerStatuses": statuses, "containerStatuses": [cs("main", main)], **status},
    }


def test_a_pod_with_a_sidecar_counts_it_among_its_containers() -> None:
    """As printPod (pkg/printers/internalversion/printers.go) shows it: `2/2 Running` while the sidecar and the
    main container run, where kjobs showed `1/1 Init:1/2`; `0/2 Init:0/2` while initializing, with the init
    containers' restarts."""
    done = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    running = _sidecar_pod(
        dict(done),
        {"running": {}, "extra": {"ready": True, "started": True}},
        {"running": {}, "extra": {"ready": True}},
        phase="Running",
        conditions=[{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
    )
    assert pod_cells(running, NOW)[1:4] == ["2/2", "Running", "0"]
    restarted = {"extra": {"restartCount": 1, "lastState": {"terminated": {"finishedAt": "2025-01-01T00:59:50Z"}}}}
    initializing = _sidecar_pod(
        {"running": {}, **restarted},
        None,
        {"waiting": {"reason": "PodInitializing"}},
        phase="Pending",
        conditions=[{"type": "Initialized", "status": "False"}],
    )
    assert pod_cells(initializing, NOW)[1:4] == ["0/2", "Init:0/2", "1 (10s ago)"]
