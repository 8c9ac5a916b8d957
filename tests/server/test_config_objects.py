"""ConfigMaps and Secrets over the REST API: stringData, defaulting, validation with Kubernetes' messages,
immutability, tables, discovery and namespace deletion."""

from __future__ import annotations

import base64

import httpx

from kjobs.server.tables import config_map_cells, secret_cells, to_table

CMS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
MERGE = {"Content-Type": "application/merge-patch+json"}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def causes(response: httpx.Response) -> list[tuple[str, str, str]]:
    details = response.json()["details"]
    return [(c["reason"], c["field"], c["message"]) for c in details["causes"]]


def test_a_config_map_is_created_read_listed_and_deleted(http: httpx.Client) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}, "data": {"MODE": "fast"}}
    created = http.post(CMS, json=cm)
    assert created.status_code == 201, created.text
    assert created.json()["data"] == {"MODE": "fast"}
    assert "status" not in created.json()
    assert http.get(f"{CMS}/app").json()["data"] == {"MODE": "fast"}
    assert [i["metadata"]["name"] for i in http.get(CMS).json()["items"]] == ["app"]
    patched = http.patch(f"{CMS}/app", json={"data": {"MODE": "slow"}}, headers=MERGE)
    assert patched.json()["data"] == {"MODE": "slow"}
    assert http.delete(f"{CMS}/app").status_code == 200
    assert http.get(f"{CMS}/app").status_code == 404
    entry = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}["configmaps"]
    assert (entry["kind"], entry["shortNames"], entry["namespaced"]) == ("ConfigMap", ["cm"], True)
    assert "secrets" in {r["name"] for r in http.get("/api/v1").json()["resources"]}


def test_secret_string_data_is_merged_into_data_and_type_defaults_to_opaque(http: httpx.Client) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds"},
        "data": {"user": b64("old"), "keep": b64("k")},
        "stringData": {"user": "admin", "token": "s3cr3t"},
    }
    created = http.post(SECRETS, json=secret)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["type"] == "Opaque"
    assert "stringData" not in body
    assert body["data"] == {"user": b64("admin"), "keep": b64("k"), "token": b64("s3cr3t")}
    updated = http.patch(f"{SECRETS}/creds", json={"stringData": {"token": "new"}}, headers=MERGE)
    assert updated.json()["data"]["token"] == b64("new")
    assert "stringData" not in http.get(f"{SECRETS}/creds").json()


def test_secret_data_that_is_not_base64_is_a_bad_request(http: httpx.Client) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}, "data": {"k": "no!"}}
    response = http.post(SECRETS, json=secret)
    assert response.status_code == 400
    assert response.json()["message"] == (
        'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 2'
    )


def test_secret_string_data_that_is_not_a_string_is_a_bad_request_not_dropped(http: httpx.Client) -> None:
    # kubectl's YAML reads `on: yes` as {"on": true}: the apiserver's decoder refuses it (400), where dropping the
    # key would create a Secret without it.
    for string_data, found, go_type in (({"on": True}, "bool", "string"), ("x", "string", "map[string]string")):
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "typed"}, "stringData": string_data}
        response = http.post(SECRETS, json=secret)
        assert response.status_code == 400, response.text
        assert response.json()["message"] == (
            'Secret in version "v1" cannot be handled as a Secret: '
            f"json: cannot unmarshal {found} into Go struct field Secret.stringData of type {go_type}"
        )
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "typed"}, "data": {"n": 3}}
    assert (
        http.post(SECRETS, json=secret)
        .json()["message"]
        .endswith("json: cannot unmarshal number into Go struct field Secret.data of type []uint8")
    )
    assert http.get(f"{SECRETS}/typed").status_code == 404


def test_config_map_keys_are_validated_as_kubernetes_does(http: httpx.Client) -> None:
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "bad"},
        "data": {"a b": "1", "..x": "2", "both": "3"},
        "binaryData": {"both": b64("4")},
    }
    response = http.post(CMS, json=cm)
    assert response.status_code == 422
    assert causes(response) == [
        (
            "FieldValueInvalid",
            "data[..x]",
            "Invalid value: \"..x\": must not start with '..'",
        ),
        (
            "FieldValueInvalid",
            "data[a b]",
            "Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
            "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
        ),
        ("FieldValueInvalid", "data[both]", 'Invalid value: "both": duplicate of key present in binaryData'),
    ]


def test_the_total_size_is_at_most_one_mebibyte(http: httpx.Client) -> None:
    big = "x" * (1024 * 1024)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": big, "b": "y"}}
    response = http.post(CMS, json=cm)
    assert response.status_code == 422
    assert causes(response) == [("FieldValueTooLong", "", "Too long: may not be more than 1048576 bytes")]
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "big"}, "stringData": {"a": big + "z"}}
    response = http.post(SECRETS, json=secret)
    assert causes(response) == [("FieldValueTooLong", "data", "Too long: may not be more than 1048576 bytes")]
    assert http.post(CMS, json={**cm, "data": {"a": big}}).status_code == 201


def test_built_in_secret_types_require_their_keys(http: httpx.Client) -> None:
    def create(name: str, kind: str, **fields: object) -> httpx.Response:
        return http.post(SECRETS, json={"metadata": {"name": name}, "type": kind, **fields})

    assert causes(create("tls", "kubernetes.io/tls", data={"tls.crt": b64("c")})) == [
        ("FieldValueRequired", "data[tls.key]", "Required value")
    ]
    assert causes(create("basic", "kubernetes.io/basic-auth")) == [
        ("FieldValueRequired", "data[username]", "Required value"),
        ("FieldValueRequired", "data[password]", "Required value"),
    ]
    assert create("basic2", "kubernetes.io/basic-auth", stringData={"password": ""}).status_code == 201
    assert causes(create("ssh", "kubernetes.io/ssh-auth")) == [
        ("FieldValueRequired", "data[ssh-privatekey]", "Required value")
    ]
    assert causes(create("sa", "kubernetes.io/service-account-token")) == [
        ("FieldValueRequired", "metadata.annotations[kubernetes.io/service-account.name]", "Required value")
    ]
    assert causes(create("dcj", "kubernetes.io/dockerconfigjson", stringData={".dockerconfigjson": "[1]"})) == [
        (
            "FieldValueInvalid",
            "data[.dockerconfigjson]",
            'Invalid value: "<secret contents redacted>": '
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        )
    ]
    assert causes(create("dc", "kubernetes.io/dockercfg")) == [
        ("FieldValueRequired", "data[.dockercfg]", "Required value")
    ]
    assert create("dc2", "kubernetes.io/dockercfg", stringData={".dockercfg": "{}"}).status_code == 201


def test_secret_type_is_immutable(http: httpx.Client) -> None:
    assert http.post(SECRETS, json={"metadata": {"name": "s"}, "stringData": {"a": "1"}}).status_code == 201
    response = http.patch(f"{SECRETS}/s", json={"type": "kubernetes.io/tls"}, headers=MERGE)
    assert response.status_code == 422
    assert ("FieldValueInvalid", "type", 'Invalid value: "kubernetes.io/tls": field is immutable') in causes(response)


def test_immutable_forbids_changing_the_contents_and_unsetting_it(http: httpx.Client) -> None:
    cm = {"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": True}
    assert http.post(CMS, json=cm).status_code == 201
    response = http.patch(f"{CMS}/frozen", json={"data": {"a": "2"}, "immutable": False}, headers=MERGE)
    assert response.status_code == 422
    assert causes(response) == [
        ("FieldValueForbidden", "immutable", "Forbidden: field is immutable when `immutable` is set"),
        ("FieldValueForbidden", "data", "Forbidden: field is immutable when `immutable` is set"),
    ]
    assert response.json()["message"].startswith('ConfigMap "frozen" is invalid: [immutable: Forbidden: ')
    labelled = http.patch(f"{CMS}/frozen", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert labelled.status_code == 200
    secret = {"metadata": {"name": "frozen"}, "stringData": {"a": "1"}, "immutable": True}
    assert http.post(SECRETS, json=secret).status_code == 201
    response = http.patch(f"{SECRETS}/frozen", json={"stringData": {"a": "2"}}, headers=MERGE)
    assert causes(response) == [
        ("FieldValueForbidden", "data", "Forbidden: field is immutable when `immutable` is set")
    ]


def test_deleting_a_namespace_deletes_its_config_maps_and_secrets(http: httpx.Client) -> None:
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": "team"}}).status_code == 201
    assert http.post("/api/v1/namespaces/team/configmaps", json={"metadata": {"name": "c"}}).status_code == 201
    assert http.post("/api/v1/namespaces/team/secrets", json={"metadata": {"name": "s"}}).status_code == 201
    assert http.delete("/api/v1/namespaces/team").status_code == 200
    assert http.get("/api/v1/namespaces/team/configmaps/c").status_code == 404
    assert http.get("/api/v1/namespaces/team/secrets/s").status_code == 404


def test_the_tables_print_as_kubectl_shows_them() -> None:
    cm = {"metadata": {"name": "app", "creationTimestamp": "2026-01-01T00:00:00Z"}, "data": {"a": "1"}}
    assert config_map_cells({**cm, "binaryData": {"b": "AA=="}}, now=1767225661.0) == ["app", 2, "61s"]
    secret = {"metadata": {"name": "s", "creationTimestamp": "2026-01-01T00:00:00Z"}, "type": "Opaque", "data": {}}
    assert secret_cells(secret, now=1767225661.0) == ["s", "Opaque", 0, "61s"]
    columns = [c["name"] for c in to_table([], kind="Secret", api_version="v1", now=0)["columnDefinitions"]]
    assert columns == ["Name", "Type", "Data", "Age"]
    columns = [c["name"] for c in to_table([], kind="ConfigMap", api_version="v1", now=0)["columnDefinitions"]]
    assert columns == ["Name", "Data", "Age"]
