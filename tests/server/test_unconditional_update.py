"""A PUT without `metadata.resourceVersion`: kube-apiserver updates the stored version for kinds whose strategy's
`AllowUnconditionalUpdate` is true (ConfigMap, Secret, Pod, Namespace, Node, Event, Job, CronJob, PriorityClass),
and answers 422 "must be specified for an update" for those where it is false (Lease, PodDisruptionBudget):
staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go `Update`, and each kind's strategy.go under
pkg/registry. test/e2e/apimachinery/watch.go's "should receive events on concurrent watches in same order" updates
ConfigMaps so."""

from __future__ import annotations

import httpx

CMS = "/api/v1/namespaces/default/configmaps"


def test_a_config_map_put_without_resource_version_updates_the_stored_one(http: httpx.Client) -> None:
    created = http.post(CMS, json={"metadata": {"name": "cm"}, "data": {"a": "1"}}).json()
    http.patch(f"{CMS}/cm", json={"data": {"a": "2"}}, headers={"Content-Type": "application/merge-patch+json"})
    updated = http.put(f"{CMS}/cm", json={"metadata": {"name": "cm"}, "data": {"b": "3"}})
    assert updated.status_code == 200, updated.text
    body = updated.json()
    assert body["data"] == {"b": "3"}
    assert body["metadata"]["uid"] == created["metadata"]["uid"]
    assert int(body["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    stale = http.put(
        f"{CMS}/cm", json={"metadata": {"name": "cm", "resourceVersion": created["metadata"]["resourceVersion"]}}
    )
    assert stale.status_code == 409, stale.text  # a resourceVersion named is still a precondition


def test_a_namespace_put_without_resource_version_updates_it(http: httpx.Client) -> None:
    ns = http.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}).json()
    ns["metadata"].pop("resourceVersion")
    ns["metadata"]["labels"]["team"] = "a"
    answered = http.put("/api/v1/namespaces/team", json=ns)
    assert answered.status_code == 200, answered.text
    assert answered.json()["metadata"]["labels"]["team"] == "a"


def test_a_lease_and_a_pdb_still_need_one(http: httpx.Client) -> None:
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    assert http.post(leases, json={"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}}).status_code == 201
    answered = http.put(f"{leases}/l", json={"metadata": {"name": "l"}, "spec": {"holderIdentity": "b"}})
    assert answered.status_code == 422, answered.text
    assert "metadata.resourceVersion" in answered.json()["message"]
    assert "must be specified for an update" in answered.json()["message"]
    pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
    pdb = {"metadata": {"name": "p"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}}
    assert http.post(pdbs, json=pdb).status_code == 201
    assert http.put(f"{pdbs}/p", json=pdb).status_code == 422
