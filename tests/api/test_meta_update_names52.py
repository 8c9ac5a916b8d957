"""Stop 52: on an update, `validate_object_meta` does not check again a name, `generateName` or namespace that is
the stored metadata's very string (it passed these rules when stored, as the collections shared with it did).
Stop 51's function is kept here; hypothesis makes stored metadata that passed validation and updates that keep its
strings, copy them (equal strings that are other objects), or replace them with valid, invalid, empty or
non-string values: the same errors, rendered, in the same order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import validation_meta as V
from kjobs.api.errors import FieldError
from kjobs.api.validation_access import get_int, type_error
from kjobs.api.validation_formats import (
    DNS1123_SUBDOMAIN_MAX,
    dns1123_subdomain_match,
    is_dns1123_label,
    name_is_dns_subdomain,
)
from tests.hypothesis_budget import examples

Invalid, Required, Forbidden = V.Invalid, V.Required, V.Forbidden


def old_validate_object_meta(
    meta: Any, *, namespaced: bool, path: str = "metadata", name_fn: Any = name_is_dns_subdomain, stored: Any = None
) -> list[FieldError]:
    """Stop 51's `validate_object_meta`."""
    errs: list[FieldError] = []
    if type(meta) is not dict:
        return [FieldError(path, Invalid, "must be of type object", meta)]
    generate_name = meta.get("generateName")
    if type(generate_name) is not str:
        if generate_name is not None:
            errs.append(type_error(f"{path}.generateName", generate_name, "string"))
        generate_name = ""
    subdomains = name_fn is name_is_dns_subdomain
    if generate_name:
        masked = generate_name[:-1] + "a" if len(generate_name) > 1 and generate_name[-1] == "-" else generate_name
        if not subdomains or len(masked) > DNS1123_SUBDOMAIN_MAX or dns1123_subdomain_match(masked) is None:
            for msg in name_fn(generate_name, True):
                errs.append(FieldError(f"{path}.generateName", Invalid, msg, generate_name))
    name = meta.get("name")
    if type(name) is not str:
        if name is not None:
            errs.append(type_error(f"{path}.name", name, "string"))
        name = ""
    if not name:
        errs.append(FieldError(f"{path}.name", Required, "name or generateName is required"))
    elif not subdomains or len(name) > DNS1123_SUBDOMAIN_MAX or dns1123_subdomain_match(name) is None:
        for msg in name_fn(name, False):
            errs.append(FieldError(f"{path}.name", Invalid, msg, name))
    namespace = meta.get("namespace")
    if type(namespace) is not str:
        if namespace is not None:
            errs.append(type_error(f"{path}.namespace", namespace, "string"))
        namespace = ""
    if namespaced:
        if not namespace:
            errs.append(FieldError(f"{path}.namespace", Required))
        else:
            for msg in is_dns1123_label(namespace):
                errs.append(FieldError(f"{path}.namespace", Invalid, msg, namespace))
    elif namespace:
        errs.append(FieldError(f"{path}.namespace", Forbidden, "not allowed on this type"))
    generation = meta.get("generation")
    if generation is not None and not (type(generation) is int and 0 <= generation <= V.INT64_MAX):
        generation = get_int(meta, "generation", f"{path}.generation", errs, bits=64)
        V.validate_nonnegative(generation, f"{path}.generation", errs)
    V._validate_meta_collections(meta, path, errs, stored)
    return errs


NAMES, PREFIXES, NAMESPACES = ["job-0-abc", "a.b", "x"], ["job-", "job-0-abc", "x"], ["default", "kube-system", "x"]
INVALID = ["Job_0", "", "a..b", "-x", "x" * 254, "ns.with.dots", "job-", 7, None]
ANY = st.sampled_from(NAMES + PREFIXES + NAMESPACES + INVALID)
KEYS = ("name", "generateName", "namespace")


def _fresh(value: Any) -> Any:
    """An equal string that is another object (a decode's own copy)."""
    return "".join(list(value)) if type(value) is str and len(value) > 1 else value


@settings(max_examples=examples(1500), deadline=None)
@given(
    st.fixed_dictionaries(
        {"name": st.sampled_from(NAMES), "namespace": st.sampled_from(NAMESPACES)},
        optional={"generateName": st.sampled_from(PREFIXES)},
    ),
    st.fixed_dictionaries({k: st.sampled_from(["keep", "copy", "other", "drop"]) for k in KEYS}),
    st.fixed_dictionaries({k: ANY for k in KEYS}),
    st.booleans(),
    st.sampled_from([True, False, None]),
)
def test_an_updates_names_are_checked_as_stop_51_checked_them(
    stored: dict[str, Any], hows: dict[str, str], others: dict[str, Any], namespaced: bool, with_stored: bool | None
) -> None:
    stored = {k: _fresh(v) for k, v in stored.items()}  # strings of their own, as a decode leaves them
    assert not old_validate_object_meta(stored, namespaced=True)  # as it was stored: valid
    meta = dict(stored)
    for key, how in hows.items():
        if how == "copy" and key in meta:
            meta[key] = _fresh(meta[key])
        elif how == "other":
            meta[key] = others[key]
        elif how == "drop":
            meta.pop(key, None)
    held = stored if with_stored else ({} if with_stored is False else None)
    new = V.validate_object_meta(meta, namespaced=namespaced, stored=held)
    old = old_validate_object_meta(meta, namespaced=namespaced, stored=held)
    assert [str(e) for e in new] == [str(e) for e in old]
    assert new == old
