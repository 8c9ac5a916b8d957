"""ServiceAccount writes through the API: `ValidateServiceAccount(Update)`, the strategy's `cleanSecretReferences`
and its 1.32 warning (pkg/apis/core/validation/validation.go, pkg/registry/core/serviceaccount/strategy.go)."""

from __future__ import annotations

import asyncio

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.resources import SERVICE_ACCOUNTS
from kjobs.clock import FakeClock
from kjobs.server.registry import lookup
from tests.support import local_api


def _create(body: Obj) -> Obj:
    async def main() -> Obj:
        client = await local_api(FakeClock())
        return await client.create(SERVICE_ACCOUNTS, "default", body)

    return asyncio.run(main())


@pytest.mark.parametrize(
    ("meta", "cause"),
    [
        ({"name": "Not_Valid"}, "metadata.name"),
        ({"name": "a" * 254}, "metadata.name"),
        ({"generateName": "Bad_"}, "metadata.generateName,metadata.name"),
        ({}, "metadata.name"),
        ({"name": "ok", "labels": {"-bad": "x"}}, "metadata.labels"),
    ],
    ids=["uppercase", "too-long", "generate-name", "no-name", "label"],
)
def test_invalid_accounts_are_refused(meta: Obj, cause: str) -> None:
    with pytest.raises(ApiError) as caught:
        _create({"metadata": meta})
    assert caught.value.code == 422
    assert [c["field"] for c in (caught.value.details or {})["causes"]] == cause.split(",")


def test_a_dns_subdomain_name_with_dots_is_valid_and_secret_references_keep_their_names_only() -> None:
    created = _create(
        {
            "metadata": {"name": "ci.builder"},
            "secrets": [{"name": "token", "namespace": "elsewhere", "uid": "u", "kind": "Secret"}, {"uid": "x"}],
            "imagePullSecrets": [{"name": "pull"}],
            "automountServiceAccountToken": False,
        }
    )
    assert created["secrets"] == [{"name": "token"}, {}]
    assert created["imagePullSecrets"] == [{"name": "pull"}]
    assert created["automountServiceAccountToken"] is False


def test_an_update_keeps_secret_reference_names_only() -> None:
    async def main() -> None:
        client = await local_api(FakeClock())
        sa = await client.create(SERVICE_ACCOUNTS, "default", {"metadata": {"name": "builder"}})
        sa["secrets"] = [{"name": "s", "resourceVersion": "7"}]
        updated = await client.update(SERVICE_ACCOUNTS, "default", sa)
        assert updated["secrets"] == [{"name": "s"}]

    asyncio.run(main())


def test_the_enforce_mountable_secrets_annotation_warns() -> None:
    hook = lookup("", "v1", "serviceaccounts")
    assert hook is not None
    warn = hook.hook("warnings")
    annotated = {"metadata": {"name": "a", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}}
    assert warn(annotated, None) == [
        "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+; prefer separate "
        "namespaces to isolate access to mounted secrets"
    ]
    assert warn({"metadata": {"name": "a"}}, None) == []
