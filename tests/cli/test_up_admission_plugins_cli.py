"""`kjobs up --enable-admission-plugins / --disable-admission-plugins`, kube-apiserver's flags: the names of v1.32's
plugins (pkg/kubeapiserver/options/plugins.go), refused at start with `AdmissionOptions.Validate`'s words
(staging/src/k8s.io/apiserver/pkg/server/options/admission.go), and what turning kjobs' plugins off does to a pod."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from kjobs.cli.up import up
from kjobs.clock import FakeClock
from kjobs.server.admission import AdmissionSettings, admission_plugins
from kjobs.server.registry import lookup
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.store import MemoryStore
from tests.cli.up_support import assembled_with
from tests.server.conftest import pod_manifest


def test_disabled_plugins_reach_the_api_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flags = ("--disable-admission-plugins", "Priority, ServiceAccount", "--disable-admission-plugins=ResourceQuota")
    seen = assembled_with(tmp_path, monkeypatch, flags)
    assert seen["admission"].disabled_plugins == {"Priority", "ServiceAccount", "ResourceQuota"}
    assert seen["admission"].service_account_lookup
    second = tmp_path / "second"
    enabled = assembled_with(second, monkeypatch, ("--enable-admission-plugins", "Priority,NamespaceLifecycle"))
    assert enabled["admission"].disabled_plugins == frozenset()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(
            ("--enable-admission-plugins", "Prioritty"),
            'enable-admission-plugins plugin "Prioritty" is unknown',
            id="unknown-enabled",
        ),
        pytest.param(
            ("--disable-admission-plugins", "PodSecurityPolicy"),
            'disable-admission-plugins plugin "PodSecurityPolicy" is unknown',
            id="unknown-disabled-removed-in-1.25",
        ),
        pytest.param(
            (
                "--enable-admission-plugins",
                "Priority,LimitRanger",
                "--disable-admission-plugins",
                "LimitRanger,Priority",
            ),
            "[LimitRanger Priority] in enable-admission-plugins and disable-admission-plugins overlapped",
            id="overlapped",
        ),
        pytest.param(
            ("--enable-admission-plugins", "x,AlwaysPullImages"),
            '[enable-admission-plugins plugin "x" is unknown, enable-admission-plugins plugin "AlwaysPullImages" is '
            "not implemented by kjobs]",
            id="aggregate",
        ),
        pytest.param(
            ("--disable-admission-plugins", "NamespaceLifecycle"),
            'disable-admission-plugins plugin "NamespaceLifecycle" cannot be turned off in kjobs',
            id="namespace-lifecycle",
        ),
    ],
)
def test_a_bad_plugin_list_stops_the_start(tmp_path: Path, flags: tuple[str, ...], message: str) -> None:
    args = ["--port", "0", "--data-dir", str(tmp_path / "data"), "--kubeconfig", str(tmp_path / "kc"), *flags]
    result = CliRunner().invoke(up, args)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == f"Error: {message}"
    assert not (tmp_path / "data").exists()  # refused before anything was made


def test_every_default_plugin_can_be_named() -> None:
    """The default-on list of v1.32 (`DefaultOffAdmissionPlugins`' complement) is accepted by both flags."""
    listed = (
        "NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,PersistentVolumeClaimResize,"
        "DefaultTolerationSeconds,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ResourceQuota,"
        "StorageObjectInUseProtection,Priority,TaintNodesByCondition,RuntimeClass,CertificateApproval,"
        "CertificateSigning,ClusterTrustBundleAttest,CertificateSubjectRestriction,DefaultIngressClass,PodSecurity,"
        "MutatingAdmissionPolicy,ValidatingAdmissionPolicy"
    )
    names = listed.split(",")
    assert admission_plugins(names, []) == (frozenset(), [])
    off, errors = admission_plugins([], [n for n in names if n != "NamespaceLifecycle"])
    assert errors == [] and len(off) == len(names) - 1


def test_a_pod_without_service_account_and_default_toleration_seconds_admission() -> None:
    """With ServiceAccount and DefaultTolerationSeconds off a created pod keeps no account (the v1 conversion's
    mirror of an account it names stays) and gets no tolerations; with Priority off no priority."""

    async def run() -> None:
        store = MemoryStore()
        off = frozenset({"ServiceAccount", "DefaultTolerationSeconds", "Priority"})
        admission = AdmissionSettings(disabled_plugins=off, service_account_lookup=True)
        service = ApiService(Storage(store), clock=FakeClock().now, admission=admission)
        await service.ensure_namespaces()
        pods = lookup("", "v1", "pods")
        assert pods is not None
        bare = (await service.create(pods, "default", pod_manifest("bare"))).obj["spec"]
        assert not {"serviceAccountName", "serviceAccount", "tolerations", "priority"} & set(bare)
        named = pod_manifest("named")
        named["spec"]["serviceAccountName"] = "nobody"  # type: ignore[index]
        spec = (await service.create(pods, "default", named)).obj["spec"]  # no lookup: the plugin is off
        assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("nobody", "nobody")
        store.close()

    asyncio.run(run())
