"""ServiceAccounts on `kjobs up`, as a cluster's users meet them: the real kubectl (create sa, get sa, describe sa,
apply of a bundle ServiceAccount + Job, delete), a Job naming an account that does not exist (FailedCreate until
it is created), the `default` account the ServiceAccounts controller keeps in every namespace, the official
`kubernetes` client and lightkube."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator

import pytest

from tests.e2e.test_config_objects import Up, _columns, kubectl_on_up
from tests.e2e.test_python_clients import _until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

BUNDLE = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa-runner
---
apiVersion: batch/v1
kind: Job
metadata:
  name: sa-bundle
spec:
  template:
    spec:
      serviceAccountName: sa-runner
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "true"]
"""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("service-accounts")) as kubectl:
        yield kubectl


def test_kubectl_creates_gets_describes_and_deletes_service_accounts(up: Up) -> None:
    assert up.ok("create", "sa", "kc-builder") == "serviceaccount/kc-builder created"
    rows = _columns(up.ok("get", "sa"))
    assert rows[0] == ["NAME", "SECRETS", "AGE"]
    assert [r[:2] for r in rows[1:]] == [["default", "0"], ["kc-builder", "0"]]
    assert up.ok("get", "serviceaccounts", "--field-selector", "metadata.name=kc-builder", "-o", "name") == (
        "serviceaccount/kc-builder"
    )
    described = up.ok("describe", "sa", "kc-builder")
    assert re.search(r"^Name:\s+kc-builder$", described, re.M)
    assert re.search(r"^Namespace:\s+default$", described, re.M)
    assert re.search(r"^Mountable secrets:\s+<none>$", described, re.M)
    patched = up.ok("patch", "sa", "kc-builder", "-p", '{"secrets":[{"name":"s1","namespace":"x","uid":"u"}]}')
    assert patched == "serviceaccount/kc-builder patched"
    assert up.ok("get", "sa", "kc-builder", "-o", "jsonpath={.secrets}") == '[{"name":"s1"}]'
    code, out = up("create", "sa", "Not_Valid")
    assert code == 1 and 'ServiceAccount "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid"' in out
    assert up.ok("delete", "sa", "kc-builder") == 'serviceaccount "kc-builder" deleted'
    code, out = up("get", "sa", "kc-builder")
    assert code == 1 and 'serviceaccounts "kc-builder" not found' in out
    assert "sa" in up.ok("api-resources", "--api-group=", "-o", "wide").split("serviceaccounts", 1)[1].split()[:1]


def test_every_namespace_gets_a_default_account_made_again_when_deleted(up: Up) -> None:
    up.ok("create", "namespace", "sa-team")
    _until(lambda: up("get", "sa", "default", "-n", "sa-team")[0] == 0 or None, "default in sa-team")
    uid = up.ok("get", "sa", "default", "-n", "sa-team", "-o", "jsonpath={.metadata.uid}")
    up.ok("delete", "sa", "default", "-n", "sa-team")

    def remade() -> str | None:
        code, out = up("get", "sa", "default", "-n", "sa-team", "-o", "jsonpath={.metadata.uid}")
        return out if code == 0 and out != uid else None

    _until(remade, "default made again")


def test_kubectl_applies_a_bundle_of_account_and_job(up: Up) -> None:
    out = up.ok("apply", "-f", "-", stdin=BUNDLE)
    assert out.splitlines() == ["serviceaccount/sa-runner created", "job.batch/sa-bundle created"]
    up.ok("wait", "--for=condition=complete", "job/sa-bundle", "--timeout=60s", timeout=70)
    pod = up.ok("get", "pods", "-l", "job-name=sa-bundle", "-o", "jsonpath={.items[0].spec.serviceAccountName}")
    assert pod == "sa-runner"
    up.ok("delete", "-f", "-", stdin=BUNDLE)


def test_a_job_naming_a_missing_account_waits_for_it(up: Up) -> None:
    manifest = BUNDLE.split("---\n", 1)[1].replace("sa-bundle", "sa-waits").replace("sa-runner", "sa-later")
    assert up.ok("apply", "-f", "-", stdin=manifest) == "job.batch/sa-waits created"

    def failed_create() -> str | None:
        events = json.loads(up.ok("get", "events", "--field-selector", "reason=FailedCreate", "-o", "json"))
        found = [e["message"] for e in events["items"] if e["involvedObject"]["name"] == "sa-waits"]
        return found[0] if found else None

    message = _until(failed_create, "FailedCreate")
    assert message == (
        'Error creating: pods "sa-waits-" is forbidden: error looking up service account default/sa-later: '
        'serviceaccount "sa-later" not found'
    )
    assert up.ok("get", "pods", "-l", "job-name=sa-waits", "-o", "name") == ""
    up.ok("create", "sa", "sa-later")
    up.ok("wait", "--for=condition=complete", "job/sa-waits", "--timeout=60s", timeout=70)


def test_the_official_client_and_lightkube_read_and_write_service_accounts(up: Up) -> None:
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config
    from kubernetes.client.rest import ApiException
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.models.meta_v1 import ObjectMeta
    from lightkube.resources.core_v1 import ServiceAccount

    core = k8s.CoreV1Api(k8s_config.new_client_from_config(str(up.config)))
    body = k8s.V1ServiceAccount(metadata=k8s.V1ObjectMeta(name="py-sa"), automount_service_account_token=False)
    created = core.create_namespaced_service_account("default", body)
    assert (created.metadata.name, created.automount_service_account_token) == ("py-sa", False)
    assert "py-sa" in [a.metadata.name for a in core.list_namespaced_service_account("default").items]
    core.patch_namespaced_service_account("py-sa", "default", {"imagePullSecrets": [{"name": "pull"}]})
    assert core.read_namespaced_service_account("py-sa", "default").image_pull_secrets[0].name == "pull"
    core.delete_namespaced_service_account("py-sa", "default")
    with pytest.raises(ApiException) as raised:
        core.read_namespaced_service_account("py-sa", "default")
    assert raised.value.status == 404

    c = Client(config=KubeConfig.from_file(str(up.config)))
    c.create(ServiceAccount(metadata=ObjectMeta(name="lk-sa")))
    assert c.get(ServiceAccount, "lk-sa").metadata.name == "lk-sa"
    assert "default" in [a.metadata.name for a in c.list(ServiceAccount, namespace="default")]
    c.delete(ServiceAccount, "lk-sa")
    with pytest.raises(ApiError) as raised:
        c.get(ServiceAccount, "lk-sa")
    assert raised.value.status.code == 404


def test_an_account_owned_by_a_job_is_collected_with_it(up: Up) -> None:
    """The garbage collector watches ServiceAccounts, as Kubernetes' graph builder watches every deletable kind."""
    job = BUNDLE.split("---\n", 1)[1].replace("sa-bundle", "sa-owner").replace("sa-runner", "default")
    up.ok("apply", "-f", "-", stdin=job)
    uid = up.ok("get", "job", "sa-owner", "-o", "jsonpath={.metadata.uid}")
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "sa-owner", "uid": uid}
    owned = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa-owned", "ownerReferences": [owner]}}
    assert up.ok("apply", "-f", "-", stdin=json.dumps(owned)) == "serviceaccount/sa-owned created"
    up.ok("delete", "job", "sa-owner")
    _until(lambda: up("get", "sa", "sa-owned")[0] != 0 or None, "the owned account collected")
