"""Pod Security Admission end to end with the real kubectl against `kjobs up` (docs/pod-security.md): a namespace
labelled `pod-security.kubernetes.io/enforce=restricted`, a Job whose pods break the policy (kubectl prints the
warning on apply; the Job controller's creates are refused, a `FailedCreate` event says why, no pod exists, and it
retries), then a compliant Job that runs. Namespace label changes warn about existing pods; bad labels are refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator

import pytest

from tests.e2e.test_config_objects import Up, kubectl_on_up

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

DEADLINE = 60.0

RESTRICTED_DETAIL = (
    'allowPrivilegeEscalation != false (container "main" must set securityContext.allowPrivilegeEscalation=false), '
    'unrestricted capabilities (container "main" must set securityContext.capabilities.drop=["ALL"]), '
    'runAsNonRoot != true (pod or container "main" must set securityContext.runAsNonRoot=true), '
    'seccompProfile (pod or container "main" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
    '"Localhost")'
)

PLAIN_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo ran"]
"""

COMPLIANT_JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      securityContext:
        runAsNonRoot: true
        runAsUser: {uid}
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "echo ran"]
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
"""

SLEEPER = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
  - name: main
    image: busybox
    command: ["sleep", "300"]
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("pod-security")) as kubectl:
        yield kubectl


def _restricted_namespace(up: Up, name: str) -> None:
    up.ok("create", "namespace", name)
    assert up.ok("label", "namespace", name, "pod-security.kubernetes.io/enforce=restricted") == (
        f"namespace/{name} labeled"
    )


def _failed_creates(up: Up, namespace: str, job: str) -> list[str]:
    events = json.loads(up.ok("get", "events", "-n", namespace, "-o", "json"))["items"]
    return [
        e["message"]
        for e in events
        if e.get("reason") == "FailedCreate" and (e.get("involvedObject") or {}).get("name") == job
    ]


def test_a_job_breaking_restricted_is_warned_about_and_its_pods_are_refused(up: Up) -> None:
    _restricted_namespace(up, "psa-refused")
    out = up.ok("apply", "-n", "psa-refused", "-f", "-", stdin=PLAIN_JOB.format(name="plain"))
    assert out.splitlines() == [  # the helper shows stdout, then stderr (where kubectl prints warnings)
        "job.batch/plain created",
        f'Warning: would violate PodSecurity "restricted:latest": {RESTRICTED_DETAIL}',
    ]
    refusal = re.compile(
        r'Error creating: pods "plain-[a-z0-9]{5}" is forbidden: violates PodSecurity "restricted:latest": '
        + re.escape(RESTRICTED_DETAIL)
    )
    deadline = time.monotonic() + DEADLINE
    while not any(refusal.fullmatch(m) for m in _failed_creates(up, "psa-refused", "plain")):
        assert time.monotonic() < deadline, _failed_creates(up, "psa-refused", "plain")
        time.sleep(0.2)
    described = up.ok("describe", "job", "plain", "-n", "psa-refused")
    assert re.search(r"Warning\s+FailedCreate\s+.*job-controller\s+Error creating: pods \"plain-", described), described
    assert 'violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false' in described
    assert up.ok("get", "pods", "-n", "psa-refused", "-o", "name") == ""
    # The controller keeps trying with its back-off (1 s here): a second refusal follows the first.
    deadline = time.monotonic() + DEADLINE
    while len(_failed_creates(up, "psa-refused", "plain")) < 2:
        assert time.monotonic() < deadline, _failed_creates(up, "psa-refused", "plain")
        time.sleep(0.2)
    assert up.ok("get", "pods", "-n", "psa-refused", "-o", "name") == ""
    code, out = up("run", "bare", "-n", "psa-refused", "--image=busybox", "--restart=Never", "--", "true")
    assert code == 1
    assert out == (
        'Error from server (Forbidden): pods "bare" is forbidden: violates PodSecurity "restricted:latest": '
        + RESTRICTED_DETAIL.replace('"main"', '"bare"')
    )


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="a securityContext needs util-linux's setpriv")
def test_a_compliant_job_runs_in_a_restricted_namespace(up: Up) -> None:
    _restricted_namespace(up, "psa-compliant")
    uid = os.geteuid() or 65534  # non-root: as root the container switches to nobody; else it runs as kjobs does
    out = up.ok("apply", "-n", "psa-compliant", "-f", "-", stdin=COMPLIANT_JOB.format(name="fixed", uid=uid))
    assert out == "job.batch/fixed created"  # no warning
    up.ok("wait", "--for=condition=Complete", "job/fixed", "-n", "psa-compliant", f"--timeout={DEADLINE:.0f}s",
          timeout=DEADLINE + 10)  # fmt: skip
    assert up.ok("logs", "job/fixed", "-n", "psa-compliant") == "ran"
    assert _failed_creates(up, "psa-compliant", "fixed") == []


def test_namespace_labels_warn_about_existing_pods_and_bad_values_are_refused(up: Up) -> None:
    up.ok("create", "namespace", "psa-relabel")
    for name in ("sleeper-b", "sleeper-a"):
        up.ok("apply", "-n", "psa-relabel", "-f", "-", stdin=SLEEPER.format(name=name))
    out = up.ok("label", "namespace", "psa-relabel", "pod-security.kubernetes.io/enforce=restricted")
    assert out.splitlines() == [
        "namespace/psa-relabel labeled",
        'Warning: existing pods in namespace "psa-relabel" violate the new PodSecurity enforce level '
        '"restricted:latest"',
        "Warning: sleeper-a (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, "
        "runAsNonRoot != true, seccompProfile",
    ]
    code, out = up("label", "namespace", "psa-relabel", "pod-security.kubernetes.io/enforce=bogus", "--overwrite")
    assert code == 1
    assert out == (
        'The Namespace "psa-relabel" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: '
        '"bogus": must be one of privileged, baseline, restricted'
    )
    assert up.ok("label", "namespace", "psa-relabel", "pod-security.kubernetes.io/enforce=baseline", "--overwrite") == (
        "namespace/psa-relabel labeled"
    )
