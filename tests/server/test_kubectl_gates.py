"""The real kubectl against servers with different `--feature-gates`: `kubectl explain` shows a gated field
only when its gate is on, and `kubectl apply` (strict field validation) accepts it only then."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.server.app import create_app
from kjobs.server.runner import serve
from kjobs.store import MemoryStore
from tests.server.conftest import job_manifest
from tests.server.test_kubectl import Kubectl

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


def _kubectl(features: FeatureGates, home: Path) -> Iterator[Kubectl]:
    store = MemoryStore()
    with serve(store, app=create_app(store, features=features)) as url:
        k = Kubectl(url, home)
        yield k
        k.http.close()
    store.close()


@pytest.fixture(scope="module")
def default_gates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    yield from _kubectl(DEFAULT, tmp_path_factory.mktemp("home-default"))


@pytest.fixture(scope="module")
def all_alpha(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    yield from _kubectl(FeatureGates.parse("AllAlpha=true"), tmp_path_factory.mktemp("home-alpha"))


def _limited(k: Kubectl) -> str:
    job = job_manifest("limited")
    job["spec"]["template"]["spec"].update(restartPolicy="OnFailure", maxRestartTimes=2)  # type: ignore[index]
    return k.file("limited.yaml", job)


def test_explain_and_apply_without_the_gate(default_gates: Kubectl) -> None:
    out = default_gates.bad("explain", "job.spec.template.spec.maxRestartTimes")
    assert 'field "maxRestartTimes" does not exist' in out
    assert "restartPolicyRules" in default_gates.ok("explain", "pod.spec.containers")  # ContainerRestartRules: beta
    out = default_gates.bad("apply", "-f", _limited(default_gates))
    assert 'unknown field "spec.template.spec.maxRestartTimes"' in out


def test_explain_and_apply_with_every_kjobs_gate_on(all_alpha: Kubectl) -> None:
    out = all_alpha.ok("explain", "job.spec.template.spec.maxRestartTimes")
    assert "JobPodRestartLimit" in out
    assert "valueRanges" in all_alpha.ok("explain", "job.spec.podFailurePolicy.rules.onExitCodes")
    assert all_alpha.ok("apply", "-f", _limited(all_alpha)) == "job.batch/limited created"
