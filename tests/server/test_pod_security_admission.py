"""The PodSecurity admission plugin through kjobs' API service (staging/src/k8s.io/pod-security-admission/admission/
admission.go, v1.32): what a client sees for pods, Jobs, CronJobs and namespaces in labelled namespaces, with the
cluster's default configuration (privileged everywhere unless a namespace says otherwise). docs/pod-security.md.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.clock import FakeClock
from kjobs.server.admission import AdmissionSettings
from kjobs.server.app import create_app
from kjobs.server.registry import lookup
from kjobs.server.service import ApiService
from kjobs.store import MemoryStore

NAMESPACES = lookup("", "v1", "namespaces")
PODS = lookup("", "v1", "pods")
JOBS = lookup("batch", "v1", "jobs")
CRONJOBS = lookup("batch", "v1", "cronjobs")
assert NAMESPACES and PODS and JOBS and CRONJOBS

ENFORCE = "pod-security.kubernetes.io/enforce"
WARN = "pod-security.kubernetes.io/warn"

RESTRICTED_DETAIL = (
    'allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), '
    'unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), '
    'runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), '
    'seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
    '"Localhost")'
)
PLAIN: Obj = {"containers": [{"name": "x", "image": "busybox"}]}
COMPLIANT: Obj = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "x",
            "image": "busybox",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
    ],
}


def run(scenario: Callable[[ApiService], Awaitable[None]], settings: AdmissionSettings | None = None) -> None:
    async def main() -> None:
        app = create_app(MemoryStore(), clock=FakeClock().now, admission=settings or AdmissionSettings())
        await app.startup()
        await scenario(app.service)

    asyncio.run(main())


async def namespace(s: ApiService, name: str, **labels: str) -> None:
    await s.create(NAMESPACES, "", {"metadata": {"name": name, "labels": labels}})


def pod(name: str, spec: Obj, **meta: Any) -> Obj:
    return {"metadata": {"name": name, **meta}, "spec": copy.deepcopy(spec)}


def job(name: str, spec: Obj) -> Obj:
    template = {"spec": {"restartPolicy": "Never", **copy.deepcopy(spec)}}
    return {"metadata": {"name": name}, "spec": {"template": template}}


async def refused(call: Awaitable[Any]) -> ApiError:
    with pytest.raises(ApiError) as info:
        await call
    return info.value


def test_enforce_refuses_a_pod_with_the_exact_message() -> None:
    async def scenario(s: ApiService) -> None:
        await namespace(s, "r", **{ENFORCE: "restricted"})
        error = await refused(s.create(PODS, "r", pod("p", PLAIN)))
        assert (error.code, error.reason) == (403, "Forbidden")
        assert error.message == f'pods "p" is forbidden: violates PodSecurity "restricted:latest": {RESTRICTED_DETAIL}'
        assert s.store.get("pods", "r", "p") is None
        unnamed = {"metadata": {"generateName": "g-"}, "spec": copy.deepcopy(PLAIN)}
        generated = await refused(s.create(PODS, "r", unnamed))
        assert generated.message.startswith('pods "g-')  # the generated name, as validating admission sees it
        created = await s.create(PODS, "r", pod("ok", COMPLIANT))
        assert (created.code, created.warnings) == (201, [])

    run(scenario)


def test_a_job_is_warned_about_never_refused_and_warn_follows_enforce() -> None:
    """ValidatePodController: the template is only warned about; an enforce label alone makes warn the same level
    (api.PolicyToEvaluate), so the user sees the warning before the Job's pods are refused."""

    async def scenario(s: ApiService) -> None:
        await namespace(s, "r", **{ENFORCE: "restricted"})
        result = await s.create(JOBS, "r", job("j", PLAIN))
        assert result.code == 201
        assert result.warnings == [f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}']
        assert (await s.create(JOBS, "r", job("fine", COMPLIANT))).warnings == []
        cron = {"metadata": {"name": "c"}, "spec": {"schedule": "* * * * *", "jobTemplate": job("", PLAIN)}}
        cron["spec"]["jobTemplate"].pop("metadata")
        assert (await s.create(CRONJOBS, "r", cron)).warnings == [
            f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}'
        ]
        quiet = await s.create(JOBS, "r", job("in-process", PLAIN), warn=False)  # kjobs' own components
        assert quiet.warnings == []

    run(scenario)


def test_warn_mode_admits_with_a_warning_and_a_refusal_carries_no_warning() -> None:
    async def scenario(s: ApiService) -> None:
        await namespace(s, "w", **{WARN: "baseline"})
        privileged = {"containers": [{"name": "x", "image": "busybox", "securityContext": {"privileged": True}}]}
        result = await s.create(PODS, "w", pod("p", privileged))
        assert result.warnings == [
            'would violate PodSecurity "baseline:latest": privileged (container "x" must not set '
            "securityContext.privileged=true)"
        ]
        await namespace(s, "b", **{ENFORCE: "baseline", WARN: "restricted"})
        warned = await s.create(PODS, "b", pod("p", PLAIN))
        assert warned.warnings == [f'would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}']
        error = await refused(s.create(PODS, "b", pod("q", privileged)))
        assert 'violates PodSecurity "baseline:latest": privileged' in error.message

    run(scenario)


def test_unlabelled_and_privileged_namespaces_check_nothing() -> None:
    async def scenario(s: ApiService) -> None:
        await namespace(s, "p", **{ENFORCE: "privileged"})
        wild = {"hostPID": True, "containers": [{"name": "x", "image": "i", "securityContext": {"privileged": True}}]}
        for ns in ("default", "p"):
            result = await s.create(PODS, ns, pod("p", wild))
            assert (result.code, result.warnings) == (201, [])
            assert (await s.create(JOBS, ns, job("j", wild))).warnings == []

    run(scenario)


def test_disabling_the_plugin_turns_it_off() -> None:
    async def scenario(s: ApiService) -> None:
        await namespace(s, "r", **{ENFORCE: "restricted"})
        assert (await s.create(PODS, "r", pod("p", PLAIN))).warnings == []

    run(scenario, AdmissionSettings(disabled_plugins=frozenset({"PodSecurity"})))


def test_version_labels_evaluate_old_policies() -> None:
    async def scenario(s: ApiService) -> None:
        await namespace(s, "old", **{ENFORCE: "restricted", "pod-security.kubernetes.io/enforce-version": "v1.21"})
        error = await refused(s.create(PODS, "old", pod("p", PLAIN)))
        assert error.message == (
            'pods "p" is forbidden: violates PodSecurity "restricted:v1.21": allowPrivilegeEscalation != false '
            '(container "x" must set securityContext.allowPrivilegeEscalation=false), runAsNonRoot != true (pod or '
            'container "x" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "x" must set '
            'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'
        )

    run(scenario)


def test_invalid_labels_are_refused_on_create_and_on_change_only() -> None:
    async def scenario(s: ApiService) -> None:
        error = await refused(namespace(s, "bad", **{ENFORCE: "bogus"}))
        assert (error.code, error.reason) == (422, "Invalid")
        assert error.message == (
            'Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": '
            "must be one of privileged, baseline, restricted"
        )
        assert error.details is not None
        assert error.details["causes"] == [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "bogus": must be one of privileged, baseline, restricted',
                "field": "metadata.labels[pod-security.kubernetes.io/enforce]",
            }
        ]
        await namespace(s, "ok")
        ns = s.store.get("namespaces", "", "ok")
        assert ns is not None
        ns["metadata"]["labels"][WARN + "-version"] = "1.30"
        error = await refused(s.update(NAMESPACES, "", "ok", copy.deepcopy(ns)))
        assert error.message.endswith('Invalid value: "1.30": must be "latest" or "v1.x"')
        # A namespace that already has the bad label (disabled plugin, older server) may still be changed otherwise.
        stored = s.store.get("namespaces", "", "ok")
        assert stored is not None
        stored["metadata"]["labels"][WARN + "-version"] = "1.30"
        await s.store.update("namespaces", stored, expected_rv=stored["metadata"]["resourceVersion"])
        stored = s.store.get("namespaces", "", "ok")
        assert stored is not None
        stored["metadata"]["labels"]["team"] = "a"
        assert (await s.update(NAMESPACES, "", "ok", stored)).code == 200

    run(scenario)


def test_tightening_a_namespace_warns_about_its_existing_pods() -> None:
    """EvaluatePodsInNamespace: one warning per distinct set of reasons, naming the first pod by name and how many
    others share it; nothing when the level is relaxed, unchanged or privileged."""

    async def scenario(s: ApiService) -> None:
        await namespace(s, "t")
        for name in ("b", "a", "c"):
            await s.create(PODS, "t", pod(name, PLAIN))
        privileged = {"containers": [{"name": "x", "image": "busybox", "securityContext": {"privileged": True}}]}
        await s.create(PODS, "t", pod("z", privileged))
        await s.create(PODS, "t", pod("ok", COMPLIANT))

        async def relabel(**labels: str) -> list[str]:
            ns = s.store.get("namespaces", "", "t")
            assert ns is not None
            ns["metadata"]["labels"] = {"kubernetes.io/metadata.name": "t", **labels}
            return (await s.update(NAMESPACES, "", "t", ns)).warnings

        assert await relabel(**{ENFORCE: "baseline"}) == [
            'existing pods in namespace "t" violate the new PodSecurity enforce level "baseline:latest"',
            "z: privileged",
        ]
        assert await relabel(**{ENFORCE: "restricted"}) == [
            'existing pods in namespace "t" violate the new PodSecurity enforce level "restricted:latest"',
            "a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
            "seccompProfile",
            "z: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
            "seccompProfile",
        ]
        assert await relabel(**{ENFORCE: "restricted", "team": "x"}) == []  # enforce unchanged
        assert await relabel(**{ENFORCE: "baseline"}) == []  # relaxed
        assert await relabel(**{ENFORCE: "privileged"}) == []

    run(scenario)


def test_pod_updates_are_checked_only_when_they_change_what_the_checks_read() -> None:
    async def scenario(s: ApiService) -> None:
        await namespace(s, "u")
        await s.create(PODS, "u", pod("p", PLAIN))
        ns = s.store.get("namespaces", "", "u")
        assert ns is not None
        ns["metadata"]["labels"][ENFORCE] = "restricted"
        await s.update(NAMESPACES, "", "u", ns)

        def current() -> Obj:
            stored = s.store.get("pods", "u", "p")
            assert stored is not None
            return stored

        labelled = current()
        labelled["metadata"].setdefault("labels", {})["tier"] = "web"
        assert (await s.update(PODS, "u", "p", labelled)).code == 200  # isSignificantPodUpdate: no
        status = current()
        status["status"]["message"] = "status writes are ignored"
        assert (await s.update(PODS, "u", "p", status, subresource="status")).code == 200
        image = current()
        image["spec"]["containers"][0]["image"] = "busybox:2"
        error = await refused(s.update(PODS, "u", "p", image))
        assert error.message == f'pods "p" is forbidden: violates PodSecurity "restricted:latest": {RESTRICTED_DETAIL}'
        debug = current()
        debug["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": "busybox"}]
        error = await refused(s.update(PODS, "u", "p", debug, subresource="ephemeralcontainers"))
        assert 'containers "x", "debugger" must set securityContext.allowPrivilegeEscalation=false' in error.message

    run(scenario)
