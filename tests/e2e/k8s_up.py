"""One `kjobs up` for a module of Kubernetes' e2e ports that need only the core API through the official client
(docs/kubernetes-e2e.md): started at a free port with its own data directory and kubeconfig."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from tests.server.test_up import _up
from tests.support import free_port


@dataclass
class Cluster:
    api: k8s.ApiClient
    core: k8s.CoreV1Api


@contextmanager
def core_cluster(tmp: Path, *extra: str) -> Iterator[Cluster]:
    """`kjobs up` (its default one node, `extra` its further options) until the block ends."""
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config), *extra)
    with _up(tmp, *args) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        api = k8s_config.new_client_from_config(str(config))
        try:
            yield Cluster(api, k8s.CoreV1Api(api))
        finally:
            api.close()
