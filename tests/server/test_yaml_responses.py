"""Output serializations as an apiserver negotiates them: YAML for a client whose `Accept` asks for it first
(`curl -H 'Accept: application/yaml'`), 406 for a watch in YAML and for media types nothing serves."""

from __future__ import annotations

import httpx
import yaml

from tests.server.conftest import pod_manifest

PODS = "/api/v1/namespaces/default/pods"
SERVED = "application/json, application/yaml, application/vnd.kubernetes.protobuf"


def test_objects_lists_and_errors_come_back_as_yaml(http: httpx.Client) -> None:
    assert http.post(PODS, json=pod_manifest("y1")).status_code == 201
    as_json = http.get(f"{PODS}/y1").json()
    one = http.get(f"{PODS}/y1", headers={"Accept": "application/yaml"})
    assert one.status_code == 200 and one.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(one.text) == as_json
    assert one.text.startswith("apiVersion: v1\nkind: Pod\nmetadata:\n")  # keys sorted, block style

    listed = http.get(PODS, headers={"Accept": "application/yaml, application/json"})
    assert listed.headers["content-type"] == "application/yaml"
    assert [p["metadata"]["name"] for p in yaml.safe_load(listed.text)["items"]] == ["y1"]

    missing = http.get(f"{PODS}/nope", headers={"Accept": "application/yaml"})
    assert missing.status_code == 404 and missing.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(missing.text)["reason"] == "NotFound"


def test_the_first_served_range_by_quality_wins(http: httpx.Client) -> None:
    # goautoneg.ParseAccept orders the ranges by q before the apiserver takes the first it serves
    assert http.post(PODS, json=pod_manifest("y2")).status_code == 201
    for accept in (
        "application/json, application/yaml",
        "application/yaml;q=0.5, application/json",
        "application/yaml;q=0.5, */*;q=0.9",
    ):
        answer = http.get(f"{PODS}/y2", headers={"Accept": accept})
        assert answer.headers["content-type"] == "application/json", accept
    for accept in ("text/html, */*;q=0.8, application/yaml", "application/json;q=0.1, application/yaml"):
        answer = http.get(f"{PODS}/y2", headers={"Accept": accept})
        assert answer.headers["content-type"] == "application/yaml", accept


def test_a_yaml_watch_and_an_unserved_type_are_not_acceptable(http: httpx.Client) -> None:
    watch = http.get(f"{PODS}?watch=true", headers={"Accept": "application/yaml"})
    assert watch.status_code == 406 and watch.json()["reason"] == "NotAcceptable"
    assert "application/json;stream=watch" in watch.json()["message"]
    refused = http.get(PODS, headers={"Accept": "text/plain"})
    assert refused.status_code == 406
    assert refused.json()["message"] == f"only the following media types are accepted: {SERVED}"
