"""The order in which a stopping pod's containers are signalled: sidecars last, in reverse order.

Design note: pure. The kubelet kills every container of a pod at once, except that a restartable init container
(a sidecar) waits for its turn first (pkg/kubelet/kuberuntime/kuberuntime_termination_order.go,
`newTerminationOrdering`): for every regular container to have exited, and for the next sidecar in spec order
to have exited (that one waits the same way, so sidecars stop last to first). A container that does not run is
no one's reason to wait. The wait ends anyway when the pod's grace period is over (`waitForTurn`); the sidecar
then still gets the minimum grace period between its SIGTERM and its SIGKILL (`killContainer`:
`minimumGracePeriodInSeconds`). `Supervisor.request_kill` applies this with `stop_turns`.
"""

from __future__ import annotations

from collections.abc import Collection

from kjobs.api.types import Obj
from kjobs.node.restart import is_sidecar


def stop_turns(pod: Obj, running: Collection[str]) -> set[str]:
    """Of the `running` containers of `pod`, those whose turn to be stopped has come: every regular, ephemeral
    and ordinary init container; a sidecar once no regular container runs and the next sidecar after it (in spec
    order) does not run."""
    spec = pod.get("spec") or {}
    regular = [str(c.get("name", "")) for c in spec.get("containers") or ()]
    turns = {name for name in regular if name in running}
    regular_running = bool(turns)
    # ephemeral containers are stopped with the regular ones (the kubelet's killContainersWithSyncResult)
    turns.update(n for c in spec.get("ephemeralContainers") or () if (n := str(c.get("name", ""))) in running)
    later_sidecar: str | None = None
    for container in reversed(spec.get("initContainers") or ()):
        name = str(container.get("name", ""))
        if not is_sidecar(container):
            if name in running:
                turns.add(name)
            continue
        waits = regular_running or (later_sidecar is not None and later_sidecar in running)
        if name in running and not waits:
            turns.add(name)
        later_sidecar = name
    return turns
