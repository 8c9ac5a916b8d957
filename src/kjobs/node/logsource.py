"""`AgentLogs`: the server's `LogSource` over the node agents running in the same process.

Design note: `pods/{name}/log` is answered by the kubelet of the pod's node; here the API service asks this
source, which picks the agent named by the pod's `spec.nodeName` and reads its runtime's log files (follow,
tail, previous and limitBytes are the runtime's). A pod no agent here runs — not scheduled yet, on a node in
another process, or never started — gets the kubelet's `waiting to start` 400. `timestamps` and
`sinceSeconds` are accepted and ignored (the runtimes keep no per-line times).

For an agent in another process the API server would need to reach it (the kubelet's port 10250 and
`daemonEndpoints`); kjobs does not serve logs across processes yet.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Protocol

from kjobs.api.types import Obj
from kjobs.node.runtime import ContainerRuntime
from kjobs.server.logs import LogOptions, waiting_error


class _Agent(Protocol):
    name: str
    runtime: ContainerRuntime


class AgentLogs:
    """Dispatches log reads to the agent of each pod's node."""

    def __init__(self, agents: Iterable[_Agent] = ()) -> None:
        self._agents: dict[str, _Agent] = {}
        for agent in agents:
            self.add(agent)

    def add(self, agent: _Agent) -> None:
        """Serve the logs of `agent`'s pods."""
        self._agents[agent.name] = agent

    def open(self, pod: Obj, options: LogOptions) -> AsyncIterator[bytes]:
        """The container's log from its node's runtime, or the kubelet's 400 when there is none yet."""
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        agent = self._agents.get(node)
        uid = str((pod.get("metadata") or {}).get("uid") or "")
        if agent is None or agent.runtime.get(uid) is None:
            raise waiting_error(pod, options.container)
        return agent.runtime.logs(
            uid,
            options.container,
            follow=options.follow,
            tail_lines=options.tail_lines,
            previous=options.previous,
            limit_bytes=options.limit_bytes,
        )
