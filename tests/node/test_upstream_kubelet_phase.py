"""Rows of the kubelet's pod phase tables (getPhase), on kjobs' `podstatus.get_phase`.

Upstream: pkg/kubelet/kubelet_pods_test.go (TestPodPhaseWith*). Each test is one upstream Test function; its rows
keep their upstream names as ids. The container statuses are those of the upstream helpers (`runningState`,
`waitingStateWithLastTermination`, ...), written as the API's JSON. docs/upstream-kubelet.md lists the rows.
"""

from __future__ import annotations

import pytest

from kjobs.api.types import Obj
from kjobs.node.podstatus import get_phase


def waiting(name: str) -> Obj:
    return {"name": name, "state": {"waiting": {}}}


def waiting_last_termination(name: str) -> Obj:
    """`waitingStateWithLastTermination`: back-off after an exit 0."""
    return {"name": name, "state": {"waiting": {}}, "lastState": {"terminated": {"exitCode": 0}}}


def waiting_non_zero_termination(name: str) -> Obj:
    """`waitingStateWithNonZeroTermination`: back-off after an exit -1."""
    return {"name": name, "state": {"waiting": {}}, "lastState": {"terminated": {"exitCode": -1}}}


def running(name: str) -> Obj:
    """`runningState`: running, `started` not reported."""
    return {"name": name, "state": {"running": {}}}


def started(name: str) -> Obj:
    """`startedState`: running and started (its startupProbe, if any, succeeded)."""
    return {"name": name, "state": {"running": {}}, "started": True}


def stopped(name: str) -> Obj:
    """`stoppedState`: terminated, exit code 0 (Go's zero value)."""
    return {"name": name, "state": {"terminated": {}}}


def succeeded(name: str) -> Obj:
    return {"name": name, "state": {"terminated": {"exitCode": 0}}}


def failed(name: str) -> Obj:
    return {"name": name, "state": {"terminated": {"exitCode": -1}}}


def pod(containers: list[Obj], policy: str, init: list[Obj] | None = None) -> Obj:
    spec: Obj = {"nodeName": "machine", "containers": containers, "restartPolicy": policy}
    if init is not None:
        spec["initContainers"] = init
    return {"spec": spec}


def phase(
    spec_pod: Obj, init: list[Obj], regular: list[Obj], *, terminal: bool = False, initialized: bool = False
) -> str:
    return get_phase(spec_pod, init, regular, pod_is_terminal=terminal, pod_has_initialized=initialized)


AB = [{"name": "containerA"}, {"name": "containerB"}]
SIDECAR_X = {"name": "containerX", "restartPolicy": "Always"}

A, B, X, Y = "containerA", "containerB", "containerX", "containerY"


@pytest.mark.parametrize(
    ("statuses", "terminal", "expected"),
    [
        pytest.param([], False, "Pending", id="waiting"),
        pytest.param([running(A), running(B)], False, "Running", id="all running"),
        pytest.param([stopped(A), stopped(B)], False, "Running", id="all stopped with restart always"),
        pytest.param(
            [succeeded(A), succeeded(B)],
            True,
            "Succeeded",
            id="all succeeded with restart always, but the pod is terminal",
        ),
        pytest.param(
            [succeeded(A), failed(B)], True, "Failed", id="all stopped with restart always, but the pod is terminal"
        ),
        pytest.param([running(A), stopped(B)], False, "Running", id="mixed state #1 with restart always"),
        pytest.param([running(A)], False, "Pending", id="mixed state #2 with restart always"),
        pytest.param([running(A), waiting(B)], False, "Pending", id="mixed state #3 with restart always"),
        pytest.param(
            [running(A), waiting_last_termination(B)],
            False,
            "Running",
            id="backoff crashloop container with restart always",
        ),
    ],
)
def test_pod_phase_with_restart_always(statuses: list[Obj], terminal: bool, expected: str) -> None:
    assert phase(pod(AB, "Always"), [], statuses, terminal=terminal) == expected


INIT_ROWS = [
    # (init statuses, regular statuses, phase under Always, phase under Never, upstream name)
    ([], [], "Pending", "Pending", "empty, waiting"),
    ([running(X)], [], "Pending", "Pending", "init container running"),
    ([failed(X)], [], "Pending", "Failed", "init container terminated non-zero"),
    ([waiting_last_termination(X)], [], "Pending", "Pending", "init container waiting, terminated zero"),
    ([waiting_non_zero_termination(X)], [], "Pending", "Failed", "init container waiting, terminated non-zero"),
    ([waiting(X)], [], "Pending", "Pending", "init container waiting, not terminated"),
    ([succeeded(X)], [running(A), running(B)], "Running", "Running", "init container succeeded"),
]


@pytest.mark.parametrize(
    ("init", "regular", "expected"), [pytest.param(i, r, always, id=name) for i, r, always, _, name in INIT_ROWS]
)
def test_pod_phase_with_restart_always_init_containers(init: list[Obj], regular: list[Obj], expected: str) -> None:
    assert phase(pod(AB, "Always", [{"name": X}]), init, regular) == expected


@pytest.mark.parametrize(
    ("init", "regular", "terminal", "initialized", "expected"),
    [
        pytest.param([], [], False, False, "Pending", id="empty, waiting"),
        pytest.param([running(X)], [], False, False, "Pending", id="restartable init container running"),
        pytest.param([stopped(X)], [], False, False, "Pending", id="restartable init container stopped"),
        pytest.param(
            [waiting_last_termination(X)],
            [],
            False,
            False,
            "Pending",
            id="restartable init container waiting, terminated zero",
        ),
        pytest.param(
            [waiting_non_zero_termination(X)],
            [],
            False,
            False,
            "Pending",
            id="restartable init container waiting, terminated non-zero",
        ),
        pytest.param(
            [waiting(X)], [], False, False, "Pending", id="restartable init container waiting, not terminated"
        ),
        pytest.param(
            [started(X)],
            [running(A)],
            False,
            True,
            "Pending",
            id="restartable init container started, 1/2 regular container running",
        ),
        pytest.param(
            [started(X)],
            [running(A), running(B)],
            False,
            True,
            "Running",
            id="restartable init container started, all regular containers running",
        ),
        pytest.param(
            [running(X)],
            [running(A), running(B)],
            False,
            True,
            "Running",
            id="restartable init container running, all regular containers running",
        ),
        pytest.param(
            [stopped(X)],
            [running(A), running(B)],
            False,
            True,
            "Running",
            id="restartable init container stopped, all regular containers running",
        ),
        pytest.param(
            [waiting_last_termination(X)],
            [running(A), running(B)],
            False,
            True,
            "Running",
            id="backoff crashloop restartable init container, all regular containers running",
        ),
        pytest.param(
            [failed(X)],
            [succeeded(A), succeeded(B)],
            True,
            True,
            "Succeeded",
            id="all regular containers succeeded and restartable init container failed with restart always, "
            "but the pod is terminal",
        ),
        pytest.param(
            [succeeded(X)],
            [succeeded(A), succeeded(B)],
            True,
            True,
            "Succeeded",
            id="all regular containers succeeded and restartable init container succeeded with restart always, "
            "but the pod is terminal",
        ),
        pytest.param(
            [running(X)],
            [running(A), running(B)],
            False,
            False,
            "Pending",
            id="re-initializing the pod after the sandbox is recreated",
        ),
    ],
)
def test_pod_phase_with_restart_always_restartable_init_containers(
    init: list[Obj], regular: list[Obj], terminal: bool, initialized: bool, expected: str
) -> None:
    spec_pod = pod(AB, "Always", [SIDECAR_X])
    assert phase(spec_pod, init, regular, terminal=terminal, initialized=initialized) == expected


@pytest.mark.parametrize(
    ("init", "regular", "initialized", "expected"),
    [
        pytest.param(
            [running(X), running(Y)],
            [running(A)],
            False,
            "Pending",
            id="regular init containers, restartable init container and regular container are all running",
        ),
        pytest.param(
            [running(X), running(Y)],
            [stopped(A)],
            False,
            "Pending",
            id="regular containers is stopped, restartable init container and regular int container are both running",
        ),
        pytest.param(
            [succeeded(X), running(Y)],
            [stopped(A)],
            False,
            "Pending",
            id="re-created sandbox: regular init container is succeeded, restartable init container is running, "
            "old regular containers is stopped",
        ),
        pytest.param(
            [succeeded(X), running(Y)],
            [stopped(A)],
            True,
            "Running",
            id="regular init container is succeeded, restartable init container is running, "
            "regular containers is stopped",
        ),
        pytest.param(
            [succeeded(X), running(Y)],
            [running(A)],
            True,
            "Running",
            id="regular init container is succeeded, restartable init container and regular containers are "
            "both running",
        ),
    ],
)
def test_pod_phase_with_restart_always_and_pod_has_run(
    init: list[Obj], regular: list[Obj], initialized: bool, expected: str
) -> None:
    spec_pod = pod([{"name": A}], "Always", [{"name": X}, {"name": Y, "restartPolicy": "Always"}])
    assert phase(spec_pod, init, regular, initialized=initialized) == expected


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        pytest.param([], "Pending", id="waiting"),
        pytest.param([running(A), running(B)], "Running", id="all running with restart never"),
        pytest.param([succeeded(A), succeeded(B)], "Succeeded", id="all succeeded with restart never"),
        pytest.param([failed(A), failed(B)], "Failed", id="all failed with restart never"),
        pytest.param([running(A), succeeded(B)], "Running", id="mixed state #1 with restart never"),
        pytest.param([running(A)], "Pending", id="mixed state #2 with restart never"),
        pytest.param([running(A), waiting(B)], "Pending", id="mixed state #3 with restart never"),
    ],
)
def test_pod_phase_with_restart_never(statuses: list[Obj], expected: str) -> None:
    assert phase(pod(AB, "Never"), [], statuses) == expected


@pytest.mark.parametrize(
    ("init", "regular", "expected"), [pytest.param(i, r, never, id=name) for i, r, _, never, name in INIT_ROWS]
)
def test_pod_phase_with_restart_never_init_containers(init: list[Obj], regular: list[Obj], expected: str) -> None:
    assert phase(pod(AB, "Never", [{"name": X}]), init, regular) == expected


SUCCEEDED_AB = [succeeded(A), succeeded(B)]


@pytest.mark.parametrize(
    ("init", "regular", "initialized", "expected"),
    [
        pytest.param([], [], False, "Pending", id="empty, waiting"),
        pytest.param([running(X)], [], False, "Pending", id="restartable init container running"),
        pytest.param([stopped(X)], [], False, "Pending", id="restartable init container stopped"),
        pytest.param(
            [waiting_last_termination(X)],
            [],
            False,
            "Pending",
            id="restartable init container waiting, terminated zero",
        ),
        pytest.param(
            [waiting_non_zero_termination(X)],
            [],
            False,
            "Pending",
            id="restartable init container waiting, terminated non-zero",
        ),
        pytest.param([waiting(X)], [], False, "Pending", id="restartable init container waiting, not terminated"),
        pytest.param(
            [started(X)],
            [running(A)],
            True,
            "Pending",
            id="restartable init container started, one main container running",
        ),
        pytest.param(
            [started(X)],
            SUCCEEDED_AB,
            True,
            "Running",
            id="restartable init container started, main containers succeeded",
        ),
        pytest.param(
            [running(X)],
            SUCCEEDED_AB,
            True,
            "Running",
            id="restartable init container re-running, main containers succeeded",
        ),
        pytest.param([succeeded(X)], SUCCEEDED_AB, True, "Succeeded", id="all containers succeeded"),
        pytest.param(
            [failed(X)],
            SUCCEEDED_AB,
            True,
            "Succeeded",
            id="restartable init container terminated non-zero, main containers succeeded",
        ),
        pytest.param(
            [waiting_last_termination(X)],
            SUCCEEDED_AB,
            True,
            "Succeeded",
            id="backoff crashloop restartable init container, main containers succeeded",
        ),
        pytest.param(
            [waiting_non_zero_termination(X)],
            SUCCEEDED_AB,
            True,
            "Succeeded",
            id="backoff crashloop with non-zero restartable init container, main containers succeeded",
        ),
    ],
)
def test_pod_phase_with_restart_never_restartable_init_containers(
    init: list[Obj], regular: list[Obj], initialized: bool, expected: str
) -> None:
    assert phase(pod(AB, "Never", [SIDECAR_X]), init, regular, initialized=initialized) == expected


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        pytest.param([], "Pending", id="waiting"),
        pytest.param([running(A), running(B)], "Running", id="all running with restart onfailure"),
        pytest.param([succeeded(A), succeeded(B)], "Succeeded", id="all succeeded with restart onfailure"),
        pytest.param([failed(A), failed(B)], "Running", id="all failed with restart never"),
        pytest.param([running(A), succeeded(B)], "Running", id="mixed state #1 with restart onfailure"),
        pytest.param([running(A)], "Pending", id="mixed state #2 with restart onfailure"),
        pytest.param([running(A), waiting(B)], "Pending", id="mixed state #3 with restart onfailure"),
        pytest.param(
            [running(A), waiting_last_termination(B)],
            "Running",
            id="backoff crashloop container with restart onfailure",
        ),
    ],
)
def test_pod_phase_with_restart_on_failure(statuses: list[Obj], expected: str) -> None:
    assert phase(pod(AB, "OnFailure"), [], statuses) == expected


def own(name: str, policy: str) -> Obj:
    """A container with its own restartPolicy (KEP-5307)."""
    return {"name": name, "restartPolicy": policy}


@pytest.mark.parametrize(
    ("containers", "policy", "statuses", "expected"),
    [
        pytest.param(
            [own("failed-container", "Never")],
            "Always",
            [failed("failed-container")],
            "Failed",
            id="container with restart policy Never failed",
        ),
        pytest.param(
            [own("failed-container", "OnFailure")],
            "Always",
            [failed("failed-container")],
            "Running",
            id="container with restart policy OnFailure failed",
        ),
        pytest.param(
            [own("failed-container", "Always")],
            "Always",
            [failed("failed-container")],
            "Running",
            id="container with restart policy Always failed",
        ),
        pytest.param(
            [own(A, "Always"), {"name": B}],
            "Never",
            [succeeded(A), failed(B)],
            "Running",
            id="At least one container with restartable container-level restart policy failed",
        ),
        pytest.param(
            [own(A, "Never"), own(B, "OnFailure")],
            "Always",
            [failed(A), succeeded(B)],
            "Failed",
            id="All containers without restartable container-level restart policy failed",
        ),
        pytest.param(
            [own(A, "Never"), own(B, "OnFailure")],
            "Always",
            [succeeded(A), succeeded(B)],
            "Succeeded",
            id="All containers succeeded",
        ),
    ],
)
def test_pod_phase_with_container_restart_policy(
    containers: list[Obj], policy: str, statuses: list[Obj], expected: str
) -> None:
    assert phase(pod(containers, policy), [], statuses) == expected


@pytest.mark.parametrize(
    ("init_policy", "policy", "expected"),
    [
        pytest.param("Never", "Always", "Failed", id="init container with restart policy Never failed"),
        pytest.param("OnFailure", "Never", "Pending", id="init container with restart policy OnFailure failed"),
        pytest.param("Always", "Never", "Pending", id="container with restart policy Always failed"),
    ],
)
def test_pod_phase_with_container_restart_policy_init_containers(init_policy: str, policy: str, expected: str) -> None:
    """Upstream passes the init container's status among the regular ones; getPhase finds statuses by name."""
    spec_pod = pod([{"name": "container"}], policy, [own("failed-container", init_policy)])
    assert phase(spec_pod, [], [failed("failed-container")]) == expected
