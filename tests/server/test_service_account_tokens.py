"""ServiceAccount tokens through the API: the admission plugin's token volume (plugin/pkg/admission/serviceaccount/
admission_test.go, the token rows), `serviceaccounts/NAME/token` (pkg/registry/core/serviceaccount/storage/
token.go, pkg/apis/authentication/validation), authentication by a token over HTTPS and TokenReview."""

from __future__ import annotations

import base64
import json
import ssl
import time
from typing import Any

import httpx
import pytest

from kjobs.api.token_requests import MOUNT_PATH, token_volume_source
from kjobs.api.types import Obj
from kjobs.client.resources import NAMESPACES, PODS, SERVICE_ACCOUNTS
from kjobs.clock import FakeClock
from kjobs.server.admission import AdmissionSettings
from kjobs.virtualtime import run
from tests.server.conftest import Server
from tests.support import local_api

NS = "myns"
TOKEN_MOUNT = {"readOnly": True, "mountPath": MOUNT_PATH}


def _pod(name: str = "myname", **spec: Any) -> Obj:
    return {
        "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}], **spec},
    }


def _admitted(pod: Obj, *, account: Obj | None = None, disabled: frozenset[str] = frozenset()) -> Obj:
    """The pod as created through the API (the account `default`, or `account`, exists in NS)."""

    async def main() -> Obj:
        client = await local_api(clock, admission=AdmissionSettings(disabled_plugins=disabled))
        await client.create(NAMESPACES, None, {"metadata": {"name": NS}})
        await client.create(SERVICE_ACCOUNTS, NS, account or {"metadata": {"name": "default"}})
        return await client.create(PODS, NS, pod)

    clock = FakeClock()
    return run(main(), clock)


def _token_volumes(pod: Obj) -> list[Obj]:
    return [v for v in pod["spec"].get("volumes") or [] if v["name"].startswith("kube-api-access-")]


def test_automounts_api_token() -> None:
    """TestAutomountsAPIToken: one `kube-api-access-xxxxx` volume, mounted read-only in every init container and
    container (ephemeral containers are added later, by an update the plugin does not mutate)."""
    pod = _admitted(_pod(initContainers=[{"name": "init", "image": "busybox"}]))
    [volume] = _token_volumes(pod)
    assert len(volume["name"]) == len("kube-api-access-") + 5
    assert volume == {"name": volume["name"], "projected": token_volume_source()}
    assert volume["projected"] == {
        "defaultMode": 420,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {
                "downwardAPI": {
                    "items": [
                        {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
                    ]
                }
            },
        ],
    }
    expected = [{"name": volume["name"], **TOKEN_MOUNT}]
    assert pod["spec"]["initContainers"][0]["volumeMounts"] == expected
    assert pod["spec"]["containers"][0]["volumeMounts"] == expected


def test_respects_existing_mount() -> None:
    """TestRespectsExistingMount: a container mounting something at the path keeps it; no volume is added."""
    mine = {"name": "my-token", "mountPath": MOUNT_PATH}
    pod = _pod(volumes=[{"name": "my-token", "emptyDir": {}}])
    pod["spec"]["containers"][0]["volumeMounts"] = [mine]
    admitted = _admitted(pod)
    assert _token_volumes(admitted) == []
    assert admitted["spec"]["containers"][0]["volumeMounts"] == [{**mine}]


def test_an_existing_kube_api_access_volume_is_reused() -> None:
    """mountServiceAccountToken: a `kube-api-access-*` volume the pod has is the one mounted, none is added."""
    pod = _pod(volumes=[{"name": "kube-api-access-mine", "projected": token_volume_source()}])
    admitted = _admitted(pod)
    assert [v["name"] for v in _token_volumes(admitted)] == ["kube-api-access-mine"]
    assert admitted["spec"]["containers"][0]["volumeMounts"] == [{"name": "kube-api-access-mine", **TOKEN_MOUNT}]


@pytest.mark.parametrize(
    ("on_pod", "on_account", "mounted"),
    [
        pytest.param(False, False, False, id="false-false"),
        pytest.param(False, True, False, id="false-true"),
        pytest.param(False, None, False, id="false-nil"),
        pytest.param(None, False, False, id="nil-false"),
        pytest.param(None, True, True, id="nil-true"),
        pytest.param(None, None, True, id="nil-nil"),
        pytest.param(True, False, True, id="true-false"),
        pytest.param(True, True, True, id="true-true"),
        pytest.param(True, None, True, id="true-nil"),
    ],
)
def test_set_automount_service_account_token(on_pod: bool | None, on_account: bool | None, mounted: bool) -> None:
    """TestSetAutomountServiceAccountToken: the pod's `automountServiceAccountToken` wins over its account's."""
    account: Obj = {"metadata": {"name": "default"}}
    if on_account is not None:
        account["automountServiceAccountToken"] = on_account
    pod = _pod() if on_pod is None else _pod(automountServiceAccountToken=on_pod)
    admitted = _admitted(pod, account=account)
    assert bool(_token_volumes(admitted)) is mounted
    assert bool(admitted["spec"]["containers"][0].get("volumeMounts")) is mounted


def test_mirror_pods_and_a_disabled_plugin_get_no_token_volume() -> None:
    mirror = _pod(nodeName="node-1")
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "true"}
    assert _token_volumes(_admitted(mirror)) == []
    assert _token_volumes(_admitted(_pod(), disabled=frozenset({"ServiceAccount"}))) == []


def test_updates_do_not_add_the_volume() -> None:
    """TestIgnoresNonCreate: a pod created without the volume (automount off) does not gain it on update."""

    async def main() -> Obj:
        client = await local_api(clock)
        await client.create(NAMESPACES, None, {"metadata": {"name": NS}})
        pod = await client.create(PODS, NS, _pod(automountServiceAccountToken=False))
        pod["metadata"]["labels"] = {"a": "b"}
        return await client.update(PODS, NS, pod)

    clock = FakeClock()
    assert _token_volumes(run(main(), clock)) == []


# -------------------------------------------------------------------------------------------- over HTTPS


def _setup(http: httpx.Client) -> None:
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": NS}}).status_code == 201
    assert http.post(f"/api/v1/namespaces/{NS}/serviceaccounts", json={"metadata": {"name": "sa"}}).status_code == 201


def _token(http: httpx.Client, body: Obj | None = None, account: str = "sa") -> httpx.Response:
    return http.post(f"/api/v1/namespaces/{NS}/serviceaccounts/{account}/token", json=body or {"spec": {}})


def _claims(token: str) -> Obj:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_token_request_is_defaulted_and_signed_with_upstreams_claims(server: Server, http: httpx.Client) -> None:
    _setup(http)
    answer = _token(http)
    assert answer.status_code == 201, answer.text
    request = answer.json()
    assert request["kind"] == "TokenRequest" and request["apiVersion"] == "authentication.k8s.io/v1"
    assert request["metadata"]["name"] == "sa" and request["metadata"]["namespace"] == NS
    assert request["spec"] == {"audiences": ["https://kubernetes.default.svc.cluster.local"], "expirationSeconds": 3600}
    claims = _claims(request["status"]["token"])
    sa = http.get(f"/api/v1/namespaces/{NS}/serviceaccounts/sa").json()
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert claims["sub"] == f"system:serviceaccount:{NS}:sa"
    assert claims["aud"] == ["https://kubernetes.default.svc.cluster.local"]
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"] and claims["jti"]
    assert claims["kubernetes.io"] == {"namespace": NS, "serviceaccount": {"name": "sa", "uid": sa["metadata"]["uid"]}}


@pytest.mark.parametrize(
    ("seconds", "message"),
    [
        pytest.param(
            599, "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
        ),
        pytest.param(
            (1 << 32) + 1,
            "spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds",
        ),
    ],
)
def test_token_request_validation(http: httpx.Client, seconds: int, message: str) -> None:
    """ValidateTokenRequest: 10 minutes to 2^32 seconds (both ends allowed)."""
    _setup(http)
    answer = _token(http, {"spec": {"expirationSeconds": seconds}})
    assert answer.status_code == 422
    assert answer.json()["message"] == f'TokenRequest.authentication.k8s.io "" is invalid: {message}'
    assert _token(http, {"spec": {"expirationSeconds": 600}}).status_code == 201
    assert _token(http, {"spec": {"expirationSeconds": 1 << 32}}).status_code == 201


def test_token_request_refusals(http: httpx.Client) -> None:
    _setup(http)
    assert _token(http, account="nosuch").json()["message"] == 'serviceaccounts "nosuch" not found'
    named = _token(http, {"metadata": {"name": "other"}, "spec": {}})
    assert (named.status_code, named.json()["message"]) == (
        422,
        'TokenRequest.authentication.k8s.io "sa" is invalid: metadata.name: Invalid value: "other": must match the '
        "service account name if specified",
    )
    pod = http.post(f"/api/v1/namespaces/{NS}/pods", json=_pod("p")).json()  # runs as `default`, which is missing
    assert pod["kind"] == "Pod"
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p"}
    other = _token(http, {"spec": {"boundObjectRef": ref}})
    assert (other.status_code, other.json()["message"]) == (
        400,
        'cannot bind token for serviceaccount "sa" to pod running with different serviceaccount name.',
    )
    missing = _token(http, {"spec": {"boundObjectRef": {**ref, "name": "nope"}}})
    assert (missing.status_code, missing.json()["message"]) == (404, 'pods "nope" not found')
    kind = _token(http, {"spec": {"boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}})
    assert (kind.status_code, kind.json()["message"]) == (
        400,
        "cannot bind token to object of type apps/v1, Kind=Deployment",
    )
    assert http.get(f"/api/v1/namespaces/{NS}/serviceaccounts/sa/token").status_code == 405


def _as(server: Server, token: str) -> httpx.Client:
    """A client presenting only `token` (no client certificate)."""
    return httpx.Client(
        base_url=server.url,
        timeout=10,
        verify=ssl.create_default_context(cafile=str(server.pki.ca_file)),
        headers={"Authorization": f"Bearer {token}"},
    )


def test_a_pod_bound_token_authenticates_its_account_until_the_pod_is_deleted(
    server: Server, http: httpx.Client
) -> None:
    _setup(http)
    pod = http.post(f"/api/v1/namespaces/{NS}/pods", json=_pod("p", serviceAccountName="sa")).json()
    uid = pod["metadata"]["uid"]
    stale = _token(http, {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "x"}}})
    assert (stale.status_code, stale.json()["reason"]) == (409, "Conflict")
    assert stale.json()["message"] == (
        'Operation cannot be fulfilled on Pod "p": the UID in the bound object reference (x) does not match the UID '
        "in record. The object might have been deleted and then recreated"
    )
    bound = _token(http, {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid}}})
    token = bound.json()["status"]["token"]
    with _as(server, token) as client:
        forbidden = client.get(f"/api/v1/namespaces/{NS}/pods")
        assert forbidden.status_code == 403
        assert forbidden.json()["message"] == (
            f'pods is forbidden: User "system:serviceaccount:{NS}:sa" cannot list resource "pods" in API group "" in '
            f'the namespace "{NS}"'
        )
        binding = {
            "metadata": {"name": "read"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pod-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": NS}],
        }
        role = {
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
        }
        http.post("/apis/rbac.authorization.k8s.io/v1/clusterroles", json=role)
        created = http.post(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings", json=binding)
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 10  # the authorizer reads the bindings through its watch
        while (listed := client.get(f"/api/v1/namespaces/{NS}/pods")).status_code == 403:
            assert time.monotonic() < deadline, listed.text
            time.sleep(0.02)
        assert listed.status_code == 200 and [p["metadata"]["name"] for p in listed.json()["items"]] == ["p"]
        who = client.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json={}).json()["status"]["userInfo"]
        sa_uid = http.get(f"/api/v1/namespaces/{NS}/serviceaccounts/sa").json()["metadata"]["uid"]
        assert who == {
            "username": f"system:serviceaccount:{NS}:sa",
            "uid": sa_uid,
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{NS}", "system:authenticated"],
            "extra": {
                "authentication.kubernetes.io/credential-id": [f"JTI={_claims(token)['jti']}"],
                "authentication.kubernetes.io/pod-name": ["p"],
                "authentication.kubernetes.io/pod-uid": [uid],
            },
        }
        review = http.post("/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {"token": token}})
        assert review.status_code == 201
        assert review.json()["status"] == {
            "authenticated": True,
            "user": who,
            "audiences": ["https://kubernetes.default.svc.cluster.local"],
        }
        assert http.delete(f"/api/v1/namespaces/{NS}/pods/p", params={"gracePeriodSeconds": "0"}).status_code == 200
        assert client.get(f"/api/v1/namespaces/{NS}/pods").status_code == 401
        review = http.post("/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {"token": token}}).json()
        assert review["status"] == {
            "authenticated": False,
            "user": {},
            "error": "service account token has been invalidated",
        }


def test_token_review_answers_for_audiences_and_forged_tokens(server: Server, http: httpx.Client) -> None:
    _setup(http)
    token = _token(http, {"spec": {"audiences": ["vault"]}}).json()["status"]["token"]
    review = http.post("/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {"token": token}}).json()
    assert review["status"]["error"] == (
        'token audiences ["vault"] is invalid for the target audiences ["https://kubernetes.default.svc.cluster.local"]'
    )
    asked = {"spec": {"token": token, "audiences": ["vault"]}}
    review = http.post("/apis/authentication.k8s.io/v1/tokenreviews", json=asked).json()
    assert review["status"]["authenticated"] is True and review["status"]["audiences"] == ["vault"]
    with _as(server, token) as client:  # not for the API's audience
        assert client.get(f"/api/v1/namespaces/{NS}/pods").status_code == 401
    header, payload, _ = token.split(".")
    forged = f"{header}.{payload}.{base64.urlsafe_b64encode(b'x' * 32).rstrip(b'=').decode()}"
    with _as(server, forged) as client:
        assert client.get(f"/api/v1/namespaces/{NS}/pods").status_code == 401
    empty = http.post("/apis/authentication.k8s.io/v1/tokenreviews", json={"spec": {}})
    assert (empty.status_code, empty.json()["message"]) == (400, "token is required for TokenReview in authentication")


def test_discovery_lists_the_token_subresource_and_tokenreviews(http: httpx.Client) -> None:
    core = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    assert core["serviceaccounts/token"] == {
        "name": "serviceaccounts/token",
        "singularName": "",
        "namespaced": True,
        "group": "authentication.k8s.io",
        "version": "v1",
        "kind": "TokenRequest",
        "verbs": ["create"],
    }
    authn = {r["name"]: r for r in http.get("/apis/authentication.k8s.io/v1").json()["resources"]}
    assert authn["tokenreviews"]["verbs"] == ["create"] and authn["tokenreviews"]["namespaced"] is False


@pytest.mark.parametrize(
    "body",
    [
        {"spec": {"expirationSeconds": "soon"}},
        {"spec": {"audiences": "api"}},
        {"spec": {"boundObjectRef": ["Pod"]}},
        {"metadata": [], "spec": {}},
    ],
)
def test_a_mistyped_token_request_is_a_bad_request(http: httpx.Client, body: Obj) -> None:
    _setup(http)
    answer = _token(http, body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["message"].startswith('TokenRequest in version "v1" cannot be handled as a TokenRequest: ')


def test_the_signing_key_is_made_once_and_never_made_again_over_one_it_cannot_read(tmp_path: Any) -> None:
    """`sa.key`: made when missing (or empty: a start killed before writing it), read back the same, and refused
    naming it when it holds anything else (another release's format, damage), left as it was (docs/upgrade41.md)."""
    from kjobs.server.satokens import KEY_FILE, load_or_create_key

    key = load_or_create_key(tmp_path)
    assert len(key) == 32 and load_or_create_key(tmp_path) == key
    path = tmp_path / KEY_FILE
    for unreadable in ("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIH7c\n-----END PRIVATE KEY-----\n", "ab" * 8):
        path.write_text(unreadable)
        with pytest.raises(OSError, match=f"the ServiceAccount signing key {path} is not the 64 or more hex digits"):
            load_or_create_key(tmp_path)
        assert path.read_text() == unreadable
    path.write_bytes(b"\xff\xfe binary")
    with pytest.raises(OSError, match=f"cannot read the ServiceAccount signing key {path}"):
        load_or_create_key(tmp_path)
    path.write_text("")
    assert len(load_or_create_key(tmp_path)) == 32
