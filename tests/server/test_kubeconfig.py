"""The kubeconfig kjobs writes: what each kind of server gets in its cluster entry."""

from __future__ import annotations

import asyncio
import base64
import tempfile
from pathlib import Path

import pytest
import yaml

from kjobs.api.errors import ApiError
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import JOBS
from kjobs.server import kubeconfig
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.support import shared_pki


def test_http_server_is_marked_insecure_for_the_javascript_client() -> None:
    doc = kubeconfig.build("http://127.0.0.1:6443")
    assert doc["clusters"] == [
        {"name": "kjobs", "cluster": {"server": "http://127.0.0.1:6443", "insecure-skip-tls-verify": True}}
    ]


def test_https_server_carries_the_ca_and_the_admin_certificate_inline() -> None:
    pki = shared_pki()
    doc = kubeconfig.build("https://10.0.0.1:6443", pki=pki)
    cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
    assert cluster == {"server": "https://10.0.0.1:6443", "certificate-authority-data": _b64(pki.ca_file)}
    assert user == {"client-certificate-data": _b64(pki.admin_cert), "client-key-data": _b64(pki.admin_key)}


def test_the_written_file_is_private_and_loads_with_a_client_certificate(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    kubeconfig.write(path, "https://127.0.0.1:6443", pki=shared_pki())
    assert path.stat().st_mode & 0o777 == 0o600
    connection = load(path)
    assert connection.ssl_context is not None and connection.token is None


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def test_loading_inline_credentials_leaves_no_key_file_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    kubeconfig.write(tmp_path / "kc", "https://127.0.0.1:6443", pki=shared_pki())
    assert load(tmp_path / "kc").ssl_context is not None
    assert list(scratch.iterdir()) == []


def test_the_loaded_connection_carries_the_clusters_ca(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    kubeconfig.write(path, "https://127.0.0.1:6443", pki=shared_pki())
    assert load(path).ca_pem == shared_pki().ca_pem  # what a joined node agent verifies log readers with
    kubeconfig.write(path, "http://127.0.0.1:6443")
    assert load(path).ca_pem is None


def test_a_user_that_impersonates_acts_as_that_user_with_every_group(tmp_path: Path) -> None:
    """`as`/`as-groups` as client-go sends them (one Impersonate-Group header per group): jane alone may not list
    Jobs; jane in system:masters may."""

    async def list_jobs(path: Path) -> int:
        client = HttpClient(load(path))
        try:
            await client.list(JOBS, "default")
            return 200
        except ApiError as exc:
            return exc.code
        finally:
            await client.close()

    store = MemoryStore()
    with serve(store, pki=shared_pki()) as url:
        path = tmp_path / "kc"
        kubeconfig.write(path, url, pki=shared_pki())
        document = yaml.safe_load(path.read_text())
        document["users"][0]["user"]["as"] = "jane"
        path.write_text(yaml.safe_dump(document))
        assert load(path).impersonate == (("Impersonate-User", "jane"),)
        assert asyncio.run(list_jobs(path)) == 403
        document["users"][0]["user"]["as-groups"] = ["developers", "system:masters"]
        path.write_text(yaml.safe_dump(document))
        assert asyncio.run(list_jobs(path)) == 200
    store.close()
