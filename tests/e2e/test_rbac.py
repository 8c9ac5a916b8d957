"""RBAC on `kjobs up`, as a cluster's users meet it with the real kubectl: a bundle of ServiceAccount + Role +
RoleBinding + Job applied as it is, `kubectl create role|rolebinding|clusterrole|clusterrolebinding`, get (wide) and
describe, the bootstrap roles a fresh cluster lists with `view`'s rules aggregated, and `kubectl --as=jane`
Forbidden until a RoleBinding to `view` exists, then allowed in that namespace only, with `auth can-i --list`;
then the official `kubernetes` client and lightkube."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import pytest

from kjobs.server.rbacpolicy import bootstrap_objects
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
  name: pod-lister
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-lister
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: pod-lister
subjects:
- kind: ServiceAccount
  name: pod-lister
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: pod-lister
---
apiVersion: batch/v1
kind: Job
metadata:
  name: rbac-bundle
spec:
  template:
    spec:
      serviceAccountName: pod-lister
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        command: ["sh", "-c", "true"]
"""

BOOTSTRAP_ROLES = sorted(obj["metadata"]["name"] for kind, _, obj in bootstrap_objects() if kind == "clusterroles")
"""policy.go's and controller_policy.go's ClusterRoles (tests/server/test_rbac_bootstrap.py checks them)."""


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("rbac")) as kubectl:
        yield kubectl


def test_kubectl_applies_a_bundle_of_account_role_binding_and_job(up: Up) -> None:
    out = up.ok("apply", "-f", "-", stdin=BUNDLE)
    assert out.splitlines() == [
        "serviceaccount/pod-lister created",
        "role.rbac.authorization.k8s.io/pod-lister created",
        "rolebinding.rbac.authorization.k8s.io/pod-lister created",
        "job.batch/rbac-bundle created",
    ]
    rows = _columns(up.ok("get", "role,rolebinding"))
    assert rows[0] == ["NAME", "CREATED AT"]
    assert rows[1][0] == "role.rbac.authorization.k8s.io/pod-lister"
    assert rows[3] == ["NAME", "ROLE", "AGE"]
    assert rows[4][:2] == ["rolebinding.rbac.authorization.k8s.io/pod-lister", "Role/pod-lister"]
    wide = _columns(up.ok("get", "rolebinding", "pod-lister", "-o", "wide"))
    assert wide[0] == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert [wide[1][0], wide[1][1], wide[1][-1]] == ["pod-lister", "Role/pod-lister", "/pod-lister"]
    up.ok("wait", "--for=condition=complete", "job/rbac-bundle", "--timeout=60s", timeout=70)
    account = "system:serviceaccount:default:pod-lister"
    assert up.ok("auth", "can-i", "list", "pods", f"--as={account}") == "yes"
    code, out = up("auth", "can-i", "list", "pods", f"--as={account}", "-n", "kube-system")
    assert (code, out) == (1, "no")
    assert up.ok("apply", "-f", "-", stdin=BUNDLE).splitlines()[1] == (
        "role.rbac.authorization.k8s.io/pod-lister unchanged"
    )
    up.ok("delete", "-f", "-", stdin=BUNDLE)


def test_kubectl_creates_describes_and_refuses_a_changed_role_ref(up: Up) -> None:
    assert up.ok("create", "role", "r", "--verb=get", "--resource=pods") == "role.rbac.authorization.k8s.io/r created"
    out = up.ok("create", "rolebinding", "rb", "--role=r", "--user=jane", "--group=devs", "--serviceaccount=default:ci")
    assert out == "rolebinding.rbac.authorization.k8s.io/rb created"
    out = up.ok("create", "clusterrole", "cr", "--verb=get,list", "--resource=jobs.batch", "--resource-name=nightly")
    assert out == "clusterrole.rbac.authorization.k8s.io/cr created"
    assert up.ok("create", "clusterrolebinding", "crb", "--clusterrole=cr", "--user=bob") == (
        "clusterrolebinding.rbac.authorization.k8s.io/crb created"
    )
    described = up.ok("describe", "rolebinding", "rb")
    assert re.search(r"^Role:\n  Kind:  Role\n  Name:  r$", described, re.M)
    assert re.search(r"^  ServiceAccount\s+ci\s+default$", described, re.M)
    described = up.ok("describe", "clusterrole", "cr")
    assert re.search(r"^  jobs\.batch\s+\[\]\s+\[nightly\]\s+\[get list\]$", described, re.M)
    code, out = up("patch", "rolebinding", "rb", "--type=merge", "-p", '{"roleRef":{"name":"other"}}')
    assert code == 1 and out.endswith(
        'roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"other"}: '
        "cannot change roleRef"
    )
    code, out = up("create", "rolebinding", "bad", "--clusterrole=view", "--serviceaccount=x:Not_Valid")
    assert code == 1 and 'subjects[0].name: Invalid value: "Not_Valid"' in out
    resources = up.ok("api-resources", "--api-group=rbac.authorization.k8s.io", "--no-headers")
    assert [line.split()[0] for line in resources.splitlines()] == [
        "clusterrolebindings",
        "clusterroles",
        "rolebindings",
        "roles",
    ]
    up.ok("delete", "rolebinding/rb", "role/r", "clusterrole/cr", "clusterrolebinding/crb")


def test_a_fresh_cluster_lists_the_bootstrap_roles_with_view_aggregated(up: Up) -> None:
    names = up.ok("get", "clusterroles", "-l", "kubernetes.io/bootstrapping=rbac-defaults", "-o", "name")
    assert names.splitlines() == [f"clusterrole.rbac.authorization.k8s.io/{n}" for n in BOOTSTRAP_ROLES]
    rows = _columns(up.ok("get", "clusterrolebinding", "cluster-admin", "-o", "wide"))
    assert rows[1][:2] == ["cluster-admin", "ClusterRole/cluster-admin"] and rows[1][3] == "system:masters"

    def aggregated() -> str | None:
        out = up.ok("get", "clusterrole", "view", "-o", "jsonpath={.rules[*].resources}")
        return out if "jobs" in out else None

    _until(aggregated, "view aggregated")


def test_an_impersonated_user_is_forbidden_until_bound_to_view(up: Up) -> None:
    up.ok("create", "namespace", "team")
    code, out = up("--as=jane", "get", "pods", "-n", "team")
    assert code == 1 and out == (
        'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" '
        'in the namespace "team"'
    )
    up.ok("create", "rolebinding", "jane-view", "--clusterrole=view", "--user=jane", "-n", "team")

    def allowed() -> str | None:  # `view` is aggregated by the controller soon after start
        code, out = up("--as=jane", "get", "pods", "-n", "team")
        return out if code == 0 else None

    assert _until(allowed, "jane may list pods") == "No resources found in team namespace."
    code, out = up("--as=jane", "get", "pods", "-n", "default")
    assert code == 1 and "Forbidden" in out
    code, out = up("--as=jane", "create", "job", "j", "--image=busybox", "-n", "team")
    assert code == 1 and 'cannot create resource "jobs" in API group "batch" in the namespace "team"' in out
    listed = _columns(up.ok("auth", "can-i", "--list", "--as=jane", "-n", "team"))
    assert listed[0] == ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]
    assert ["jobs.batch", "[]", "[]", "[get list watch]"] in listed
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in listed
    assert up.ok("auth", "can-i", "list", "jobs", "--as=jane", "-n", "team") == "yes"


def test_the_official_client_and_lightkube_read_and_write_rbac(up: Up) -> None:
    from kubernetes import client as k8s
    from kubernetes import config as k8s_config
    from lightkube import Client, KubeConfig
    from lightkube.resources.rbac_authorization_v1 import ClusterRole, RoleBinding

    rbac = k8s.RbacAuthorizationV1Api(k8s_config.new_client_from_config(str(up.config)))
    rule = k8s.V1PolicyRule(api_groups=["batch"], resources=["jobs"], verbs=["get", "list"])
    role = rbac.create_namespaced_role("default", k8s.V1Role(metadata=k8s.V1ObjectMeta(name="py-jobs"), rules=[rule]))
    assert role.rules[0].resources == ["jobs"]
    binding = k8s.V1RoleBinding(
        metadata=k8s.V1ObjectMeta(name="py-jobs"),
        role_ref=k8s.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="py-jobs"),
        subjects=[k8s.RbacV1Subject(kind="User", name="py-user", api_group="rbac.authorization.k8s.io")],
    )
    assert rbac.create_namespaced_role_binding("default", binding).role_ref.name == "py-jobs"
    assert "cluster-admin" in [r.metadata.name for r in rbac.list_cluster_role().items]

    c = Client(config=KubeConfig.from_file(str(up.config)))
    assert c.get(RoleBinding, "py-jobs", namespace="default").subjects[0].name == "py-user"
    assert c.get(ClusterRole, "cluster-admin").rules[0].verbs == ["*"]
    rbac.delete_namespaced_role_binding("py-jobs", "default")
    rbac.delete_namespaced_role("py-jobs", "default")
