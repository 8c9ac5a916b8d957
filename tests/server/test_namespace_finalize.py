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


def _held_namespace(http: httpx.Client, name: str, **meta: object) -> None:
    """A namespace with a spec finalizer of its own, so it stays Terminating after its DELETE for the test to read."""
    assert http.post(NS, json={"metadata": {"name": name, **meta}}).status_code == 201
    assert _finalize(http, name, ["kubernetes", FAKE]).status_code == 200


def test_a_namespace_delete_records_its_propagation_policy_as_a_finalizer(http: httpx.Client) -> None:
    """pkg/registry/core/namespace/storage/storage.go `Delete`: Orphan adds `orphan`, Foreground adds
    `foregroundDeletion` (`kubectl delete ns --cascade=orphan|foreground`); Background and no policy add neither."""
    cases = {"orphan": "Orphan", "fg": "Foreground", "bg": "Background", "none": None}
    for name, policy in cases.items():
        _held_namespace(http, name)
        params = {"propagationPolicy": policy} if policy else {}
        deleted = http.delete(f"{NS}/{name}", params=params)
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["status"]["phase"] == "Terminating"
        expected = {"orphan": ["orphan"], "fg": ["foregroundDeletion"]}.get(name)
        assert deleted.json()["metadata"].get("finalizers") == expected, name
        held = http.get(f"{NS}/{name}").json()
        assert held["metadata"].get("finalizers") == expected, name
        assert held["spec"]["finalizers"] == [FAKE]


def test_a_namespace_delete_with_orphan_dependents_false_is_foreground_and_accepted(http: httpx.Client) -> None:
    """The deprecated `orphanDependents`: false asks for `foregroundDeletion` (and drops `orphan`), answered 202
    Accepted as the namespace is not gone (handlers/delete.go); true asks for `orphan`."""
    _held_namespace(http, "team", finalizers=["orphan", "example.com/keep"])
    deleted = http.request("DELETE", f"{NS}/team", json={"orphanDependents": False})
    assert deleted.status_code == 202, deleted.text
    assert deleted.json()["metadata"]["finalizers"] == ["example.com/keep", "foregroundDeletion"]
    _held_namespace(http, "other")
    deleted = http.request("DELETE", f"{NS}/other", json={"orphanDependents": True})
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["metadata"]["finalizers"] == ["orphan"]


def test_a_namespace_delete_policy_replaces_the_finalizer_it_had(http: httpx.Client) -> None:
    """A namespace created with `orphan`: Background drops it, no policy keeps it; a second DELETE of a
    Terminating namespace changes nothing."""
    _held_namespace(http, "bg", finalizers=["orphan"])
    assert "finalizers" not in http.delete(f"{NS}/bg", params={"propagationPolicy": "Background"}).json()["metadata"]
    again = http.delete(f"{NS}/bg", params={"propagationPolicy": "Orphan"})
    assert again.status_code == 200, again.text
    assert "finalizers" not in again.json()["metadata"]
    _held_namespace(http, "kept", finalizers=["orphan"])
    assert http.delete(f"{NS}/kept").json()["metadata"]["finalizers"] == ["orphan"]


def test_a_dry_run_namespace_delete_answers_what_it_would_do(http: httpx.Client) -> None:
    assert http.post(NS, json={"metadata": {"name": "team"}}).status_code == 201
    dry = http.delete(f"{NS}/team", params={"dryRun": "All", "propagationPolicy": "Foreground"})
    assert dry.status_code == 200, dry.text
    assert dry.json()["status"]["phase"] == "Terminating"
    assert dry.json()["metadata"]["finalizers"] == ["foregroundDeletion"]
    stored = http.get(f"{NS}/team").json()
    assert stored["status"]["phase"] == "Active"
    assert "deletionTimestamp" not in stored["metadata"] and "finalizers" not in stored["metadata"]


def test_without_the_garbage_collector_an_orphaning_namespace_stays_terminating(http: httpx.Client) -> None:
    """Emptied, its `kubernetes` spec finalizer removed, a namespace still waits for the garbage collector to
    remove `orphan` (then an update without finalizers deletes it, `ShouldDeleteNamespaceDuringUpdate`)."""
    assert http.post(NS, json={"metadata": {"name": "team"}}).status_code == 201
    assert http.delete(f"{NS}/team", params={"propagationPolicy": "Orphan"}).status_code == 200
    held = http.get(f"{NS}/team").json()
    assert (held["spec"]["finalizers"], held["metadata"]["finalizers"]) == ([], ["orphan"])
    done = http.patch(
        f"{NS}/team",
        json={"metadata": {"finalizers": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert done.status_code == 200, done.text
    assert http.get(f"{NS}/team").status_code == 404
