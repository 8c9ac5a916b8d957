"""The RBAC authorizer over stored roles and bindings (`kjobs.server.rbac`): the cases of Kubernetes'
plugin/pkg/auth/authorizer/rbac/rbac_test.go (`TestAuthorizer`, `TestRuleMatches`), then what kjobs adds: the
index follows writes at once, and reads only the bindings of the asking user's subjects."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kjobs.api.rbac import GROUP
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import ROLE_BINDINGS
from kjobs.server.authz import Attributes, UserInfo
from kjobs.server.rbac import RbacAuthorizer, rule_allows
from kjobs.server.registry import lookup
from kjobs.server.service import ApiService
from kjobs.store import MemoryStore
from tests.server.rbac_support import bootstrapped_service


def _rule(verbs: str, groups: str, resources: str, urls: str) -> Obj:
    """rbac_test.go `newRule`: comma-separated lists, an empty string a list of one empty string."""
    return {
        "verbs": verbs.split(","),
        "apiGroups": groups.split(","),
        "resources": resources.split(","),
        "nonResourceURLs": urls.split(","),
    }


def _subjects(*subjects: str) -> list[Obj]:
    out = []
    for subject in subjects:
        kind, _, name = subject.partition(":")
        out.append({"kind": kind, "name": name, **({"apiGroup": GROUP} if kind != "ServiceAccount" else {})})
    return out


async def _write(service: ApiService, plural: str, namespace: str, obj: Obj) -> None:
    r = lookup(GROUP, "v1", plural)
    assert r is not None
    if namespace:
        obj["metadata"]["namespace"] = namespace
    await service.create(r, namespace, obj, field_validation="Ignore")


def _authorizer(objects: list[tuple[str, str, Obj]]) -> RbacAuthorizer:
    """An authorizer over a store holding `objects` ((plural, namespace, object)) and nothing else RBAC, written
    straight into the store as upstream's test listers hold them (`newRule`'s rules would not validate)."""
    store = MemoryStore()
    for plural, namespace, obj in objects:
        obj["metadata"]["namespace"] = namespace
        store.create(f"{plural}.{GROUP}", namespace, obj["metadata"]["name"], obj)
    return RbacAuthorizer(store)


def _cluster_role(name: str, *rules: Obj) -> tuple[str, str, Obj]:
    # `newRule`'s empty strings are kept as upstream builds them; the store takes them without validation here
    return ("clusterroles", "", {"metadata": {"name": name}, "rules": list(rules)})


def _binding(plural: str, namespace: str, name: str, kind: str, role: str, *subjects: str) -> tuple[str, str, Obj]:
    ref = {"apiGroup": GROUP, "kind": kind, "name": role}
    return (plural, namespace, {"metadata": {"name": name}, "roleRef": ref, "subjects": _subjects(*subjects)})


def _user(name: str, groups: str = "") -> UserInfo:
    return UserInfo(name, tuple(g for g in groups.split(",") if g))


def _res(verb: str, resource: str, subresource: str, namespace: str, group: str = "") -> Attributes:
    return Attributes(verb, resource, group=group, subresource=subresource, namespace=namespace)


def _url(verb: str, path: str) -> Attributes:
    return Attributes(verb, path=path, is_resource=False)


# TestAuthorizer's cases: objects, then (user, attributes) that pass and that fail
AUTHORIZER_CASES: dict[str, tuple[list[tuple[str, str, Obj]], list[Any], list[Any]]] = {
    "case 0": (
        [
            _cluster_role("admin", _rule("*", "*", "*", "*")),
            _binding("rolebindings", "ns1", "b", "ClusterRole", "admin", "User:admin", "Group:admins"),
        ],
        [
            (_user("admin"), _res("get", "Pods", "", "ns1")),
            (_user("admin"), _res("watch", "Pods", "", "ns1")),
            (_user("admin", "group1"), _res("watch", "Foobar", "", "ns1")),
            (_user("joe", "admins"), _res("watch", "Foobar", "", "ns1")),
            (_user("joe", "group1,admins"), _res("watch", "Foobar", "", "ns1")),
        ],
        [
            (_user("admin"), _res("GET", "Pods", "", "ns2")),
            (_user("admin"), _res("GET", "Nodes", "", "")),
            (_user("admin", "admins"), _res("GET", "Pods", "", "ns2")),
            (_user("admin", "admins"), _res("GET", "Nodes", "", "")),
        ],
    ),
    "case 1 (non-resource URLs)": (
        [
            _cluster_role("non-resource-url-getter", _rule("get", "", "", "/apis")),
            _cluster_role("non-resource-url", _rule("*", "", "", "/apis")),
            _cluster_role("non-resource-url-prefix", _rule("get", "", "", "/apis/*")),
            _binding("clusterrolebindings", "", "a", "ClusterRole", "non-resource-url-getter", "User:foo", "Group:bar"),
            _binding("clusterrolebindings", "", "b", "ClusterRole", "non-resource-url", "User:admin", "Group:admin"),
            _binding(
                "clusterrolebindings",
                "",
                "c",
                "ClusterRole",
                "non-resource-url-prefix",
                "User:prefixed",
                "Group:prefixed",
            ),
        ],
        [
            (_user("foo"), _url("get", "/apis")),
            (_user("", "bar"), _url("get", "/apis")),
            (_user("admin"), _url("get", "/apis")),
            (_user("", "admin"), _url("get", "/apis")),
            (_user("admin"), _url("watch", "/apis")),
            (_user("", "admin"), _url("watch", "/apis")),
            (_user("prefixed"), _url("get", "/apis/v1")),
            (_user("", "prefixed"), _url("get", "/apis/v1")),
            (_user("prefixed"), _url("get", "/apis/v1/foobar")),
            (_user("", "prefixed"), _url("get", "/apis/v1/foorbar")),
        ],
        [
            (_user("foo"), _url("watch", "/apis")),
            (_user("", "bar"), _url("watch", "/apis")),
            (_user("foo"), _url("get", "/api/v1")),
            (_user("", "bar"), _url("get", "/api/v1")),
            (_user("admin"), _url("get", "/api/v1")),
            (_user("", "admin"), _url("get", "/api/v1")),
            (_user("prefixed"), _url("get", "/api/v1")),
            (_user("", "prefixed"), _url("get", "/api/v1")),
        ],
    ),
    "case 2 (subresource resolution)": (
        [
            _cluster_role("admin", _rule("*", "*", "pods", "*")),
            _binding("rolebindings", "ns1", "b", "ClusterRole", "admin", "User:admin", "Group:admins"),
        ],
        [(_user("admin"), _res("get", "pods", "", "ns1"))],
        [(_user("admin"), _res("get", "pods", "status", "ns1"))],
    ),
    "case 3 (subresource resolution)": (
        [
            _cluster_role("admin", _rule("*", "*", "pods/status", "*")),
            _binding("rolebindings", "ns1", "b", "ClusterRole", "admin", "User:admin", "Group:admins"),
        ],
        [(_user("admin"), _res("get", "pods", "status", "ns1"))],
        [(_user("admin"), _res("get", "pods", "", "ns1"))],
    ),
}


@pytest.mark.parametrize(("objects", "passing", "failing"), AUTHORIZER_CASES.values(), ids=AUTHORIZER_CASES)
def test_authorizer(objects: list[tuple[str, str, Obj]], passing: list[Any], failing: list[Any]) -> None:
    rbac = _authorizer(objects)
    for user, attrs in passing:
        assert rbac.allowed(user, attrs), f"incorrectly restricted {user} {attrs}"
    for user, attrs in failing:
        assert not rbac.allowed(user, attrs), f"incorrectly passed {user} {attrs}"


def _rule_of(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None) -> Obj:
    return {"verbs": verbs, "apiGroups": groups or [], "resources": resources or []}


def _requests(subresource: str = "") -> list[tuple[str, str, str]]:
    return [(v, g, r) for v in ("verb1", "verb2") for g in ("group1", "group2") for r in ("resource1", "resource2")]


# TestRuleMatches: rule, then {(verb, group, resource[, subresource]) or (verb, url): expected}
RULE_MATCHES: dict[str, tuple[Obj, dict[tuple[str, ...], bool]]] = {
    "star verb, exact match other": (
        _rule_of(["*"], ["group1"], ["resource1"]),
        {k: k[1:] == ("group1", "resource1") for k in _requests()},
    ),
    "star group, exact match other": (
        _rule_of(["verb1"], ["*"], ["resource1"]),
        {k: k[0] == "verb1" and k[2] == "resource1" for k in _requests()},
    ),
    "star resource, exact match other": (
        _rule_of(["verb1"], ["group1"], ["*"]),
        {k: k[0] == "verb1" and k[1] == "group1" for k in _requests()},
    ),
    "tuple expansion": (
        _rule_of(["verb1", "verb2"], ["group1", "group2"], ["resource1", "resource2"]),
        dict.fromkeys(_requests(), True),
    ),
    "subresource expansion": (
        _rule_of(["*"], ["*"], ["resource1/subresource1"]),
        {
            ("verb1", "group1", "resource1", "subresource1"): True,
            ("verb1", "group2", "resource1", "subresource2"): False,
            ("verb1", "group1", "resource2", "subresource1"): False,
            ("verb1", "group2", "resource2", "subresource1"): False,
            ("verb2", "group1", "resource1", "subresource1"): True,
            ("verb2", "group2", "resource1", "subresource2"): False,
            ("verb2", "group1", "resource2", "subresource1"): False,
            ("verb2", "group2", "resource2", "subresource1"): False,
        },
    ),
    "star nonresource, exact match other": (
        {"verbs": ["verb1"], "nonResourceURLs": ["*"]},
        {
            (v, u): v == "verb1"
            for v in ("verb1", "verb2")
            for u in ("/foo", "/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one")
        },
    ),
    "star nonresource subpath": (
        {"verbs": ["verb1"], "nonResourceURLs": ["/foo/*"]},
        {("verb1", "/foo"): False, ("verb1", "/foo/bar"): True, ("verb1", "/foo/baz"): True},
    ),
}


@pytest.mark.parametrize(("rule", "expected"), RULE_MATCHES.values(), ids=RULE_MATCHES)
def test_rule_matches(rule: Obj, expected: dict[tuple[str, ...], bool]) -> None:
    for request, want in expected.items():
        if len(request) == 2:
            attrs = _url(*request)
        else:
            verb, group, resource, *sub = request
            attrs = Attributes(verb, resource, group=group, subresource=sub[0] if sub else "")
        assert rule_allows(attrs, rule) is want, request


def test_star_slash_subresource_and_resource_names() -> None:
    logs = {"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"], "resourceNames": ["p1"]}
    assert rule_allows(Attributes("get", "pods", subresource="log", name="p1"), logs)
    assert not rule_allows(Attributes("get", "pods", subresource="log", name="p2"), logs)
    assert not rule_allows(Attributes("get", "pods", name="p1"), logs)


def test_a_binding_takes_effect_and_ends_with_its_writes_and_a_missing_role_is_the_reason() -> None:
    async def main() -> None:
        service = await bootstrapped_service()
        jane = UserInfo("jane", ("system:authenticated",))
        list_pods = Attributes("list", "pods", namespace="default")
        assert service.rbac.authorize(jane, list_pods) == (False, "")
        await _write(
            service, "rolebindings", "default", _binding("rolebindings", "", "v", "Role", "reader", "User:jane")[2]
        )
        assert service.rbac.authorize(jane, list_pods) == (False, f'RBAC: role.{GROUP} "reader" not found')
        role = {"metadata": {"name": "reader"}, "rules": [_rule_of(["list"], [""], ["pods"])]}
        await _write(service, "roles", "default", role)
        assert service.rbac.authorize(jane, list_pods) == (
            True,
            'RBAC: allowed by RoleBinding "v/default" of Role "reader" to User "jane"',
        )
        assert not service.rbac.allowed(jane, Attributes("list", "pods", namespace="kube-system"))
        await LocalClient(service).delete(ROLE_BINDINGS, "default", "v")
        assert service.rbac.authorize(jane, list_pods) == (False, "")

    asyncio.run(main())


def test_service_account_subjects_default_to_the_binding_namespace() -> None:
    rbac = _authorizer(
        [
            _cluster_role("reader", _rule_of(["get"], [""], ["pods"])),
            _binding("rolebindings", "ns1", "local", "ClusterRole", "reader", "ServiceAccount:runner"),
        ]
    )
    runner = UserInfo("system:serviceaccount:ns1:runner", ("system:serviceaccounts",))
    assert rbac.allowed(runner, Attributes("get", "pods", namespace="ns1"))
    assert not rbac.allowed(runner, Attributes("get", "pods", namespace="ns2"))
    other = UserInfo("system:serviceaccount:ns2:runner", ())
    assert not rbac.allowed(other, Attributes("get", "pods", namespace="ns1"))


def test_authorization_reads_only_the_bindings_of_the_users_subjects() -> None:
    objects = [_cluster_role("reader", _rule_of(["get"], [""], ["pods"]))]
    objects += [_binding("rolebindings", "ns1", f"b{i}", "ClusterRole", "reader", f"User:u{i}") for i in range(200)]
    rbac = _authorizer(objects)
    assert rbac.allowed(_user("u7"), Attributes("get", "pods", namespace="ns1"))
    visited = list(rbac._bindings_of(_user("u7", "devs"), "ns1"))
    assert [b.name for b in visited] == ["b7"]
