"""Service-link environment variables (pkg/kubelet/envvars/envvars.go `FromServices`, pkg/kubelet/kubelet_pods.go
`getServiceEnvVarMap` and `makeEnvironmentVariables`): every Service of the pod's namespace with a cluster IP gives
its variables unless `enableServiceLinks: false`, headless ones none; the `kubernetes` Service's always (pointed at
the API server, kjobs' deviation); the container's own `env` wins, and may refer to them in `$(VAR)`; a Service
created after a container started is not in its environment."""

from __future__ import annotations

import asyncio

from kjobs.api.types import Obj
from kjobs.client.resources import PODS, SERVICES
from kjobs.clock import FakeClock
from kjobs.node.agent import NodeAgent, NodeAgentSettings
from kjobs.node.envvars import container_env, service_link_env
from kjobs.node.eviction import FakeMemoryMonitor
from kjobs.node.observations import Attempt
from kjobs.node.sim_runtime import Outcome, SimulatedRuntime
from kjobs.node.supervisor import PodRecord
from tests.node.test_agent import MACHINE, NODE
from tests.support import local_api, settle

BACKEND: Obj = {
    "metadata": {"name": "backend", "namespace": "default"},
    "spec": {
        "clusterIP": "10.96.0.20",
        "ports": [{"name": "http", "port": 80}, {"name": "metrics-port", "port": 9090, "targetPort": 9091}],
    },
}
DB: Obj = {
    "metadata": {"name": "db-main", "namespace": "default"},
    "spec": {"clusterIP": "10.96.0.30", "ports": [{"port": 5432, "protocol": "UDP"}]},
}
PEERS: Obj = {
    "metadata": {"name": "peers", "namespace": "default"},
    "spec": {"clusterIP": "None", "ports": [{"port": 7000}]},
}

BACKEND_ENV = {
    "BACKEND_SERVICE_HOST": "10.96.0.20",
    "BACKEND_SERVICE_PORT": "80",
    "BACKEND_SERVICE_PORT_HTTP": "80",
    "BACKEND_SERVICE_PORT_METRICS_PORT": "9090",
    "BACKEND_PORT": "tcp://10.96.0.20:80",
    "BACKEND_PORT_80_TCP": "tcp://10.96.0.20:80",
    "BACKEND_PORT_80_TCP_PROTO": "tcp",
    "BACKEND_PORT_80_TCP_PORT": "80",
    "BACKEND_PORT_80_TCP_ADDR": "10.96.0.20",
    "BACKEND_PORT_9090_TCP": "tcp://10.96.0.20:9090",
    "BACKEND_PORT_9090_TCP_PROTO": "tcp",
    "BACKEND_PORT_9090_TCP_PORT": "9090",
    "BACKEND_PORT_9090_TCP_ADDR": "10.96.0.20",
}
DB_ENV = {
    "DB_MAIN_SERVICE_HOST": "10.96.0.30",
    "DB_MAIN_SERVICE_PORT": "5432",
    "DB_MAIN_PORT": "udp://10.96.0.30:5432",
    "DB_MAIN_PORT_5432_UDP": "udp://10.96.0.30:5432",
    "DB_MAIN_PORT_5432_UDP_PROTO": "udp",
    "DB_MAIN_PORT_5432_UDP_PORT": "5432",
    "DB_MAIN_PORT_5432_UDP_ADDR": "10.96.0.30",
}


def test_from_services_named_and_unnamed_ports_headless_skipped() -> None:
    assert service_link_env([BACKEND, DB, PEERS]) == {**BACKEND_ENV, **DB_ENV}
    external: Obj = {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com"}}
    assert service_link_env([PEERS, external]) == {}
    v6: Obj = {"metadata": {"name": "v6"}, "spec": {"clusterIP": "fd00::1", "ports": [{"port": 80}]}}
    assert service_link_env([v6])["V6_PORT"] == "tcp://[fd00::1]:80"  # net.JoinHostPort


def test_the_containers_own_env_may_refer_to_them_and_is_not_given_them() -> None:
    container = {"name": "c", "env": [{"name": "URL", "value": "http://$(BACKEND_SERVICE_HOST):$(NOPE)"}]}
    env = container_env({"metadata": {}}, container, services=BACKEND_ENV)
    assert env == {"URL": "http://10.96.0.20:$(NOPE)"}


class EnvRuntime(SimulatedRuntime):
    """The simulated runtime, keeping each container's environment and argv as the process runtime gets them."""

    pod_api = ""
    started: dict[str, tuple[dict[str, str], list[str]]]

    def _spawn(self, record: PodRecord, container: Obj, number: int, env: dict[str, str], argv: list[str]) -> Attempt:
        self.started[f"{record.pod['metadata']['name']}/{container['name']}"] = (dict(env), list(argv))
        return super()._spawn(record, container, number, env, argv)


def _pod(name: str, *, links: bool | None = None, env: list[Obj] | None = None, args: list[str] | None = None) -> Obj:
    spec: Obj = {
        "restartPolicy": "Never",
        "nodeName": NODE,
        "automountServiceAccountToken": False,
        "containers": [{"name": "main", "image": "b", "env": env or [], "args": args or []}],
    }
    if links is not None:
        spec["enableServiceLinks"] = links
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_a_containers_environment_has_its_namespaces_services() -> None:
    async def body() -> None:
        clock = FakeClock()
        runtime = EnvRuntime(clock=clock, outcome=lambda pod, container, attempt: Outcome(duration=10.0))
        runtime.started = {}
        client = await local_api(clock)
        service = client.service

        async def tokens(namespace: str, account: str, request: Obj) -> Obj:
            return (await service.create_token(namespace, account, request)).obj

        agent = NodeAgent(
            client,
            name=NODE,
            clock=clock,
            runtime=runtime,
            settings=NodeAgentSettings(machine=MACHINE, pod_api="127.0.0.1:6443"),
            memory_monitor=FakeMemoryMonitor(available_bytes=4 << 30, capacity_bytes=8 << 30),
            tokens=tokens,
        )
        await agent.start()
        try:
            kubernetes: Obj = {
                "metadata": {"name": "kubernetes", "namespace": "default"},
                "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443}]},
            }
            other: Obj = {
                "metadata": {"name": "other", "namespace": "kube-system"},
                "spec": {"clusterIP": "10.96.0.40", "ports": [{"port": 1}]},
            }
            for made in (BACKEND, DB, PEERS, kubernetes, other):
                await client.create(SERVICES, made["metadata"]["namespace"], made)
            assert agent.services is not None
            services = agent.services
            await settle(clock, lambda: len(services.cache) == 5)
            own = [
                {"name": "BACKEND_SERVICE_PORT", "value": "mine"},
                {"name": "URL", "value": "$(BACKEND_SERVICE_HOST):$(BACKEND_SERVICE_PORT_HTTP)"},
            ]
            await client.create(PODS, "default", _pod("linked", env=own, args=["$(DB_MAIN_PORT)"]))
            await client.create(PODS, "default", _pod("unlinked", links=False))
            await settle(clock, lambda: len(runtime.started) == 2)
            later: Obj = {"metadata": {"name": "later"}, "spec": {"clusterIP": "10.96.0.50", "ports": [{"port": 2}]}}
            await client.create(SERVICES, "default", later)
            await settle(clock, lambda: len(services.cache) == 6)
            await client.create(PODS, "default", _pod("after"))
            await settle(clock, lambda: len(runtime.started) == 3)
        finally:
            await agent.stop()
        api = {
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",  # the API server itself, not default/kubernetes's 10.96.0.1
            "KUBERNETES_SERVICE_PORT": "6443",
            "KUBERNETES_SERVICE_PORT_HTTPS": "6443",
            "KUBERNETES_PORT": "tcp://127.0.0.1:6443",
            "KUBERNETES_PORT_6443_TCP": "tcp://127.0.0.1:6443",
            "KUBERNETES_PORT_6443_TCP_PROTO": "tcp",
            "KUBERNETES_PORT_6443_TCP_PORT": "6443",
            "KUBERNETES_PORT_6443_TCP_ADDR": "127.0.0.1",
        }
        env, argv = runtime.started["linked/main"]
        assert env == {
            **api,
            **BACKEND_ENV,
            **DB_ENV,
            "BACKEND_SERVICE_PORT": "mine",  # the container's own wins
            "URL": "10.96.0.20:80",
        }
        assert argv == ["udp://10.96.0.30:5432"]
        assert runtime.started["unlinked/main"] == (api, [])  # enableServiceLinks: false, the API server's only
        env, _ = runtime.started["after/main"]
        assert env["LATER_SERVICE_HOST"] == "10.96.0.50"
        assert "LATER_SERVICE_HOST" not in runtime.started["linked/main"][0]  # created after it started

    asyncio.run(body())
