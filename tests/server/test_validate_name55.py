"""Stop 55: `ApiService._validate` reads the object's name before the validation hooks but makes it a string only
for an error, and `_create_checked` reads the created object's metadata once.

The replaced form of `_validate` (stop 54's) is kept here: on objects whose metadata is absent, null, not a map,
or a map whose name is absent, null, a string, a number or a list, with and without errors, created, updated
and status-written, both raise the same error (code, reason, message, details, field errors) or none, and leave
the object the same (a metadata that is no map is replaced by `{}` before the hooks read it, as before)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ApiError, FieldError, invalid
from kjobs.api.types import Obj
from kjobs.server import service as S
from kjobs.server.registry import Resource, core_hook, lookup
from kjobs.server.service import ApiService, _meta
from kjobs.server.storage import Storage
from kjobs.store.memory import MemoryStore
from tests.hypothesis_budget import examples


def _old_validate(self: ApiService, r: Resource, obj: Obj, old: Obj | None, subresource: str) -> None:
    """Stop 54's `_validate`, as it was."""
    if r.group == "rbac.authorization.k8s.io":
        S.check_escalation(self.rbac, r.kind, str(_meta(obj).get("namespace") or ""), obj, old)
    errors: list[FieldError] = []
    name = str(_meta(obj).get("name", ""))
    if subresource in ("status", "finalize", "ephemeralcontainers") and old is not None:
        hook_name = S._SUBRESOURCE_VALIDATION[subresource]
        hook = r.found.get(hook_name) or r.hook(hook_name)
        if hook is not None:
            errors = hook(obj, old)
    elif old is not None and (update := (r.found.get("validate_update") or r.hook("validate_update"))) is not None:
        errors = update(obj, old, features=self.features)
    else:
        validate = r.found.get("validate") or r.hook("validate")
        if validate is not None:
            errors = validate(obj, features=self.features)
        else:
            meta_hook = core_hook("kjobs.api.validation_meta", "validate_object_meta")
            if meta_hook is not None:
                errors = meta_hook(_meta(obj), namespaced=r.namespaced)
        if old is not None:
            update_hook = core_hook("kjobs.api.validation_meta", "validate_object_meta_update")
            if update_hook is not None:
                errors = errors + update_hook(_meta(obj), old.get("metadata") or {})
    if errors:
        raise invalid(r.kind, name, errors, group=r.group)


def _service() -> ApiService:
    return ApiService(Storage(MemoryStore()), clock=lambda: 1.7e9)


def _outcome(validate: Any, svc: ApiService, r: Resource, obj: Obj, old: Obj | None, sub: str) -> tuple[Any, Obj]:
    try:
        validate(svc, r, obj, old, sub)
    except ApiError as exc:
        fields = [(e.field, e.type, e.detail, repr(e.bad_value)) for e in exc.field_errors or ()]
        return (exc.code, exc.reason, exc.message, exc.details, fields), obj
    return None, obj


_POD: Obj = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "u", "resourceVersion": "5", "creationTimestamp": "t"},
    "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"},
    "status": {"phase": "Pending"},
}

_NAMES = st.one_of(
    st.just(_POD["metadata"]["name"]),
    st.sampled_from(["", "p", "Bad_Name", "x" * 300, "a.b", "-a"]),
    st.none(),
    st.integers(-3, 3),
    st.lists(st.sampled_from(["a", "b"]), max_size=2),
)
_ABSENT = object()


@st.composite
def _objects(draw: st.DrawFn) -> Obj:
    obj = copy.deepcopy(_POD)
    shape = draw(st.sampled_from(["map", "absent", "null", "list", "string"]))
    if shape == "absent":
        del obj["metadata"]
    elif shape != "map":
        obj["metadata"] = {"null": None, "list": [], "string": "m"}[shape]
    else:
        name = draw(st.one_of(st.just(_ABSENT), _NAMES))
        if name is _ABSENT:
            del obj["metadata"]["name"]
        else:
            obj["metadata"]["name"] = name
        if draw(st.booleans()):
            obj["metadata"]["labels"] = {"bad key!": "v"}
    if draw(st.booleans()):
        obj["spec"] = {"containers": []}  # an invalid spec: errors whatever the name
    return obj


_PODS = lookup("", "v1", "pods")
_NAMESPACES = lookup("", "v1", "namespaces")
_CONFIGMAPS = lookup("", "v1", "configmaps")


@settings(max_examples=examples(150), deadline=None)
@given(
    obj=_objects(),
    case=st.sampled_from(["create", "update", "status"]),
    resource=st.sampled_from(["pods", "namespaces", "configmaps"]),
)
def test_validate_as_before(obj: Obj, case: str, resource: str) -> None:
    r = {"pods": _PODS, "namespaces": _NAMESPACES, "configmaps": _CONFIGMAPS}[resource]
    assert r is not None
    svc = _service()
    old = copy.deepcopy(_POD) if case != "create" else None
    sub = "status" if case == "status" else ""
    mine = _outcome(ApiService._validate, svc, r, copy.deepcopy(obj), copy.deepcopy(old), sub)
    theirs = _outcome(_old_validate, svc, r, copy.deepcopy(obj), copy.deepcopy(old), sub)
    assert mine == theirs


def test_the_cases_that_matter() -> None:
    """A name that is no string is named in the error as the old `str` of it; a metadata that is no map is `{}`."""
    svc = _service()
    assert _PODS is not None
    for name in (5, ["a"], None, "Bad_Name"):
        obj = copy.deepcopy(_POD)
        obj["metadata"]["name"] = name
        obj["spec"] = {"containers": []}
        mine = _outcome(ApiService._validate, svc, _PODS, copy.deepcopy(obj), None, "")
        assert mine == _outcome(_old_validate, svc, _PODS, copy.deepcopy(obj), None, "")
        assert mine[0] is not None and mine[0][3]["name"] == str(name)
    obj = copy.deepcopy(_POD)
    obj["metadata"] = "m"
    mine = _outcome(ApiService._validate, svc, _PODS, obj, None, "")
    theirs = _outcome(_old_validate, svc, _PODS, copy.deepcopy(_POD) | {"metadata": "m"}, None, "")
    assert mine[1]["metadata"] == {} and mine == theirs


_REQUIRED = {
    "reason": "FieldValueRequired",
    "message": "Required value: name or generateName is required",
    "field": "metadata.name",
}


@pytest.mark.parametrize(
    "meta",
    [{}, {"generateName": ""}, {"name": ""}, {"name": None}, {"generateName": "g-"}, {"name": "n"}],
)
def test_create_name_check(meta: Obj) -> None:
    """`_create_checked` reads the metadata once: a pod without a name nor a generateName is refused as before."""
    svc = _service()

    async def main() -> Any:
        await svc.ensure_namespaces()
        body = copy.deepcopy(_POD)
        body["metadata"] = dict(meta)
        assert _PODS is not None
        try:
            result = await svc.create(_PODS, "default", body)
        except ApiError as exc:
            return exc.code, exc.reason, exc.message, exc.details
        return result.code, result.obj["metadata"]["name"].startswith(meta.get("generateName") or meta.get("name"))

    outcome = asyncio.run(main())
    if meta.get("name") or meta.get("generateName"):
        assert outcome == (201, True)
    else:
        assert outcome == (
            422,
            "Invalid",
            'Pod "" is invalid: metadata.name: Required value: name or generateName is required',
            {"name": "", "kind": "Pod", "causes": [_REQUIRED]},
        )
