"""Who may call a TLS-served API: the client certificate or token of its own PKI, nothing else (`kjobs.server.auth`)."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from kjobs.server import tls
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import Server, pod_manifest
from tests.support import client_tls

PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def anonymous(server: Server) -> Iterator[httpx.Client]:
    """A client that trusts the server's CA but presents no credential."""
    trust = ssl.create_default_context(cafile=str(server.pki.ca_file))
    with httpx.Client(base_url=server.url, timeout=10, verify=trust) as client:
        yield client


@pytest.mark.parametrize("content_type", [None, "application/json", "text/plain", "application/yaml"])
def test_a_request_without_credentials_creates_nothing(
    server: Server, anonymous: httpx.Client, http: httpx.Client, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = anonymous.post(PODS, content=orjson.dumps(pod_manifest("intruder")), headers=headers)
    assert response.status_code == 401
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    assert http.get(f"{PODS}/intruder").status_code == 404


@pytest.mark.parametrize("path", ["/api/v1/pods", "/api", "/apis", "/openapi/v3", "/metrics"])
def test_reads_need_credentials_too(anonymous: httpx.Client, path: str) -> None:
    assert anonymous.get(path).status_code == 401


@pytest.mark.parametrize("path", ["/version", "/version/", "/healthz", "/livez", "/readyz"])
def test_public_info_stays_open(anonymous: httpx.Client, path: str) -> None:
    assert anonymous.get(path).status_code == 200  # system:public-info-viewer


@pytest.mark.parametrize("path", ["/readyz/etcd", "/livez/ping", "/healthz/log", "/readyz/nope"])
def test_a_single_health_check_is_forbidden_to_anonymous_users(
    anonymous: httpx.Client, http: httpx.Client, path: str
) -> None:
    """kube-apiserver authenticates a request without credentials as `system:anonymous`, whom RBAC's
    `system:public-info-viewer` lets `get` exactly `/healthz`, `/livez`, `/readyz`, `/version` and `/version/`
    (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go): one check under them is 403 (kjobs answered it).
    The admin still reads it."""
    response = anonymous.get(path)
    assert response.status_code == 403
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'forbidden: User "system:anonymous" cannot get path "{path}"',
        "reason": "Forbidden",
        "details": {},
        "code": 403,
    }
    assert http.get(path).status_code == (404 if path.endswith("nope") else 200)


def test_only_get_is_open_to_anonymous_users(anonymous: httpx.Client) -> None:
    """The rule's verb is `get`; a non-resource request's verb is its method, lower-cased."""
    response = anonymous.post("/healthz")
    assert response.status_code == 403
    assert response.json()["message"] == 'forbidden: User "system:anonymous" cannot post path "/healthz"'


def test_a_wrong_credential_on_a_public_path_is_401(anonymous: httpx.Client) -> None:
    """A credential is checked wherever it is sent: a wrong one is not anonymous."""
    assert anonymous.get("/healthz", headers={"Authorization": "Bearer wrong"}).status_code == 401


def test_the_official_client_without_credentials_is_forbidden_a_single_check(server: Server) -> None:
    """The Python client (`kubernetes`), configured with the CA and no credential: `/version` and `/readyz`
    answer, a check under `/readyz` is the 403."""
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = server.url
    configuration.ssl_ca_cert = str(server.pki.ca_file)
    with client.ApiClient(configuration) as api:
        assert client.VersionApi(api).get_code().git_version == "v1.32.0+kjobs"
        ready = api.call_api("GET", f"{server.url}/readyz")
        ready.read()
        assert (ready.status, ready.data) == (200, b"ok")
        denied = api.call_api("GET", f"{server.url}/readyz/etcd")
        denied.read()
    assert denied.status == 403
    assert orjson.loads(denied.data)["message"] == 'forbidden: User "system:anonymous" cannot get path "/readyz/etcd"'


def test_the_admin_certificate_or_the_token_is_accepted(server: Server, anonymous: httpx.Client) -> None:
    with httpx.Client(base_url=server.url, verify=client_tls(server.pki)) as with_certificate:
        assert with_certificate.get(PODS).status_code == 200
    assert anonymous.get(PODS, headers={"Authorization": f"Bearer {server.pki.token}"}).status_code == 200
    assert anonymous.get(PODS, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert anonymous.get(PODS, headers={"Authorization": f"Basic {server.pki.token}"}).status_code == 401


def test_another_servers_token_and_certificate_are_refused(server: Server, tmp_path: Path) -> None:
    other = tls.ensure(tmp_path / "other-pki", "127.0.0.1")
    trust = ssl.create_default_context(cafile=str(server.pki.ca_file))
    with httpx.Client(base_url=server.url, verify=trust) as client:
        assert client.get(PODS, headers={"Authorization": f"Bearer {other.token}"}).status_code == 401
    foreign = ssl.create_default_context(cafile=str(server.pki.ca_file))
    foreign.load_cert_chain(str(other.admin_cert), str(other.admin_key))
    with httpx.Client(base_url=server.url, verify=foreign) as client, pytest.raises(httpx.TransportError):
        client.get(PODS)  # a certificate the cluster CA did not sign fails the handshake


def test_the_server_is_verified_against_its_own_ca_only(server: Server, tmp_path: Path) -> None:
    other = tls.ensure(tmp_path / "other-pki", "127.0.0.1")
    with httpx.Client(base_url=server.url, verify=client_tls(other)) as client, pytest.raises(httpx.ConnectError):
        client.get("/version")


def test_a_plain_http_server_is_open_and_says_http() -> None:
    store = MemoryStore()
    with serve(store) as url, httpx.Client(base_url=url) as client:
        assert url.startswith("http://127.0.0.1:")
        assert client.get(PODS).status_code == 200
    store.close()


def test_the_pki_is_reused_and_reissues_the_serving_certificate_for_a_new_address(tmp_path: Path) -> None:
    first = tls.ensure(tmp_path / "pki", "127.0.0.1")
    ca, admin, serving = first.ca_pem, first.admin_cert.read_bytes(), first.server_cert.read_bytes()
    again = tls.ensure(tmp_path / "pki", "127.0.0.1")
    assert (again.ca_pem, again.admin_cert.read_bytes(), again.server_cert.read_bytes()) == (ca, admin, serving)
    assert again.token == first.token
    moved = tls.ensure(tmp_path / "pki", "10.1.2.3")
    assert moved.ca_pem == ca and moved.admin_cert.read_bytes() == admin
    assert moved.server_cert.read_bytes() != serving
    assert (tmp_path / "pki" / "apiserver.san").read_text() == tls.alt_names("10.1.2.3")
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "pki").iterdir()}
    assert modes["ca.key"] == modes["apiserver.key"] == modes["admin.key"] == modes["token"] == 0o600
    assert (tmp_path / "pki").stat().st_mode & 0o777 == 0o700


def test_an_empty_token_file_gets_a_new_token_and_an_empty_bearer_token_is_nobody(tmp_path: Path) -> None:
    """`pki/token` left empty (a start killed between creating and writing it, a full disk) made the admin's token
    '', so `Authorization: Bearer ` with nothing after it was `system:masters` for anyone reaching the port."""
    from kjobs.api.errors import ApiError
    from kjobs.server.auth import Authenticator

    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "token").write_text("\n")
    pki = tls.ensure(tmp_path / "pki", "127.0.0.1")
    assert len(pki.token) >= 32
    assert (tmp_path / "pki" / "token").read_text() == pki.token
    assert (tmp_path / "pki" / "token").stat().st_mode & 0o777 == 0o600
    assert tls.ensure(tmp_path / "pki", "127.0.0.1").token == pki.token
    for authorization in ("Bearer ", "Bearer", "bearer  "):
        with pytest.raises(ApiError) as info:
            Authenticator("").check(authorization, None)
        assert info.value.code == 401


@pytest.mark.parametrize("lost", ["ca.key", "ca.crt"])
def test_half_a_ca_is_refused_naming_the_missing_file_not_replaced(tmp_path: Path, lost: str) -> None:
    """A CA file lost (the other kept) made a new CA over the one left, and new certificates: every kubeconfig
    written before failed TLS, silently. Now `ensure` refuses, naming it, and changes nothing."""
    first = tls.ensure(tmp_path / "pki", "127.0.0.1")
    (tmp_path / "pki" / lost).unlink()
    kept = "ca.crt" if lost == "ca.key" else "ca.key"
    before = {p.name: p.read_bytes() for p in (tmp_path / "pki").iterdir()}
    with pytest.raises(OSError, match=f"the cluster CA is incomplete: {tmp_path / 'pki' / lost} is missing but {kept}"):
        tls.ensure(tmp_path / "pki", "127.0.0.1")
    assert {p.name: p.read_bytes() for p in (tmp_path / "pki").iterdir()} == before
    assert first.token == (tmp_path / "pki" / "token").read_text()
