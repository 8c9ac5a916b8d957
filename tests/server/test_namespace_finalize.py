"""`PUT /api/v1/namespaces/{name}/finalize`: the only way to change a namespace's `spec.finalizers`
(pkg/registry/core/namespace/storage `FinalizeREST`, strategy `namespaceFinalizeStrategy`, validation
`ValidateNamespaceFinalizeUpdate`), and what those finalizers do to its deletion: the namespace controller removes
its own `kubernetes` once the namespace is empty, any other keeps it Terminating until removed
(`ShouldDeleteNamespaceDuringUpdate`). test/e2e/apimachinery/namespace.go "should apply a finalizer to a
Namespace" adds and removes one."""

from __future__ import annotations

import httpx

NS = "/api/v1/namespaces"
FAKE = "e2e.example.com/fakeFinalizer"


def _finalize(http: httpx.Client, name: str, finalizers: list[str]) -> httpx.Response:
    ns = http.get(f"{NS}/{name}").json()
    ns["spec"]["finalizers"] = finalizers
    return http.put(f"{NS}/{name}/finalize", json=ns)


def test_finalize_adds_and_removes_a_spec_finalizer(http: httpx.Client) -> None:
    assert http.post(NS, json={"metadata": {"name": "team"}}).status_code == 201
    added = _finalize(http, "team", ["kubernetes", FAKE])
    assert added.status_code == 200, added.text
    assert added.json()["spec"]["finalizers"] == ["kubernetes", FAKE]
    assert added.json()["status"] == {"phase": "Active"}
    assert http.get(f"{NS}/team").json()["spec"]["finalizers"] == ["kubernetes", FAKE]
    removed = _finalize(http, "team", ["kubernetes"])
    assert removed.status_code == 200, removed.text
    assert removed.json()["spec"]["finalizers"] == ["kubernetes"]


def test_finalize_is_put_only_and_validates_the_names(http: httpx.Client) -> None:
    assert http.post(NS, json={"metadata": {"name": "team"}}).status_code == 201
    assert http.get(f"{NS}/team/finalize").status_code == 405
    bad = _finalize(http, "team", ["kubernetes", "not-qualified"])
    assert bad.status_code == 422, bad.text
    assert bad.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "not-qualified": name is neither a standard finalizer name nor is it fully '
            "qualified",
            "field": "spec.finalizers[1]",
        }
    ]
    entry = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}["namespaces/finalize"]
    assert (entry["kind"], entry["verbs"]) == ("Namespace", ["update"])


def test_a_spec_finalizer_holds_a_deleted_namespace_until_finalize_removes_it(http: httpx.Client) -> None:
    assert http.post(NS, json={"metadata": {"name": "team"}}).status_code == 201
    cms = f"{NS}/team/configmaps"
    assert http.post(cms, json={"metadata": {"name": "c"}}).status_code == 201
    assert _finalize(http, "team", ["kubernetes", FAKE]).status_code == 200
    deleted = http.delete(f"{NS}/team")
    assert deleted.status_code == 200, deleted.text
    held = http.get(f"{NS}/team").json()
    assert held["status"]["phase"] == "Terminating"
    assert held["spec"]["finalizers"] == [FAKE]  # the namespace controller's own is done
    assert http.get(f"{cms}/c").status_code == 404
    labelled = http.patch(
        f"{NS}/team",
        json={"metadata": {"labels": {"a": "b"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert labelled.status_code == 200, labelled.text  # an ordinary write does not finish it
    assert http.get(f"{NS}/team").status_code == 200
    assert _finalize(http, "team", []).status_code == 200
    assert http.get(f"{NS}/team").status_code == 404


def test_a_deleted_namespace_waits_for_its_terminating_pods(http: httpx.Client) -> None:
    """The namespace controller removes `kubernetes` only once no pod is left (`deleteAllContent` requeues while
    pods terminate), so a namespace that is gone has no pods left behind (test/e2e/apimachinery/namespace.go
    "should ensure that all pods are removed when a namespace is deleted")."""
    assert http.post(NS, json={"metadata": {"name": "team"}}).status_code == 201
    pod = {
        "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "pause"}]},
    }
    pods = f"{NS}/team/pods"
    assert http.post(pods, json=pod).status_code == 201
    assert http.delete(f"{NS}/team").status_code == 200
    waiting = http.get(f"{NS}/team").json()
    assert waiting["status"]["phase"] == "Terminating"
    assert waiting["spec"]["finalizers"] == ["kubernetes"]
    assert http.get(f"{pods}/p").json()["metadata"]["deletionGracePeriodSeconds"] == 30
    assert http.delete(f"{pods}/p", params={"gracePeriodSeconds": "0"}).status_code == 200  # the kubelet's last
    assert http.get(f"{NS}/team").status_code == 404
