"""Stop 53: a `Resource` answers `hook`, `store_key` and `api_version` from what it found or computed before.

The oracles are stop 52's forms, kept here: `hook` asked `core_hook` every time (a found hook is kept by
`core_hook` for good, so the same object must come back), `store_key` and `api_version` were properties computed at
each read. Every served resource, built-in and custom, every hook name any resource declares and some none does,
asked twice in every order: the same answers."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from kjobs.server import registry
from kjobs.server.customresources import CustomResource
from kjobs.server.registry import RESOURCES, Resource, core_hook


def hook52(r: Resource, name: str) -> Any:
    """Stop 52's `Resource.hook`."""
    target = r.hooks.get(name)
    return core_hook(*target) if target else None


def store_key52(r: Resource) -> str:
    return f"{r.plural}.{r.group}" if r.group else r.plural


def api_version52(r: Resource) -> str:
    return f"{r.group}/{r.version}" if r.group else r.version


NAMES = sorted({name for r in RESOURCES for name in r.hooks} | {"warnings", "default_finalize", "nothing_here"})


@pytest.mark.parametrize("r", RESOURCES, ids=lambda r: f"{r.group}/{r.plural}")
def test_hooksfound_as_core_hook_finds_them(r: Resource) -> None:
    fresh = dataclasses.replace(r)  # nothing found yet
    for name in [*NAMES, *reversed(NAMES)]:
        assert fresh.hook(name) is hook52(r, name), name
    for first, second in itertools.permutations(NAMES[:6], 2):
        again = dataclasses.replace(r)
        assert (again.hook(first), again.hook(second)) == (hook52(r, first), hook52(r, second))


@pytest.mark.parametrize("r", RESOURCES, ids=lambda r: f"{r.group}/{r.plural}")
def test_store_key_and_api_version_as_computed(r: Resource) -> None:
    fresh = dataclasses.replace(r)
    for _ in range(2):
        assert fresh.store_key == store_key52(r)
        assert fresh.api_version == api_version52(r)
    assert fresh == r  # the cached answers are no part of a resource's identity


def test_custom_resource_keys() -> None:
    cr = CustomResource("example.com", "v1", "widgets", "widget", "Widget", True, crd_name="widgets.example.com")
    assert (cr.store_key, cr.api_version) == ("widgets.example.com", "example.com/v1")
    assert (cr.store_key, cr.api_version) == (store_key52(cr), api_version52(cr))


def test_hooks_missing_are_asked_again() -> None:
    """A name with no hook is not remembered as missing: `core_hook` is asked again, as before."""
    r = Resource("", "v1", "things", "thing", "Thing", True, hooks={"default": ("kjobs.api.defaults", "nope53")})
    assert r.hook("default") is None
    import kjobs.api.defaults as defaults

    def made(obj: Any) -> Any:
        return obj

    defaults.nope53 = made  # type: ignore[attr-defined]
    try:
        assert r.hook("default") is made
    finally:
        del defaults.nope53  # type: ignore[attr-defined]
        registry._hooks.pop(("kjobs.api.defaults", "nope53"), None)


@pytest.mark.parametrize("r", RESOURCES, ids=lambda r: f"{r.group}/{r.plural}")
def test_found_first_as_the_service_reads_it(r: Resource) -> None:
    """`r.found.get(name) or r.hook(name)`, the write path's read, answers as stop 52's `hook`, before and after
    a hook was found; a custom resource's hooks (made per call) are never kept there."""
    fresh = dataclasses.replace(r)
    for name in [*NAMES, *NAMES]:
        assert (fresh.found.get(name) or fresh.hook(name)) is hook52(r, name), name
    cr = CustomResource("example.com", "v1", "widgets", "widget", "Widget", True, crd_name="widgets.example.com")
    for name in ("default", "validate", "validate_update", "validate_status_update"):
        cr.hook(name)
    assert cr.found == {}
