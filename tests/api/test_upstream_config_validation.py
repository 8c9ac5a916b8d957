"""Upstream's ConfigMap and Secret validation tables, through kjobs' validators and API.

pkg/apis/core/validation: `TestValidateConfigMap`, `TestValidateConfigMapUpdate`, `TestValidateSecret`,
`TestValidateDockerConfigSecret`, `TestValidateBasicAuthSecret`, `TestValidateSSHAuthSecret`,
`TestValidateTLSSecret` (docs/upstream-core-validation.md). A row's Go object is written as the JSON a client
sends (`[]byte` values base64); upstream asserts validity (the TLS rows the first error's type), and so do the
ports, with the API's 422 for a sample of rows.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kjobs.api.config_objects import (
    validate_config_map,
    validate_config_map_update,
    validate_secret,
)
from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import CONFIG_MAPS, NAMESPACES, SECRETS
from tests.api.upstream_validation_support import causes, run

MAX_SECRET_SIZE = 1024 * 1024  # core.MaxSecretSize
BAD_NAME = "NoUppercaseOrSpecialCharsLike=Equals"


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def config_map(name: str, namespace: str, data: dict[str, str] | None, binary: dict[str, bytes] | None) -> Obj:
    """`newConfigMap(name, namespace, data, binaryData)`."""
    cm: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
    if data is not None:
        cm["data"] = data
    if binary is not None:
        cm["binaryData"] = {key: b64(value) for key, value in binary.items()}
    return cm


CONFIG_MAP_ROWS: dict[str, tuple[Obj, bool]] = {
    "valid": (config_map("validname", "validns", {"key": "value"}, {"bin": b"value"}), True),
    "max key length": (config_map("validname", "validns", {"a" * 253: "value"}, None), True),
    "leading dot key": (config_map("validname", "validns", {".ab": "value"}, None), True),
    "empty name": (config_map("", "validns", None, None), False),
    "invalid name": (config_map(BAD_NAME, "validns", None, None), False),
    "invalid key": (config_map("validname", "validns", {"a*b": "value"}, None), False),
    "empty namespace": (config_map("validname", "", None, None), False),
    "invalid namespace": (config_map("validname", BAD_NAME, None, None), False),
    "dot key": (config_map("validname", "validns", {".": "value"}, None), False),
    "double dot key": (config_map("validname", "validns", {"..": "value"}, None), False),
    "over max key length": (config_map("validname", "validns", {"a" * 254: "value"}, None), False),
    "over max size": (config_map("validname", "validns", {"key": "a" * (MAX_SECRET_SIZE + 1)}, None), False),
    "duplicated key": (config_map("validname", "validns", {"key": "value1"}, {"key": b"value2"}), False),
    "binary data invalid key": (config_map("validname", "validns", None, {"a*b": b"value"}), False),
    "binary data leading dot key": (config_map("validname", "validns", None, {".ab": b"value"}), True),
    "binary data dot key": (config_map("validname", "validns", None, {".": b"value"}), False),
    "binary data double dot key": (config_map("validname", "validns", None, {"..": b"value"}), False),
    "binary data over max key length": (config_map("validname", "validns", None, {"a" * 254: b"value"}), False),
    "binary data max size": (
        config_map("validname", "validns", None, {"bin": b"a" * (MAX_SECRET_SIZE + 1)}),
        False,
    ),
    "binary data non utf-8 bytes": (config_map("validname", "validns", None, {"key": bytes([0, 0xFE, 0, 0xFF])}), True),
}


@pytest.mark.parametrize(("cm", "valid"), list(CONFIG_MAP_ROWS.values()), ids=list(CONFIG_MAP_ROWS))
def test_validate_config_map(cm: Obj, valid: bool) -> None:
    assert (validate_config_map(cm) == []) is valid


def test_validate_config_map_update() -> None:
    """Rows "valid" (the same ConfigMap at resourceVersion 1) and "invalid" (the new one names no
    resourceVersion)."""
    old = config_map("validname", "validns", {"key": "value"}, None)
    old["metadata"]["resourceVersion"] = "1"
    assert validate_config_map_update(old, old) == []
    no_version = config_map("validname", "validns", {"key": "value"}, None)
    assert validate_config_map_update(no_version, old) != []


def test_config_map_rows_through_the_api() -> None:
    """What a client sees for three of the rows: a duplicated key, a dot key and an over-size ConfigMap are 422
    with kube-apiserver's causes; a binary value that is not UTF-8 is stored as sent."""

    async def scenario(client: Any) -> None:
        await client.create(NAMESPACES, None, {"metadata": {"name": "validns"}})
        for row, expected in (
            (
                "duplicated key",
                [("data[key]", "FieldValueInvalid", 'Invalid value: "key": duplicate of key present in binaryData')],
            ),
            (
                "dot key",
                [("data[.]", "FieldValueInvalid", "Invalid value: \".\": must not be '.'")],
            ),
            ("over max size", [("", "FieldValueTooLong", "Too long: may not be more than 1048576 bytes")]),
        ):
            with pytest.raises(ApiError) as info:
                await client.create(CONFIG_MAPS, "validns", CONFIG_MAP_ROWS[row][0])
            assert causes(info.value) == expected, row
        stored = await client.create(CONFIG_MAPS, "validns", CONFIG_MAP_ROWS["binary data non utf-8 bytes"][0])
        assert base64.b64decode(stored["binaryData"]["key"]) == bytes([0, 0xFE, 0, 0xFF])

    run(scenario)


def secret(
    data: dict[str, bytes] | None = None,
    *,
    name: str = "foo",
    namespace: str = "bar",
    kind: str | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if annotations is not None:
        meta["annotations"] = annotations
    s: Obj = {"apiVersion": "v1", "kind": "Secret", "metadata": meta}
    if kind is not None:
        s["type"] = kind
    if data is not None:
        s["data"] = {key: b64(value) for key, value in data.items()}
    return s


VALID_DATA = {"data-1": b"bar"}
SA = "kubernetes.io/service-account-token"
SA_NAME = "kubernetes.io/service-account.name"

SECRET_ROWS: dict[str, tuple[Obj, bool]] = {
    "valid": (secret(VALID_DATA), True),
    "empty name": (secret(VALID_DATA, name=""), False),
    "invalid name": (secret(VALID_DATA, name=BAD_NAME), False),
    "empty namespace": (secret(VALID_DATA, namespace=""), False),
    "invalid namespace": (secret(VALID_DATA, namespace=BAD_NAME), False),
    "over max size": (secret({"over": bytes(MAX_SECRET_SIZE + 1)}), False),
    "invalid key": (secret({**VALID_DATA, "a*b": b"whoops"}), False),
    "valid service-account-token secret": (secret(VALID_DATA, kind=SA, annotations={SA_NAME: "foo"}), True),
    "empty service-account-token annotation": (secret(VALID_DATA, kind=SA, annotations={SA_NAME: ""}), False),
    "missing service-account-token annotation": (secret(VALID_DATA, kind=SA, annotations={}), False),
    "missing service-account-token annotations": (secret(VALID_DATA, kind=SA), False),
    "leading dot key": (secret({**VALID_DATA, ".key": b"bar"}), True),
    "dot key": (secret({**VALID_DATA, ".": b"bar"}), False),
    "double dot key": (secret({**VALID_DATA, "..": b"bar"}), False),
}


@pytest.mark.parametrize(("s", "valid"), list(SECRET_ROWS.values()), ids=list(SECRET_ROWS))
def test_validate_secret(s: Obj, valid: bool) -> None:
    assert (validate_secret(s) == []) is valid


DOCKERCFG = b'{"https://index.docker.io/v1/": {"auth": "Y2x1ZWRyb29sZXIwMDAxOnBhc3N3b3Jk","email": "fake@example.com"}}'
CONFIG_JSON = b'{"auths":' + DOCKERCFG + b"}"
DOCKER_ROWS: dict[str, tuple[Obj, bool]] = {
    "valid dockercfg": (secret({".dockercfg": DOCKERCFG}, kind="kubernetes.io/dockercfg"), True),
    "missing dockercfg": (secret({}, kind="kubernetes.io/dockercfg"), False),
    "empty dockercfg": (secret({".dockercfg": b""}, kind="kubernetes.io/dockercfg"), False),
    "invalid dockercfg": (secret({".dockercfg": b"bad"}, kind="kubernetes.io/dockercfg"), False),
    "valid config.json": (secret({".dockerconfigjson": CONFIG_JSON}, kind="kubernetes.io/dockerconfigjson"), True),
    "missing config.json": (secret({}, kind="kubernetes.io/dockerconfigjson"), False),
    "empty config.json": (secret({".dockerconfigjson": b""}, kind="kubernetes.io/dockerconfigjson"), False),
    "invalid config.json": (secret({".dockerconfigjson": b"bad"}, kind="kubernetes.io/dockerconfigjson"), False),
}


@pytest.mark.parametrize(("s", "valid"), list(DOCKER_ROWS.values()), ids=list(DOCKER_ROWS))
def test_validate_docker_config_secret(s: Obj, valid: bool) -> None:
    assert (validate_secret(s) == []) is valid


BASIC_ROWS: dict[str, tuple[Obj, bool]] = {
    "valid": (secret({"username": b"username", "password": b"password"}, kind="kubernetes.io/basic-auth"), True),
    "missing username and password": (secret({}, kind="kubernetes.io/basic-auth"), False),
}


@pytest.mark.parametrize(("s", "valid"), list(BASIC_ROWS.values()), ids=list(BASIC_ROWS))
def test_validate_basic_auth_secret(s: Obj, valid: bool) -> None:
    assert (validate_secret(s) == []) is valid


SSH_ROWS: dict[str, tuple[Obj, bool]] = {
    "valid": (secret({"ssh-privatekey": b"foo-bar-baz"}, kind="kubernetes.io/ssh-auth"), True),
    "missing private key": (secret({}, kind="kubernetes.io/ssh-auth"), False),
}


@pytest.mark.parametrize(("s", "valid"), list(SSH_ROWS.values()), ids=list(SSH_ROWS))
def test_validate_ssh_auth_secret(s: Obj, valid: bool) -> None:
    assert (validate_secret(s) == []) is valid


def test_validate_tls_secret() -> None:
    """ "empty certificate chain" (no type: Opaque) is valid; the two error rows (no namespace, a certificate
    only) fail first with a Required error."""
    chain = secret({"tls.crt": b"public key", "tls.key": b"private key"}, name="tls-cert", namespace="namespace")
    assert validate_secret(chain) == []
    for row in ("missing public key", "missing private key"):
        errs = validate_secret(secret({"tls.crt": b"public key"}, name="tls-cert", namespace=""))
        assert errs and errs[0].type.value == "FieldValueRequired", row
    typed = secret({"tls.crt": b"public key"}, name="tls-cert", kind="kubernetes.io/tls")
    assert [(e.field, e.type.value) for e in validate_secret(typed)] == [("data[tls.key]", "FieldValueRequired")]


def test_secret_rows_through_the_api() -> None:
    """What a client sees for a few of the rows: a service-account token without its annotation, a dockercfg
    that is not JSON and a basic-auth Secret without keys are 422 with kube-apiserver's causes."""

    async def scenario(client: Any) -> None:
        await client.create(NAMESPACES, None, {"metadata": {"name": "bar"}})
        for body, expected in (
            (
                SECRET_ROWS["missing service-account-token annotations"][0],
                [(f"metadata.annotations[{SA_NAME}]", "FieldValueRequired", "Required value")],
            ),
            (
                DOCKER_ROWS["invalid dockercfg"][0],
                [
                    (
                        "data[.dockercfg]",
                        "FieldValueInvalid",
                        "Invalid value: \"<secret contents redacted>\": invalid character 'b' looking for "
                        "beginning of value",
                    )
                ],
            ),
            (
                BASIC_ROWS["missing username and password"][0],
                [
                    ("data[username]", "FieldValueRequired", "Required value"),
                    ("data[password]", "FieldValueRequired", "Required value"),
                ],
            ),
        ):
            with pytest.raises(ApiError) as info:
                await client.create(SECRETS, "bar", body)
            assert causes(info.value) == expected

    run(scenario)
