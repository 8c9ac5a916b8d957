"""The PV binder, its local-path provisioner and the protection controllers against an in-process API on virtual
time (kjobs.controllers.volumes, docs/storage.md): an Immediate claim binds the smallest fitting Available volume
(class, access modes, size, selector) with upstream's annotations and phases; a claim no volume fits stays
Pending with FailedBinding; a released Retain volume stays Released, a Delete one is deleted with its directory;
a WaitForFirstConsumer claim waits for `selected-node`, then is provisioned under the storage directory; a claim
being deleted keeps its finalizer while a running pod uses it; the scheduler's VolumeBinding messages."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import (
    EVENTS,
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    PODS,
    STORAGE_CLASSES,
)
from kjobs.clock import FakeClock
from kjobs.controllers import volumebinding
from kjobs.controllers.volumes import PersistentVolumeController, PVCProtectionController, PVProtectionController
from tests.support import local_api

NS = "default"


def _pv(name: str, size: str, *, cls: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",), **extra: Any) -> Obj:
    spec: Obj = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "hostPath": {"path": f"/srv/{name}"},
        "persistentVolumeReclaimPolicy": "Retain",
        **extra,
    }
    if cls:
        spec["storageClassName"] = cls
    return {"metadata": {"name": name, "labels": {"tier": name}}, "spec": spec}


def _claim(name: str, size: str = "1Gi", *, cls: str | None = "", **extra: Any) -> Obj:
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}, **extra}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"metadata": {"name": name}, "spec": spec}


async def _get(client: LocalClient, resource: Any, namespace: str | None, name: str) -> Obj | None:
    try:
        return await client.get(resource, namespace, name)
    except ApiError as exc:
        assert exc.code == 404
        return None


async def _with(
    run: Callable[[LocalClient, FakeClock, PersistentVolumeController], Awaitable[None]], tmp: Path
) -> None:
    clock = FakeClock()
    client = await local_api(clock)
    binder = PersistentVolumeController(client, clock, tmp)
    pvc_protection, pv_protection = PVCProtectionController(client, clock), PVProtectionController(client, clock)
    for controller in (binder, pvc_protection, pv_protection):
        await controller.start()
    try:
        await run(client, clock, binder)
    finally:
        for controller in (binder, pvc_protection, pv_protection):
            await controller.stop()


async def _until(
    clock: FakeClock, client: LocalClient, resource: Any, namespace: str | None, name: str, check: Callable[[Any], bool]
) -> Any:
    """Poll the object (None when gone) until `check` holds, letting the controllers run and virtual time pass."""
    return await _poll(clock, lambda: _get(client, resource, namespace, name), check, name)


async def _poll(clock: FakeClock, read: Callable[[], Awaitable[Any]], check: Callable[[Any], bool], what: str) -> Any:
    """`read()` until `check` holds of what it gives, letting the controllers run and virtual time pass."""
    seen: Any = None
    for _ in range(300):
        seen = await read()
        if check(seen):
            return seen
        for _ in range(50):
            await asyncio.sleep(0)
        clock.advance(0.1)
    raise AssertionError(f"{what}: {seen}")


def _phase(obj: Obj | None) -> str:
    return str(((obj or {}).get("status") or {}).get("phase") or "")


async def _reasons(client: LocalClient, name: str) -> list[str]:
    events, _ = await client.list(EVENTS, NS)
    return [e["reason"] for e in events if e["involvedObject"]["name"] == name]


def test_an_immediate_claim_binds_the_smallest_fitting_volume(tmp_path: Path) -> None:
    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        for volume in (
            _pv("big", "10Gi"),
            _pv("small", "2Gi"),
            _pv("tiny", "500Mi"),
            _pv("rox", "1Gi", modes=("ReadOnlyMany",)),
        ):
            await client.create(PERSISTENT_VOLUMES, None, volume)
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("c"))
        claim = await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "c", lambda o: _phase(o) == "Bound")
        assert claim["spec"]["volumeName"] == "small"
        assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
        annotations = claim["metadata"]["annotations"]
        assert annotations == {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
        pv = await client.get(PERSISTENT_VOLUMES, None, "small")
        assert pv["status"]["phase"] == "Bound"
        assert pv["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
        assert pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
        ref = pv["spec"]["claimRef"]
        assert (ref["kind"], ref["namespace"], ref["name"], ref["uid"]) == (
            "PersistentVolumeClaim",
            NS,
            "c",
            claim["metadata"]["uid"],
        )
        others = [await client.get(PERSISTENT_VOLUMES, None, n) for n in ("big", "tiny", "rox")]
        assert [_phase(o) for o in others] == ["Available", "Available", "Available"]

    asyncio.run(_with(run, tmp_path))


def test_a_selector_and_a_class_narrow_the_match(tmp_path: Path) -> None:
    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        await client.create(PERSISTENT_VOLUMES, None, _pv("gold", "5Gi"))
        await client.create(PERSISTENT_VOLUMES, None, _pv("silver", "1Gi"))
        await client.create(PERSISTENT_VOLUMES, None, _pv("classy", "1Gi", cls="manual"))
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("picky", selector={"matchLabels": {"tier": "gold"}}))
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("manual", cls="manual"))
        picky = await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "picky", lambda o: _phase(o) == "Bound")
        manual = await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "manual", lambda o: _phase(o) == "Bound")
        assert (picky["spec"]["volumeName"], manual["spec"]["volumeName"]) == ("gold", "classy")

    asyncio.run(_with(run, tmp_path))


def test_a_claim_nothing_fits_stays_pending(tmp_path: Path) -> None:
    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        await client.create(PERSISTENT_VOLUMES, None, _pv("small", "1Gi"))
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("huge", "5Gi"))
        await _until(clock, client, PERSISTENT_VOLUMES, None, "small", lambda o: _phase(o) == "Available")
        for _ in range(20):
            clock.advance(0.1)
            await asyncio.sleep(0)
        claim = await client.get(PERSISTENT_VOLUME_CLAIMS, NS, "huge")
        assert _phase(claim) == "Pending" and not claim["spec"].get("volumeName")
        assert "FailedBinding" in await _reasons(client, "huge")
        # a volume that fits, added later, is bound
        await client.create(PERSISTENT_VOLUMES, None, _pv("large", "8Gi"))
        claim = await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "huge", lambda o: _phase(o) == "Bound")
        assert claim["spec"]["volumeName"] == "large"

    asyncio.run(_with(run, tmp_path))


def test_a_released_volume_is_retained_or_deleted_by_its_policy(tmp_path: Path) -> None:
    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        await client.create(PERSISTENT_VOLUMES, None, _pv("kept", "1Gi", cls="a"))
        await client.create(
            PERSISTENT_VOLUMES, None, _pv("gone", "1Gi", cls="b", persistentVolumeReclaimPolicy="Delete")
        )
        for name, cls in (("ka", "a"), ("kb", "b")):
            await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim(name, cls=cls))
            await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, name, lambda o: _phase(o) == "Bound")
            await client.delete(PERSISTENT_VOLUME_CLAIMS, NS, name)
        await _until(clock, client, PERSISTENT_VOLUMES, None, "kept", lambda o: _phase(o) == "Released")
        await _until(clock, client, PERSISTENT_VOLUMES, None, "gone", lambda o: o is None)

    asyncio.run(_with(run, tmp_path))


def test_a_wait_for_first_consumer_claim_is_provisioned_once_a_node_is_selected(tmp_path: Path) -> None:
    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        await client.create(
            STORAGE_CLASSES,
            None,
            {
                "metadata": {"name": "standard"},
                "provisioner": "rancher.io/local-path",
                "volumeBindingMode": "WaitForFirstConsumer",
            },
        )
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("late", cls="standard"))
        for _ in range(20):
            clock.advance(0.1)
            await asyncio.sleep(0)
        assert _phase(await client.get(PERSISTENT_VOLUME_CLAIMS, NS, "late")) == "Pending"
        assert await _reasons(client, "late") == ["WaitForFirstConsumer"]
        patch = {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "kjobs-node"}}}
        await client.patch(PERSISTENT_VOLUME_CLAIMS, NS, "late", patch, patch_type="merge")
        claim = await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "late", lambda o: _phase(o) == "Bound")
        name = f"pvc-{claim['metadata']['uid']}"
        assert claim["spec"]["volumeName"] == name
        pv = await client.get(PERSISTENT_VOLUMES, None, name)
        assert pv["spec"]["hostPath"] == {"path": str(tmp_path / name), "type": "DirectoryOrCreate"}
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
        terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
        assert terms == [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["kjobs-node"]}]}
        ]
        assert (tmp_path / name).is_dir()
        # Events are written after what they tell of, as client-go's recorder writes them: waited for.
        reasons = await _poll(clock, lambda: _reasons(client, "late"), lambda r: "ProvisioningSucceeded" in r, "late")
        assert reasons[-3:] == ["ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"]
        await client.delete(PERSISTENT_VOLUME_CLAIMS, NS, "late")
        await _until(clock, client, PERSISTENT_VOLUMES, None, name, lambda o: o is None)
        assert not (tmp_path / name).exists()

    asyncio.run(_with(run, tmp_path))


def test_a_claim_used_by_a_running_pod_keeps_its_finalizer(tmp_path: Path) -> None:
    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        await client.create(PERSISTENT_VOLUMES, None, _pv("v", "1Gi"))
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("held"))
        await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "held", lambda o: _phase(o) == "Bound")
        pod = {
            "metadata": {"name": "user"},
            "spec": {
                "nodeName": "kjobs-node",
                "containers": [{"name": "c", "image": "x"}],
                "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "held"}}],
            },
        }
        made = await client.create(PODS, NS, pod)
        await client.delete(PERSISTENT_VOLUME_CLAIMS, NS, "held")
        for _ in range(30):
            clock.advance(0.1)
            await asyncio.sleep(0)
        claim = await client.get(PERSISTENT_VOLUME_CLAIMS, NS, "held")
        assert claim["metadata"]["deletionTimestamp"]
        assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
        # a volume still Bound is protected too
        await client.delete(PERSISTENT_VOLUMES, None, "v")
        assert (await client.get(PERSISTENT_VOLUMES, None, "v"))["metadata"]["finalizers"] == [
            "kubernetes.io/pv-protection"
        ]
        made["status"] = {"phase": "Succeeded"}
        await client.update(PODS, NS, made, subresource="status")
        await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "held", lambda o: o is None)
        await _until(clock, client, PERSISTENT_VOLUMES, None, "v", lambda o: o is None)  # Released, then unprotected

    asyncio.run(_with(run, tmp_path))


def test_volume_binding_prefilter_messages() -> None:
    """VolumeBinding's PreFilter: a missing claim, one being deleted, an unbound immediate one; WFFC waits."""
    claims: dict[tuple[str, str], Obj] = {
        (NS, "deleting"): {"metadata": {"name": "deleting", "deletionTimestamp": "2024-01-01T00:00:00Z"}, "spec": {}},
        (NS, "immediate"): {"metadata": {"name": "immediate"}, "spec": {"storageClassName": "fast"}},
        (NS, "later"): {"metadata": {"name": "later"}, "spec": {"storageClassName": "standard"}},
        (NS, "bound"): {"metadata": {"name": "bound"}, "spec": {"volumeName": "pv"}, "status": {"phase": "Bound"}},
    }
    classes = {"standard": {"volumeBindingMode": "WaitForFirstConsumer"}, "fast": {"volumeBindingMode": "Immediate"}}

    def pod(*names: str) -> Obj:
        volumes = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": n}} for i, n in enumerate(names)]
        return {"metadata": {"namespace": NS}, "spec": {"volumes": volumes}}

    def check(*names: str) -> str | None:
        return volumebinding.prefilter(pod(*names), lambda ns, n: claims.get((ns, n)), classes.get)

    assert check("x") == 'persistentvolumeclaim "x" not found'
    assert check("bound", "deleting") == 'persistentvolumeclaim "deleting" is being deleted'
    assert check("immediate", "x") == 'persistentvolumeclaim "x" not found'
    assert check("immediate") == "pod has unbound immediate PersistentVolumeClaims"
    assert check("later", "bound") is None
    assert [
        c["metadata"]["name"]
        for c in volumebinding.claims_to_provision(
            pod("later", "bound"), lambda ns, n: claims.get((ns, n)), classes.get
        )
    ] == ["later"]
    assert volumebinding.all_bound(pod("bound"), lambda ns, n: claims.get((ns, n)))
    assert not volumebinding.all_bound(pod("bound", "later"), lambda ns, n: claims.get((ns, n)))


def test_a_volume_pre_bound_to_a_claim_waits_for_it_alone(tmp_path: Path) -> None:
    """A volume whose claimRef names a claim not yet created is Available for that claim only, and is bound to it
    without `bound-by-controller` (the user chose it)."""

    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        await client.create(
            PERSISTENT_VOLUMES, None, _pv("reserved", "1Gi", claimRef={"namespace": NS, "name": "mine"})
        )
        await _until(clock, client, PERSISTENT_VOLUMES, None, "reserved", lambda o: _phase(o) == "Available")
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("other"))
        for _ in range(20):
            clock.advance(0.1)
            await asyncio.sleep(0)
        assert _phase(await client.get(PERSISTENT_VOLUME_CLAIMS, NS, "other")) == "Pending"
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("mine"))
        mine = await _until(clock, client, PERSISTENT_VOLUME_CLAIMS, NS, "mine", lambda o: _phase(o) == "Bound")
        assert mine["spec"]["volumeName"] == "reserved"
        pv = await client.get(PERSISTENT_VOLUMES, None, "reserved")
        assert pv["spec"]["claimRef"]["uid"] == mine["metadata"]["uid"]
        assert "pv.kubernetes.io/bound-by-controller" not in (pv["metadata"].get("annotations") or {})

    asyncio.run(_with(run, tmp_path))


def test_a_claim_deleted_before_its_volume_name_is_written_releases_its_volume(tmp_path: Path) -> None:
    """trial34: a provisioned volume's claimRef names the claim, but the claim was deleted before the binder
    wrote its `volumeName`; the volume must still be Released and, being `Delete`, deleted (upstream's resync
    finds it), not stay Bound to a claim that is gone."""

    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        claim = await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("gone", cls="b"))
        ref = {"kind": "PersistentVolumeClaim", "namespace": NS, "name": "gone", "uid": claim["metadata"]["uid"]}
        pv = _pv("orphan", "2Gi", cls="other", persistentVolumeReclaimPolicy="Delete", claimRef=ref)
        made = await client.create(PERSISTENT_VOLUMES, None, pv)
        made["status"] = {"phase": "Bound"}  # as `bind` leaves it before it writes the claim
        await client.update(PERSISTENT_VOLUMES, None, made, subresource="status")
        for _ in range(20):
            clock.advance(0.1)
            await asyncio.sleep(0)
        assert _phase(await client.get(PERSISTENT_VOLUMES, None, "orphan")) == "Bound"
        await client.delete(PERSISTENT_VOLUME_CLAIMS, NS, "gone")
        await _until(clock, client, PERSISTENT_VOLUMES, None, "orphan", lambda o: o is None)

    asyncio.run(_with(run, tmp_path))


def test_pods_sharing_a_wait_for_first_consumer_claim_go_to_its_selected_node() -> None:
    """trial34: pods of an Indexed Job sharing one WaitForFirstConsumer claim were placed on both of
    `kjobs up --nodes 2`'s nodes, each PreBind overwrote `volume.kubernetes.io/selected-node`, and the claim,
    provisioned for one node while naming the other, never bound. binder.go `FindPodVolumes` skips a node other
    than the claim's selected node ("node(s) didn't find available persistent volumes to bind"), and the assume
    cache makes that hold for the next pod before the annotation is seen."""
    from tests.controllers.test_scheduler_controller import node, pod, start

    def preferring(name: str, host: str) -> Obj:
        term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}
        affinity = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": term}
        ]}}  # fmt: skip
        volumes = [{"name": "w", "persistentVolumeClaim": {"claimName": "shared"}}]
        return pod(name, affinity=affinity, volumes=volumes)

    async def scenario() -> None:
        env = await start(
            node("a", labels={"kubernetes.io/hostname": "a"}), node("b", labels={"kubernetes.io/hostname": "b"})
        )
        wffc = {"provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer"}
        await env.client.create(STORAGE_CLASSES, None, {"metadata": {"name": "standard"}, **wffc})
        await env.client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("shared", cls="standard"))
        await env.settle(lambda: env.sched.claims.get(NS, "shared") is not None)
        await env.client.create(PODS, NS, preferring("first", "a"))
        await env.client.create(PODS, NS, preferring("second", "b"))
        for _ in range(30):  # both attempts run; nothing binds the claim yet, so both wait in PreBind
            env.clock.advance(0.1)
            for _ in range(20):
                await asyncio.sleep(0)
        claim = await env.client.get(PERSISTENT_VOLUME_CLAIMS, NS, "shared")
        pass
        assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "a"
        claim["spec"]["volumeName"] = "pvc-x"  # as the PV controller binds it
        claim = await env.client.update(PERSISTENT_VOLUME_CLAIMS, NS, claim)
        claim["status"] = {"phase": "Bound"}
        await env.client.update(PERSISTENT_VOLUME_CLAIMS, NS, claim, subresource="status")
        await env.settle(lambda: bool(env.node_of("first") and env.node_of("second")))
        assert (env.node_of("first"), env.node_of("second")) == ("a", "a")
        await env.sched.stop()

    asyncio.run(scenario())


def test_a_claim_without_a_class_gets_the_default_class_once_there_is_one(tmp_path: Path) -> None:
    """trial34: with `--disable-admission-plugins=DefaultStorageClass` (or a claim made before any default class
    existed) a claim naming no class stayed Pending with FailedBinding for good. pv_controller.go's
    `assignDefaultStorageClass` (RetroactiveDefaultStorageClass) gives it the default class; one that names ""
    keeps it."""

    async def run(client: LocalClient, clock: FakeClock, _: PersistentVolumeController) -> None:
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("late", cls=None))
        await client.create(PERSISTENT_VOLUME_CLAIMS, NS, _claim("none", cls=""))
        for _ in range(20):
            clock.advance(0.1)
            await asyncio.sleep(0)
        assert await _reasons(client, "late") == ["FailedBinding"]
        default = {"is-default-class": "true"}
        sc = {
            "metadata": {
                "name": "standard",
                "annotations": {f"storageclass.kubernetes.io/{k}": v for k, v in default.items()},
            },
            "provisioner": "rancher.io/local-path",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
        await client.create(STORAGE_CLASSES, None, sc)
        claim = await _until(
            clock,
            client,
            PERSISTENT_VOLUME_CLAIMS,
            NS,
            "late",
            lambda o: o["spec"].get("storageClassName") == "standard",
        )
        assert _phase(claim) == "Pending"
        for _ in range(20):
            clock.advance(0.1)
            await asyncio.sleep(0)
        assert (await _reasons(client, "late"))[-1] == "WaitForFirstConsumer"
        assert (await client.get(PERSISTENT_VOLUME_CLAIMS, NS, "none"))["spec"]["storageClassName"] == ""

    asyncio.run(_with(run, tmp_path))
