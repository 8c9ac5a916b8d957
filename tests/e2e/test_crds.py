"""CustomResourceDefinitions on `kjobs up`, with the real kubectl and Python clients: the Kubernetes docs' CronTab
CRD is applied, Established, and its objects are served (short name, printer columns, `kubectl explain`, /status,
pruning and schema validation, watch), cleaned up by the garbage collector and namespace deletion like any other
object, deleted with their CRD, and still there after a restart on the same data directory."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes import watch as k8s_watch

from tests.e2e.test_config_objects import Up
from tests.server.test_up import _up
from tests.support import free_port

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

T = TypeVar("T")

# https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/ (CronTab),
# with the printer columns and the status and scale subresources of the same page
CRONTAB_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                cronSpec:
                  type: string
                  description: The cron schedule.
                image:
                  type: string
                replicas:
                  type: integer
                  minimum: 1
                  maximum: 10
                  default: 1
            status:
              type: object
              properties:
                replicas:
                  type: integer
      subresources:
        status: {}
        scale:
          specReplicasPath: .spec.replicas
          statusReplicasPath: .status.replicas
      additionalPrinterColumns:
      - name: Spec
        type: string
        description: The cron spec defining the interval a CronJob is run
        jsonPath: .spec.cronSpec
      - name: Replicas
        type: integer
        description: The number of jobs launched by the CronJob
        jsonPath: .spec.replicas
      - name: Age
        type: date
        jsonPath: .metadata.creationTimestamp
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames:
    - ct
    categories:
    - all
"""

CRONTAB = """\
apiVersion: "stable.example.com/v1"
kind: CronTab
metadata:
  name: {name}
spec:
  cronSpec: "* * * * */5"
  image: my-awesome-cron-image
"""

SAR = """\
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: jane
  resourceAttributes:
    namespace: default
    verb: list
    resource: pods
"""

GROUP, VERSION, PLURAL = "stable.example.com", "v1", "crontabs"


def _until(probe: Callable[[], T | None], what: str, timeout: float = 20.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Cluster:
    def __init__(self, kubectl: Up, data: Path) -> None:
        self.kubectl = kubectl
        self.data = data


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("crds")
    config = tmp / "kc.yaml"
    args = ("--port", str(free_port()), "--data-dir", str(tmp / "data"), "--kubeconfig", str(config), "--nodes", "0")
    with _up(tmp, *args) as (proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}", proc.stderr.read() if proc.stderr else ""
        home = tmp / "kubectl-home"
        home.mkdir()
        kubectl = Up(config, home)
        kubectl.ok("apply", "-f", "-", stdin=CRONTAB_CRD)
        kubectl.ok("wait", "--for", "condition=Established", "crd/crontabs.stable.example.com", "--timeout=20s")
        yield Cluster(kubectl, tmp / "data")


def _rows(table: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in table.splitlines()]


def test_crd_status_and_table(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    crd = json.loads(kubectl.ok("get", "crd", "crontabs.stable.example.com", "-o", "json"))
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in crd["status"]["conditions"]}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted"),
    }
    assert crd["status"]["acceptedNames"]["shortNames"] == ["ct"]
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["spec"]["names"]["listKind"] == "CronTabList"
    assert _rows(kubectl.ok("get", "crd"))[0] == ["NAME", "CREATED AT"]
    listed = kubectl.ok("api-resources", "--api-group", GROUP)
    assert _rows(listed)[1] == ["crontabs", "ct", "stable.example.com/v1", "true", "CronTab"]


def test_kubectl_serves_crontabs(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    assert kubectl.ok("apply", "-f", "-", stdin=CRONTAB.format(name="my-new-cron-object")) == (
        "crontab.stable.example.com/my-new-cron-object created"
    )
    rows = _rows(kubectl.ok("get", "crontabs"))
    assert rows[0] == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert rows[1][:3] == ["my-new-cron-object", "* * * * */5", "1"]  # replicas defaulted from the schema
    assert _rows(kubectl.ok("get", "ct"))[1][0] == "my-new-cron-object"
    assert "crontab.stable.example.com/my-new-cron-object" in kubectl.ok("get", "all", "-o", "name")
    explained = kubectl.ok("explain", "crontab.spec")
    assert "KIND:       CronTab" in explained
    assert re.search(r"cronSpec\s+<string>\n\s+The cron schedule.", explained), explained
    # a second apply is a JSON merge patch (the OpenAPI document lists no strategic merge patch for a CR)
    changed = CRONTAB.format(name="my-new-cron-object").replace("my-awesome", "my-other")
    assert kubectl.ok("apply", "-f", "-", stdin=changed).endswith("configured")
    obj = json.loads(kubectl.ok("get", "ct", "my-new-cron-object", "-o", "json"))
    assert obj["spec"]["image"] == "my-other-cron-image"
    assert obj["metadata"]["generation"] == 2


def test_status_subresource_and_generation(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    kubectl.ok("apply", "-f", "-", stdin=CRONTAB.format(name="with-status"))
    kubectl.ok("patch", "ct", "with-status", "--type=merge", "--subresource=status", "-p", '{"status":{"replicas":2}}')
    kubectl.ok("patch", "ct", "with-status", "--type=merge", "-p", '{"status":{"replicas":9}}')  # status ignored here
    obj = json.loads(kubectl.ok("get", "ct", "with-status", "-o", "json"))
    assert obj["status"] == {"replicas": 2}
    assert obj["metadata"]["generation"] == 1  # status writes do not count
    kubectl.ok("patch", "ct", "with-status", "--type=merge", "-p", '{"spec":{"replicas":3}}')
    assert json.loads(kubectl.ok("get", "ct", "with-status", "-o", "json"))["metadata"]["generation"] == 2


def test_scale_subresource(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    kubectl.ok("apply", "-f", "-", stdin=CRONTAB.format(name="scaled"))
    assert kubectl.ok("scale", "ct", "scaled", "--replicas=7") == "crontab.stable.example.com/scaled scaled"
    assert json.loads(kubectl.ok("get", "ct", "scaled", "-o", "json"))["spec"]["replicas"] == 7
    api = k8s_config.new_client_from_config(str(kubectl.config))
    with api:
        objects = k8s.CustomObjectsApi(api)
        objects.patch_namespaced_custom_object_status(
            GROUP, VERSION, "default", PLURAL, "scaled", {"status": {"replicas": 5}}
        )
        scale = objects.get_namespaced_custom_object_scale(GROUP, VERSION, "default", PLURAL, "scaled")
        assert (scale["kind"], scale["apiVersion"], scale["spec"], scale["status"]) == (
            "Scale",
            "autoscaling/v1",
            {"replicas": 7},
            {"replicas": 5},
        )
        objects.patch_namespaced_custom_object_scale(
            GROUP, VERSION, "default", PLURAL, "scaled", {"spec": {"replicas": 2}}
        )
        assert (
            objects.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "scaled")["spec"]["replicas"] == 2
        )
    path = f"/apis/{GROUP}/{VERSION}/namespaces/default/crontabs/scaled/scale"
    code, out = kubectl(
        "patch", "ct", "scaled", "--subresource=scale", "--type=merge", "-p", '{"spec":{"replicas":11}}'
    )
    assert code == 1
    assert out.endswith("spec.replicas in body should be less than or equal to 10"), out  # the CronTab's schema
    assert json.loads(kubectl.ok("get", "--raw", path))["spec"] == {"replicas": 2}


def test_schema_refusals(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    code, out = kubectl("apply", "-f", "-", stdin=CRONTAB.format(name="strict") + "  extra: 1\n")
    assert code == 1
    assert (
        'CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.extra"'
        in out
    )
    code, out = kubectl("apply", "--validate=false", "-f", "-", stdin=CRONTAB.format(name="pruned") + "  extra: 1\n")
    assert code == 0, out
    assert "extra" not in json.loads(kubectl.ok("get", "ct", "pruned", "-o", "json"))["spec"]
    code, out = kubectl("patch", "ct", "pruned", "--type=merge", "-p", '{"spec":{"replicas":"x"}}')
    assert code == 1
    assert out == (
        'The CronTab "pruned" is invalid: spec.replicas: Invalid value: "string": '
        'spec.replicas in body must be of type integer: "string"'
    )
    code, out = kubectl("patch", "ct", "pruned", "--type=merge", "-p", '{"spec":{"replicas":11}}')
    assert out.endswith("spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10")
    code, out = kubectl("patch", "ct", "pruned", "-p", '{"spec":{"replicas":2}}')  # kubectl's default: strategic
    assert code == 1
    assert out.endswith(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
    code, out = kubectl("apply", "-f", "-", stdin=CRONTAB_CRD.replace("crontabs.stable", "crontab.stable"))
    assert code == 1
    assert 'metadata.name: Invalid value: "crontab.stable.example.com": must be spec.names.plural+"."+spec.group' in out


def test_server_side_apply_and_selectors(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    body = CRONTAB.format(name="applied").replace("metadata:\n", "metadata:\n  labels:\n    tier: x\n")
    assert kubectl.ok("apply", "--server-side", "-f", "-", stdin=body) == (
        "crontab.stable.example.com/applied serverside-applied"
    )
    assert kubectl.ok("get", "ct", "-l", "tier=x", "-o", "name") == "crontab.stable.example.com/applied"
    assert kubectl.ok("get", "ct", "--field-selector", "metadata.name=applied", "-o", "name") == (
        "crontab.stable.example.com/applied"
    )
    code, out = kubectl("get", "ct", "--field-selector", "spec.image=x")
    assert code == 1 and "field label not supported: spec.image" in out


def test_review_needs_no_validate_false(cluster: Cluster) -> None:
    """kubectl lists the CRDs to validate a kind the OpenAPI documents give no PATCH (a review): it works now."""
    out = cluster.kubectl.ok("create", "-f", "-", "-o", "json", stdin=SAR)
    assert json.loads(out)["status"]["allowed"] is False


def test_rbac_sees_custom_resources(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    assert kubectl("auth", "can-i", "list", "crontabs", "--as", "jane") == (1, "no")
    kubectl.ok("create", "clusterrole", "crontab-reader", "--verb=list", "--resource=crontabs.stable.example.com")
    kubectl.ok("create", "clusterrolebinding", "jane-crontabs", "--clusterrole=crontab-reader", "--user=jane")
    _until(lambda: True if kubectl("auth", "can-i", "list", "crontabs", "--as", "jane")[0] == 0 else None, "RBAC")
    assert kubectl("get", "ct", "--as", "jane")[0] == 0


def test_garbage_collector_and_namespace_deletion(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    kubectl.ok("create", "namespace", "crons")
    kubectl.ok("create", "configmap", "owner", "-n", "crons")
    uid = kubectl.ok("get", "configmap", "owner", "-n", "crons", "-o", "jsonpath={.metadata.uid}")
    owned = CRONTAB.format(name="owned").replace(
        "metadata:\n",
        f"metadata:\n  ownerReferences:\n  - apiVersion: v1\n    kind: ConfigMap\n    name: owner\n    uid: {uid}\n",
    )
    kubectl.ok("apply", "-n", "crons", "-f", "-", stdin=owned)
    kubectl.ok("apply", "-n", "crons", "-f", "-", stdin=CRONTAB.format(name="loose"))
    kubectl.ok("delete", "configmap", "owner", "-n", "crons")
    _until(
        lambda: (
            True if kubectl.ok("get", "ct", "-n", "crons", "-o", "name") == "crontab.stable.example.com/loose" else None
        ),
        "the garbage collector to delete the owned CronTab",
    )
    kubectl.ok("delete", "namespace", "crons", "--wait=true", timeout=60)
    assert kubectl("get", "namespace", "crons")[0] == 1


def test_official_client_custom_objects_and_watch(cluster: Cluster) -> None:
    api = k8s_config.new_client_from_config(str(cluster.kubectl.config))
    with api:
        objects = k8s.CustomObjectsApi(api)
        seen: list[tuple[str, str]] = []
        started = threading.Event()

        def watch() -> None:
            w = k8s_watch.Watch()
            started.set()
            for event in w.stream(
                objects.list_namespaced_custom_object, GROUP, VERSION, "default", PLURAL, timeout_seconds=10
            ):
                seen.append((event["type"], event["object"]["metadata"]["name"]))
                if ("DELETED", "py-cron") in seen:
                    w.stop()

        thread = threading.Thread(target=watch)
        thread.start()
        started.wait()
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "CronTab", "metadata": {"name": "py-cron"}}
        body["spec"] = {"cronSpec": "*/1 * * * *"}
        created = objects.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
        assert created["spec"] == {"cronSpec": "*/1 * * * *", "replicas": 1}
        patched = objects.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "py-cron", {"spec": {"image": "i"}}
        )  # the client sends a JSON merge patch for a dict
        assert patched["spec"]["image"] == "i"
        status = objects.patch_namespaced_custom_object_status(
            GROUP, VERSION, "default", PLURAL, "py-cron", {"status": {"replicas": 4}}
        )
        assert status["status"] == {"replicas": 4}
        listed = objects.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, label_selector="none=x")
        assert listed["items"] == [] and listed["kind"] == "CronTabList"
        objects.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-cron")
        thread.join(15)
        mine = [e for e in seen if e[1] == "py-cron"]
        assert mine[0] == ("ADDED", "py-cron") and mine[-1] == ("DELETED", "py-cron")
        assert ("MODIFIED", "py-cron") in mine
        with pytest.raises(k8s.ApiException) as err:
            objects.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-cron")
        assert err.value.status == 404


def test_lightkube_generic_resource(cluster: Cluster) -> None:
    from lightkube import Client, KubeConfig
    from lightkube.generic_resource import create_namespaced_resource

    CronTab = create_namespaced_resource(GROUP, VERSION, "CronTab", PLURAL)
    client = Client(KubeConfig.from_file(str(cluster.kubectl.config)))
    client.create(CronTab(metadata={"name": "lk-cron"}, spec={"cronSpec": "* * * * *"}), namespace="default")
    got = client.get(CronTab, "lk-cron", namespace="default")
    assert got.spec == {"cronSpec": "* * * * *", "replicas": 1}
    names = [o.metadata.name for o in client.list(CronTab, namespace="default")]
    assert "lk-cron" in names
    client.delete(CronTab, "lk-cron", namespace="default")


def test_kr8s_new_class(cluster: Cluster) -> None:
    import kr8s
    from kr8s.objects import new_class

    api = kr8s.api(kubeconfig=str(cluster.kubectl.config))
    CronTab = new_class(kind="CronTab", version=f"{GROUP}/{VERSION}", namespaced=True)
    cron = CronTab(
        {"metadata": {"name": "kr8s-cron", "namespace": "default"}, "spec": {"cronSpec": "* * * * *"}}, api=api
    )
    cron.create()
    cron.patch({"spec": {"replicas": 4}})
    cron.refresh()
    assert cron.raw["spec"] == {"cronSpec": "* * * * *", "replicas": 4}
    assert "kr8s-cron" in [c.name for c in api.get("crontabs", namespace="default")]
    cron.delete()


OPERATOR = textwrap.dedent(
    """
    import kopf

    @kopf.on.create("stable.example.com", "v1", "crontabs")
    def seen(spec, patch, **_):
        patch.status["replicas"] = spec.get("replicas", 0) * 2
    """
)


def test_kopf_handles_custom_resources(cluster: Cluster, tmp_path: Path) -> None:
    operator = tmp_path / "operator.py"
    operator.write_text(OPERATOR)
    env = {**os.environ, "KUBECONFIG": str(cluster.kubectl.config)}
    command = [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", "default", str(operator)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    kubectl = cluster.kubectl
    try:
        kubectl.ok(
            "apply", "-f", "-", stdin=CRONTAB.format(name="kopf-cron").replace("image:", "replicas: 3\n  image:")
        )

        def handled() -> Any:
            status = kubectl.ok("get", "ct", "kopf-cron", "-o", "jsonpath={.status.replicas}")
            return status if status else None

        assert _until(handled, "kopf to set the status", timeout=30) == "6"
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert "Traceback" not in output, output


def test_z_deleting_the_crd_deletes_its_objects(cluster: Cluster) -> None:
    """Last in the module: the CRD goes, with every CronTab, and crontabs are no longer served."""
    kubectl = cluster.kubectl
    assert kubectl.ok("get", "ct", "-A", "-o", "name")
    kubectl.ok("delete", "crd", "crontabs.stable.example.com", timeout=60)
    assert kubectl("get", "crd", "crontabs.stable.example.com")[0] == 1
    code, out = kubectl("get", "--raw", f"/apis/{GROUP}/{VERSION}/crontabs")
    assert code == 1 and "the server could not find the requested resource" in out, out
    kubectl.ok("apply", "-f", "-", stdin=CRONTAB_CRD)
    kubectl.ok("wait", "--for", "condition=Established", "crd/crontabs.stable.example.com", "--timeout=20s")
    assert (
        kubectl.ok("get", "--raw", f"/apis/{GROUP}/{VERSION}/crontabs")
        and json.loads(kubectl.ok("get", "--raw", f"/apis/{GROUP}/{VERSION}/crontabs"))["items"] == []
    )


def test_custom_objects_survive_a_restart(tmp_path: Path) -> None:
    config = tmp_path / "kc.yaml"
    args = ("--data-dir", str(tmp_path / "data"), "--kubeconfig", str(config), "--nodes", "0")
    home = tmp_path / "kubectl-home"
    home.mkdir()
    kubectl = Up(config, home)
    with _up(tmp_path, "--port", str(free_port()), *args) as (_proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}"
        kubectl.ok("apply", "-f", "-", stdin=CRONTAB_CRD)
        kubectl.ok("wait", "--for", "condition=Established", "crd/crontabs.stable.example.com", "--timeout=20s")
        kubectl.ok("apply", "-f", "-", stdin=CRONTAB.format(name="durable"))
    with _up(tmp_path, "--port", str(free_port()), *args) as (_proc, line, _elapsed):
        assert line == f"export KUBECONFIG={config}"
        assert kubectl.ok("get", "ct", "-o", "name") == "crontab.stable.example.com/durable"
