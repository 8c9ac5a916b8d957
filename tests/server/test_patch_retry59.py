"""Stop 59: `ApiService.patch` awaits `_write` itself and reads again on a lost race (`_write_unless_lost`, inline:
a coroutine and a call with keywords fewer a patch), and `_write` calls `_write_checked` by position. Stop 58's
`patch` is kept here; the same patches are run through a fresh service with each, while another writer changes the
pod between a patch's read and its write none, some or every time: the same answers and errors (a patch retried on
a fresh read; one naming its own stale resourceVersion refused with 409; a race lost every time refused with 409
after the retries; an invalid patch 422), the same stored objects."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.server import service as S
from kjobs.server.registry import lookup
from kjobs.server.storage import Storage
from kjobs.store.memory import MemoryStore
from tests.server.test_write_coroutine52 import drawn, pod

PODS = lookup("", "v1", "pods")
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


async def old_patch(
    self,
    r: Any,
    namespace: str,
    name: str,
    content_type: str,
    patch: Any,
    *,
    subresource: str = "",
    field_validation: str = "",
    manager: str | None = None,
    force: bool = False,
    dry_run: bool = False,
    typed: bool = False,
    warn: bool = True,
) -> S.Result:
    """PATCH an item or its status (strategic merge, JSON merge, JSON patch or server-side apply;
    `typed`: see `_decode_check`; `warn`: see `_object_warnings`)."""
    base = content_type if content_type in S.PATCH_MEDIA else S.media_base(content_type)
    if base == "application/apply-patch+yaml":
        return await self._apply(
            r,
            namespace,
            name,
            patch,
            subresource=subresource,
            field_validation=field_validation,
            manager=manager,
            force=force,
            dry_run=dry_run,
        )
    # A patch merged copy-on-write changes nothing it read, so it may read the store's shared object instead
    # of a decode: a status patch (the status split copies metadata and replaces status; no defaulting), or
    # one that leaves the spec alone (its metadata is copied before it is changed, and defaulting, which
    # Kubernetes applies on every decode, sets nothing on an already defaulted spec).
    read_only = base in S._COPY_ON_WRITE_PATCHES and (
        subresource == "status" or (isinstance(patch, dict) and "spec" not in patch)
    )
    for _ in range(S._PATCH_RETRIES):
        old = self._get_or_404(r, namespace, name, shared=read_only)
        patched = S.apply_patch(
            base,
            old,
            patch,
            strategies=S.schema.strategies_for(r.schema_name),
            strict_decode=field_validation.capitalize() != "Ignore",
        )
        if not isinstance(patched, dict):
            raise S.bad_request("the patched object is not a JSON object")
        if base == "application/json-patch+json":  # merges nest no deeper than the object or the patch
            S.limits.check_depth(patched, "the patched object")
        merged = patch if base in S._COPY_ON_WRITE_PATCHES and isinstance(patch, dict) else None
        strategic = base == "application/strategic-merge-patch+json" and isinstance(patch, dict)
        warnings = self._decode_check(
            r, patched, field_validation, typed=typed, patch=merged, patching=True, strategic=strategic
        )
        old_rv = (old.get("metadata") or {}).get("resourceVersion")
        expected = S._patched_rv(patched, old_rv)
        new = self._merge_update(r, old, patched, subresource)
        written = await self._write_unless_lost(
            r,
            old,
            new,
            subresource=subresource,
            expected_rv=expected,
            manager=manager,
            operation="Update",
            dry_run=dry_run,
            warnings=warnings if warn else None,
        )
        if written is not None:
            return S.Result(written, 200, warnings)
    raise S.conflict(r.plural, name, group=r.group)


async def script(races: int) -> list[Any]:
    """The patches, with another writer's label change before each of the first `races` writes of the pod."""
    svc = S.ApiService(Storage(MemoryStore()), clock=lambda: 1_700_000_000.0)
    await svc.ensure_namespaces()
    out: list[Any] = []
    update = svc.store.update
    raced = 0

    async def racing_update(key: str, obj: Any, *, expected_rv: str | None = None) -> Any:
        nonlocal raced
        if key == "pods" and raced < races:
            raced += 1
            current = copy.deepcopy(svc.store.get("pods", "default", "p"))
            current["metadata"]["labels"] = {**(current["metadata"].get("labels") or {}), f"race{raced}": "x"}
            await update("pods", current, expected_rv=current["metadata"]["resourceVersion"])
        return await update(key, obj, expected_rv=expected_rv)

    async def step(call: Any) -> None:
        try:
            result = await call
            out.append(("ok", copy.deepcopy(result.obj), result.code, result.warnings))
        except ApiError as err:
            out.append(("error", err.code, err.reason, str(err)))

    await step(svc.create(PODS, "default", pod("p")))
    svc.store.update = racing_update  # type: ignore[method-assign]
    await step(svc.patch(PODS, "default", "p", SMP, {"status": {"phase": "Running"}}, subresource="status"))
    await step(svc.patch(PODS, "default", "p", SMP, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}))
    await step(svc.patch(PODS, "default", "p", MERGE, {"metadata": {"labels": {"a": "b"}}}))
    rv = svc.store.get("pods", "default", "p")["metadata"]["resourceVersion"]
    await step(svc.patch(PODS, "default", "p", MERGE, {"metadata": {"resourceVersion": rv, "labels": {"c": "d"}}}))
    await step(svc.patch(PODS, "default", "p", SMP, {"metadata": {"labels": {"bad key!": "v"}}}))  # invalid
    await step(svc.patch(PODS, "default", "p", SMP, {"status": {"phase": "Succeeded"}}, subresource="status"))
    out.append(("stored", copy.deepcopy(svc.store.list("pods", None)[0]), raced))
    return out


@pytest.mark.parametrize("races", [0, 1, 2, 7, 1000])
def test_patches_answer_as_with_stop_58s_patch(races: int) -> None:
    new = asyncio.run(script(races))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(S.ApiService, "patch", old_patch)
        old = asyncio.run(script(races))
    assert drawn(new) == drawn(old)
    if races == 1000:  # every race lost: a 409 after the retries
        assert any(step[0] == "error" and step[1] == 409 for step in new)
    assert any(step[0] == "error" and step[1] == 422 for step in new)
