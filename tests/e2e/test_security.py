"""What an unauthenticated or under-privileged caller of `kjobs up`, and what a pod's process, can reach
(docs/security.md): every served path without credentials, with forged, foreign-audience and revoked tokens, and
with a ServiceAccount token no RoleBinding names, answered as kube-apiserver answers them; a pod in a mount
namespace reads neither kjobs' keys, database and kubeconfig nor another pod's token, and inherits nothing of
kjobs' own environment beyond PATH, HOME and the locale."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import os
import shutil
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
import yaml

from kjobs.node.process_runtime import mounting_enabled
from tests.e2e.test_config_objects import Up, kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

SECRET = "kjobs-test-secret-value"


class Api:
    """Raw HTTPS to the server, verified against its CA, presenting no client certificate."""

    def __init__(self, up: Up) -> None:
        cluster = yaml.safe_load(up.config.read_text())["clusters"][0]["cluster"]
        self.host, port = cluster["server"].removeprefix("https://").rsplit(":", 1)
        self.port = int(port)
        self.context = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )

    def __call__(
        self, method: str, path: str, token: str | None = None, body: object = None, extra: dict[str, str] | None = None
    ) -> tuple[int, dict]:
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=20)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        headers.update(extra or {})
        payload = None if body is None else json.dumps(body)
        if payload is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=payload, headers=headers)
            response = conn.getresponse()
            data = response.read()
        finally:
            conn.close()
        try:
            decoded = json.loads(data)
        except ValueError:
            decoded = {"raw": data.decode(errors="replace")}
        return response.status, decoded if isinstance(decoded, dict) else {"raw": decoded}

    def upgrade(self, path: str, token: str | None = None) -> int:
        """The status a WebSocket upgrade (exec, attach, portforward) is answered with."""
        raw = socket.create_connection((self.host, self.port), timeout=20)
        with self.context.wrap_socket(raw, server_hostname=self.host) as sock:
            auth = f"Authorization: Bearer {token}\r\n" if token else ""
            sock.sendall(
                (
                    f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    f"Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n{auth}\r\n"
                ).encode()
            )
            line = sock.recv(64).decode().split("\r\n")[0]
        return int(line.split()[1])


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    tmp = tmp_path_factory.mktemp("security")
    # credentials in kjobs' own environment, which no pod may inherit
    leaked = {"KUBECONFIG": str(tmp / "leaked-kubeconfig"), "KJOBS_TEST_TOKEN": SECRET}
    with mock.patch.dict(os.environ, leaked), kubectl_on_up(tmp) as kubectl:
        yield kubectl


@pytest.fixture(scope="module")
def api(up: Up) -> Api:
    return Api(up)


PUBLIC = ["/healthz", "/livez", "/readyz", "/version"]
"""What `system:public-info-viewer` lets `system:anonymous` get (bootstrappolicy/policy.go)."""

PRIVATE = [
    "/",
    "/api",
    "/apis",
    "/api/v1",
    "/openapi/v2",
    "/openapi/v3",
    "/openapi/v3/api/v1",
    "/metrics",
    "/metrics/slis",
    "/api/v1/namespaces",
    "/api/v1/pods",
    "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1",
    "/api/v1/secrets",
    "/api/v1/nodes",
    "/api/v1/nodes/kjobs-node/proxy/pods",
    "/api/v1/nodes/kjobs-node/proxy/stats/summary",
    "/api/v1/nodes/kjobs-node/proxy/logs/",
    "/api/v1/namespaces/default/pods/x/log",
    "/api/v1/namespaces/default/services/kubernetes/proxy/",
    "/apis/metrics.k8s.io/v1beta1/pods",
    "/apis/batch/v1/jobs",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/.well-known/openid-configuration",
    "/logs/",
    "/debug/pprof/",
]

POSTS = {
    "tokenreviews": (
        "/apis/authentication.k8s.io/v1/tokenreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": "x"}},
    ),
    "tokenrequest": (
        "/api/v1/namespaces/default/serviceaccounts/default/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
    ),
    "eviction": (
        "/api/v1/namespaces/default/pods/x/eviction",
        {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "x"}},
    ),
    "namespace": ("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "pwn"}}),
}

UPGRADES = [
    "/api/v1/namespaces/default/pods/x/exec?command=id&stdout=1",
    "/api/v1/namespaces/default/pods/x/attach?stdout=1",
    "/api/v1/namespaces/default/pods/x/portforward?ports=80",
]


@pytest.mark.parametrize("path", PUBLIC)
def test_anyone_may_read_health_and_version(api: Api, path: str) -> None:
    assert api("GET", path)[0] == 200


@pytest.mark.parametrize("path", PRIVATE)
def test_every_other_path_is_401_without_credentials(api: Api, path: str) -> None:
    code, body = api("GET", path)
    assert (code, body.get("reason"), body.get("message")) == (401, "Unauthorized", "Unauthorized")


@pytest.mark.parametrize("name", POSTS)
def test_writes_are_401_without_credentials(api: Api, name: str) -> None:
    path, body = POSTS[name]
    assert api("POST", path, body=body)[0] == 401


@pytest.mark.parametrize("path", UPGRADES)
def test_websocket_upgrades_are_401_without_credentials(api: Api, path: str) -> None:
    assert api.upgrade(path) == 401


def _b64(data: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def _claims(**extra: object) -> dict[str, object]:
    now = int(time.time())
    claims: dict[str, object] = {
        "iss": "https://kubernetes.default.svc.cluster.local",
        "sub": "system:serviceaccount:kube-system:default",
        "aud": ["https://kubernetes.default.svc.cluster.local"],
        "iat": now,
        "nbf": now,
        "exp": now + 3600,
        "kubernetes.io": {"namespace": "kube-system", "serviceaccount": {"name": "default", "uid": "x"}},
    }
    claims.update(extra)
    return claims


def _forged(key: bytes, header: dict[str, str]) -> str:
    signing = f"{_b64(header)}.{_b64(_claims())}"
    signature = hmac.new(key, signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def _bad_tokens(up: Up) -> dict[str, str]:
    up.ok("create", "serviceaccount", "nobody")
    spec = {"serviceAccountName": "nobody", "containers": [{"name": "c", "image": "x", "command": ["sleep", "60"]}]}
    up.ok("run", "gone", "--image=x", "--restart=Never", f"--overrides={json.dumps({'spec': spec})}")
    bound = up.ok("create", "token", "nobody", "--bound-object-kind", "Pod", "--bound-object-name", "gone")
    up.ok("delete", "pod", "gone", "--grace-period=0", "--force")
    return {
        "garbage": "abc",
        "alg-none": f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(_claims())}.",
        "wrong-key": _forged(b"not the server's key", {"alg": "HS256", "typ": "JWT"}),
        "another-audience": up.ok("create", "token", "nobody", "--audience", "vault"),
        "deleted-pods": bound,
    }


def test_forged_foreign_and_revoked_tokens_are_401_even_on_public_paths(up: Up, api: Api) -> None:
    """An invalid bearer token fails authentication before the anonymous user is considered (kube-apiserver's
    `union.NewFailOnError`), so /version is 401 too; nothing else answers."""
    for name, token in _bad_tokens(up).items():
        for path in ("/version", "/api", "/api/v1/namespaces/kube-system/secrets"):
            code, _ = api("GET", path, token)
            assert code == 401, (name, path)
        assert api.upgrade(UPGRADES[0], token) == 401, name


def test_a_service_account_without_bindings_gets_discovery_and_nothing_more(up: Up, api: Api) -> None:
    """`system:discovery`, `system:basic-user` and `system:public-info-viewer` (bound to every authenticated
    user) allow discovery, OpenAPI, health, version and the self reviews; everything else is 403 Forbidden."""
    up.ok("create", "serviceaccount", "unbound")
    token = up.ok("create", "token", "unbound")
    for path in [*PUBLIC, "/api", "/apis", "/api/v1", "/openapi/v2", "/openapi/v3"]:
        assert api("GET", path, token)[0] == 200, path
    allowed = {
        "/api",
        "/apis",
        "/api/v1",
        "/openapi/v2",
        "/openapi/v3",
        "/openapi/v3/api/v1",
        "/.well-known/openid-configuration",
    }
    for path in PRIVATE:
        if path in allowed:
            continue
        code, body = api("GET", path, token)
        assert code == 403, path
        assert 'User \\"system:serviceaccount:default:unbound\\"' in json.dumps(body["message"]), path
    for name, (path, body) in POSTS.items():
        assert api("POST", path, token, body)[0] == 403, name
    for path in UPGRADES:
        assert api.upgrade(path, token) == 403, path
    masters = {"Impersonate-User": "kjobs-admin", "Impersonate-Group": "system:masters"}
    code, body = api("GET", "/api/v1/secrets", token, extra=masters)
    assert code == 403 and "cannot impersonate resource" in body["message"]
    assert api("GET", "/api/v1/secrets", extra=masters)[0] == 401
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    code, answer = api("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", token, review)
    assert (code, answer["status"]["userInfo"]["username"]) == (201, "system:serviceaccount:default:unbound")


PEEK = """
data={data}; kubeconfig={kubeconfig}; other={other}
echo "data: [$(ls -A $data)] [$(ls -A $data/nodes/kjobs-node/pods | wc -l)]"
cat $data/pki/sa.key $data/pki/ca.key $data/pki/admin.key $data/kjobs.db 2>/dev/null || echo "keys: unreadable"
echo "kubeconfig: [$(cat $kubeconfig)]"
cat $other 2>/dev/null || echo "other token: unreadable"
echo "own token: $(wc -c < /var/run/secrets/kubernetes.io/serviceaccount/token | tr -d ' ')"
echo "cwd: $(pwd)" ; echo hi > mine && echo "cwd writable"
env | sort
"""


@pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")
def test_a_pod_reads_neither_kjobs_secrets_nor_another_pods_token_nor_its_environment(up: Up) -> None:
    data = up.config.parent / "data"
    up.ok("run", "victim", "--image=x", "--restart=Never", "--command", "--", "sleep", "120")

    def victim_token() -> Path | None:
        found = sorted(data.glob("nodes/*/pods/*/volumes/kubernetes.io~projected/kube-api-access-*/token"))
        return found[0] if found else None

    other = _until(victim_token, "the victim pod's token")
    assert other.read_text().count(".") == 2
    script = PEEK.format(data=data, kubeconfig=up.config, other=other)
    up.ok("run", "peek", "--image=x", "--restart=Never", "--command", "--", "sh", "-c", script)
    _until(
        lambda: up("get", "pod", "peek", "-o", "jsonpath={.status.phase}")[1] in ("Succeeded", "Failed") or None,
        "peek to end",
    )
    log = up.ok("logs", "peek").splitlines()
    assert log[0] == "data: [nodes] [1]"  # its own pod directory only
    assert log[1:4] == ["keys: unreadable", "kubeconfig: []", "other token: unreadable"]
    assert log[4].startswith("own token: ") and int(log[4].split()[-1]) > 100
    assert log[5].startswith(f"cwd: {data}/nodes/kjobs-node/pods/") and log[6] == "cwd writable"
    env = dict(line.split("=", 1) for line in log[7:] if "=" in line)
    assert SECRET not in "\n".join(log)
    assert "KUBECONFIG" not in env and "KJOBS_TEST_TOKEN" not in env
    assert env["PATH"] == os.environ["PATH"] and env["HOSTNAME"] == "peek"
    assert env["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    # LC_CTYPE: under the C locale, Python (PEP 538) sets it to C.UTF-8 in a wrapper the container is exec'd through
    locale = {"LANG", "LC_ALL", "LC_CTYPE", "TZ"}
    assert set(env) <= {"PATH", "HOME", "HOSTNAME", "PWD", "SHLVL", "OLDPWD", "_"} | locale | {
        k for k in env if k.startswith("KUBERNETES_")
    }
    up.ok("delete", "pod", "victim", "--grace-period=0", "--force")


SWAP = """
for f in $PWD/containers/swap/*; do rm -f $f; ln -sf {key} $f; done
echo > $PWD/volumes/planted || true
exit 1
"""


@pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")
def test_a_pod_cannot_turn_its_termination_message_into_a_key_of_kjobs(up: Up) -> None:
    """The termination-message file is in the pod's directory, its working directory: a container that replaced
    it with a symlink to `sa.key` had the node read the key into its status (`state.terminated.message`), where
    anyone who may get the pod reads it. The node's entries there are read-only in the container's view, and the
    node reads the file without following a symlink."""
    key = up.config.parent / "data" / "pki" / "sa.key"
    up.ok("run", "swap", "--image=x", "--restart=Never", "--command", "--", "sh", "-c", SWAP.format(key=key))

    def ended() -> dict | None:
        code, out = up("get", "pod", "swap", "-o", "json")
        status = json.loads(out).get("status", {}) if code == 0 else {}
        state = ((status.get("containerStatuses") or [{}])[0].get("state") or {}).get("terminated")
        return state if state else None

    terminated = ended() or _until(ended, "swap to end")
    assert key.read_text().strip() not in json.dumps(terminated), terminated
    assert "Read-only file system" in up.ok("logs", "swap"), terminated
