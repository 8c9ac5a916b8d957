"""The Pod Security Standards' checks against upstream's own tables (staging/src/k8s.io/pod-security-admission,
v1.32): `api/helpers_test.go` (TestParseVersion, TestPolicyToEvaluate), `policy/check_*_test.go` (each check's
reason and detail for its table's pods) and the aggregation of `policy/registry.go` / `checks.go` (which checks a
level and version run, in which order, and the joined message kubectl prints). Case ids are upstream's row names.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api import podsecurity as ps
from kjobs.api.podsecurity import BASELINE, PRIVILEGED, RESTRICTED, LevelVersion, Policy
from kjobs.api.types import Obj

LATEST = None


def labels(*kvs: str) -> dict[str, str]:
    """helpers_test.go `makeLabels`: the pairs under the `pod-security.kubernetes.io/` prefix, plus an unrelated
    label."""
    result = {"other-label": "foo-bar"}
    for key, value in zip(kvs[::2], kvs[1::2], strict=True):
        result[ps.LABEL_PREFIX + key] = value
    return result


P = LevelVersion(PRIVILEGED)


@pytest.mark.parametrize(
    ("given", "expect", "expect_err"),
    [
        pytest.param(labels("enforce", "baseline"), Policy(LevelVersion(BASELINE), P, LevelVersion(BASELINE)), False,
                     id="simple enforce"),
        pytest.param(labels("warn", "restricted"), Policy(P, P, LevelVersion(RESTRICTED)), False, id="simple warn"),
        pytest.param(labels("audit", "baseline"), Policy(P, LevelVersion(BASELINE), P), False, id="simple audit"),
        pytest.param(
            labels("enforce", "baseline", "warn", "restricted"),
            Policy(LevelVersion(BASELINE), P, LevelVersion(RESTRICTED)),
            False,
            id="enforce & warn",
        ),
        pytest.param(
            labels("enforce", "baseline", "enforce-version", "v1.22"),
            Policy(LevelVersion(BASELINE, (1, 22)), P, LevelVersion(BASELINE, (1, 22))),
            False,
            id="enforce version",
        ),
        pytest.param(
            labels("enforce", "baseline", "enforce-version", "v1.22", "warn-version", "latest"),
            Policy(LevelVersion(BASELINE, (1, 22)), P, LevelVersion(BASELINE, LATEST)),
            False,
            id="enforce version & warn-version",
        ),
        pytest.param(
            labels("enforce", "baseline", "warn-version", "v1.23"),
            Policy(LevelVersion(BASELINE), P, LevelVersion(BASELINE, (1, 23))),
            False,
            id="enforce & warn-version",
        ),
        pytest.param(
            labels(
                "enforce", "baseline", "enforce-version", "v1.20",
                "warn", "restricted", "warn-version", "v1.21",
                "audit", "restricted", "audit-version", "v1.22",
            ),
            Policy(
                LevelVersion(BASELINE, (1, 20)), LevelVersion(RESTRICTED, (1, 22)), LevelVersion(RESTRICTED, (1, 21))
            ),
            False,
            id="fully specd",
        ),
        pytest.param(labels("enforce", "baseline", "warn", "privileged"), Policy(LevelVersion(BASELINE), P, P), False,
                     id="enforce no warn"),
        pytest.param(labels("enforce", "baseline", "warn", "foo"), Policy(LevelVersion(BASELINE), P, P), True,
                     id="enforce warn error"),
        pytest.param(labels("enforce", "foo"), Policy(LevelVersion(RESTRICTED), P, P), True, id="enforce error"),
    ],
)  # fmt: skip
def test_policy_to_evaluate(given: dict[str, str], expect: Policy, expect_err: bool) -> None:
    policy, errors = ps.policy_to_evaluate(given)
    assert policy == expect
    assert bool(errors) is expect_err


@pytest.mark.parametrize(
    ("value", "expect"),
    [("latest", None), ("v1.0", (1, 0)), ("v1.1", (1, 1)), ("v1.20", (1, 20)), ("v1.10000", (1, 10000))],
)
def test_parse_version_successes(value: str, expect: ps.Version) -> None:
    assert ps.parse_version(value) == (expect, None)


@pytest.mark.parametrize("value", ["foo", "", "v2.0", "v1", "1.1"])
def test_parse_version_failures(value: str) -> None:
    assert ps.parse_version(value) == (None, 'must be "latest" or "v1.x"')


def test_label_errors_are_worded_as_field_errors() -> None:
    """appendErr: `metadata.labels[<label>]: Invalid value: "<value>": <why>`, one per label, in upstream's order."""
    _, errors = ps.policy_to_evaluate(labels("warn-version", "1.2", "enforce", "bogus"))
    assert [str(e) for e in errors] == [
        'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, '
        "baseline, restricted",
        'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.2": must be "latest" or "v1.x"',
    ]


# ------------------------------------------------------------------------------------------------ the checks


def c(name: str, **security: Any) -> Obj:
    """A container named `name` with the given securityContext fields (none: no securityContext)."""
    return {"name": name, "securityContext": security} if security else {"name": name}


def run_check(check_id: str, minor: int, spec: Obj, meta: Obj | None = None) -> ps.Result:
    check = next(k for k in ps.CHECKS if k.id == check_id)
    revision = check.at(minor)
    assert revision is not None
    return revision.check(meta or {}, spec)


CHECK_ROWS = [
    # check_runAsNonRoot_test.go TestRunAsNonRoot
    ("runAsNonRoot", 32, "no explicit runAsNonRoot", {"containers": [c("a")]},
     ("runAsNonRoot != true", 'pod or container "a" must set securityContext.runAsNonRoot=true')),
    ("runAsNonRoot", 32, "pod runAsNonRoot=false", {"securityContext": {"runAsNonRoot": False}, "containers": [c("a")]},
     ("runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false")),
    ("runAsNonRoot", 32, "containers runAsNonRoot=false",
     {"securityContext": {"runAsNonRoot": True}, "containers": [
         c("a"), {"name": "b", "securityContext": {}}, c("c", runAsNonRoot=False), c("d", runAsNonRoot=False),
         c("e", runAsNonRoot=True), c("f", runAsNonRoot=True)]},
     ("runAsNonRoot != true", 'containers "c", "d" must not set securityContext.runAsNonRoot=false')),
    ("runAsNonRoot", 32, "pod nil, container fallthrough",
     {"containers": [c("a"), {"name": "b", "securityContext": {}}, c("d", runAsNonRoot=True),
                     c("e", runAsNonRoot=True)]},
     ("runAsNonRoot != true", 'pod or containers "a", "b" must set securityContext.runAsNonRoot=true')),
    # check_capabilities_restricted_test.go TestCapabilitiesRestricted
    ("capabilities_restricted", 22, "multiple containers",
     {"containers": [
         c("a", capabilities={"add": ["FOO", "BAR"]}),
         c("b", capabilities={"add": ["BAR", "BAZ"]}),
         c("c", capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL", "FOO"]})]},
     ("unrestricted capabilities",
      'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b", "c" must not '
      'include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add')),
    # check_restrictedVolumes_test.go TestRestrictedVolumes (less a9, the `image` source v1.32 does not allow)
    ("restrictedVolumes", 32, "host path volumes",
     {"volumes": [{"name": f"a{i}", kind: {}} for i, kind in enumerate(
         ["emptyDir", "secret", "persistentVolumeClaim", "downwardAPI", "configMap", "projected", "csi", "ephemeral"],
         start=1)] + [{"name": f"b{i}", kind: {}} for i, kind in enumerate(
         ["hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd",
          "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk",
          "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos"], start=1)] + [{"name": "c1"}]},
     ("restricted volume types",
      'volumes "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15", '
      '"b16", "b17", "b18", "b19", "b20", "b21", "c1" use restricted volume types "awsElasticBlockStore", '
      '"azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", '
      '"glusterfs", "hostPath", "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", '
      '"scaleIO", "storageos", "unknown", "vsphereVolume"')),
    # check_hostPathVolumes_test.go TestHostPathVolumes
    ("hostPathVolumes", 32, "host path volumes",
     {"volumes": [{"name": "a", "hostPath": {}}, {"name": "b", "hostPath": {}}, {"name": "c", "emptyDir": {}}]},
     ("hostPath volumes", 'volumes "a", "b"')),
    # check_sysctls_test.go TestSysctls, TestSysctls_1_27
    ("sysctls", 0, "forbidden sysctls", {"securityContext": {"sysctls": [{"name": "a"}, {"name": "b"}]}},
     ("forbidden sysctls", "a, b")),
    ("sysctls", 0, "new supported sysctls not supported",
     {"securityContext": {"sysctls": [{"name": "net.ipv4.ip_local_reserved_ports", "value": "1024-4999"}]}},
     ("forbidden sysctls", "net.ipv4.ip_local_reserved_ports")),
    ("sysctls", 27, "new supported sysctls",
     {"securityContext": {"sysctls": [{"name": "net.ipv4.ip_local_reserved_ports", "value": "1024-4999"}]}}, None),
    # check_seLinuxOptions_test.go TestSELinuxOptions (the v1.31 revision)
    ("seLinuxOptions", 31, "invalid pod and containers",
     {"securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}}, "containers": [
         c("a", seLinuxOptions={"type": "container_t"}), c("b", seLinuxOptions={"type": "container_init_t"}),
         c("c", seLinuxOptions={"type": "container_kvm_t"}), c("d", seLinuxOptions={"type": "container_engine_t"}),
         c("e", seLinuxOptions={"type": "bar"}), c("f", seLinuxOptions={"user": "bar"}),
         c("g", seLinuxOptions={"role": "baz"})]},
     ("seLinuxOptions", 'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", '
                        '"foo"; user may not be set; role may not be set')),
    ("seLinuxOptions", 31, "invalid containers",
     {"securityContext": {"seLinuxOptions": {}}, "containers": [
         c("a", seLinuxOptions={"type": "container_t"}), c("e", seLinuxOptions={"type": "bar"}),
         c("f", seLinuxOptions={"user": "bar"}), c("g", seLinuxOptions={"role": "baz"})]},
     ("seLinuxOptions", 'containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: type "bar"; user may '
                        "not be set; role may not be set")),
    ("seLinuxOptions", 31, "bad type", {"securityContext": {"seLinuxOptions": {"type": "bad"}}},
     ("seLinuxOptions", 'pod set forbidden securityContext.seLinuxOptions: type "bad"')),
    ("seLinuxOptions", 31, "bad user", {"securityContext": {"seLinuxOptions": {"user": "bad"}}},
     ("seLinuxOptions", "pod set forbidden securityContext.seLinuxOptions: user may not be set")),
    ("seLinuxOptions", 31, "bad role", {"securityContext": {"seLinuxOptions": {"role": "bad"}}},
     ("seLinuxOptions", "pod set forbidden securityContext.seLinuxOptions: role may not be set")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "minor", "spec", "expect"),
    [pytest.param(row[0], row[1], row[3], row[4], id=f"{row[0]}/{row[2]}") for row in CHECK_ROWS],
)
def test_upstream_check_tables(check_id: str, minor: int, spec: Obj, expect: ps.Result) -> None:
    assert run_check(check_id, minor, spec) == expect


def test_se_linux_container_engine_type_is_allowed_from_1_31() -> None:
    """container_engine_t joined the allowed types in v1.31 (seLinuxOptions1_31); before, it is refused."""
    spec = {"containers": [c("d", seLinuxOptions={"type": "container_engine_t"})]}
    assert run_check("seLinuxOptions", 31, spec) is None
    assert run_check("seLinuxOptions", 30, spec) == (
        "seLinuxOptions",
        'container "d" set forbidden securityContext.seLinuxOptions: type "container_engine_t"',
    )


# ------------------------------------------------------------------------------------------------ aggregation

BUSYBOX: Obj = {"containers": [{"name": "x", "image": "busybox"}]}

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


def test_restricted_message_for_a_plain_container() -> None:
    """The warning every user of `restricted` meets first: the restricted checks in ID order."""
    results = ps.evaluate(LevelVersion(RESTRICTED), {}, BUSYBOX)
    assert ps.forbidden_detail(results) == (
        'allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), '
        'unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), '
        'runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), '
        'seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost")'
    )
    assert ps.forbidden_reason(results) == (
        "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
    )
    assert ps.evaluate(LevelVersion(BASELINE), {}, BUSYBOX) == []
    assert ps.evaluate(LevelVersion(RESTRICTED), {}, COMPLIANT) == []


def test_baseline_checks_come_first_and_restricted_overrides_drop_their_baseline_twins() -> None:
    """registry.go: baseline checks (by ID) then restricted ones (by ID); at restricted, capabilities_restricted,
    restrictedVolumes and seccompProfile_restricted replace capabilities_baseline, hostPathVolumes and
    seccompProfile_baseline."""
    spec = {
        "hostNetwork": True,
        "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "Unconfined"}},
        "containers": [
            {
                "name": "x",
                "securityContext": {
                    "privileged": True,
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
                },
                "ports": [{"containerPort": 80, "hostPort": 8080}],
            }
        ],
    }
    baseline = [reason for reason, _ in ps.evaluate(LevelVersion(BASELINE), {}, spec)]
    assert baseline == [
        "non-default capabilities",
        "host namespaces",
        "hostPath volumes",
        "hostPort",
        "privileged",
        "seccompProfile",
    ]
    restricted = ps.evaluate(LevelVersion(RESTRICTED), {}, spec)
    assert [reason for reason, _ in restricted] == [
        "host namespaces",
        "hostPort",
        "privileged",
        "unrestricted capabilities",
        "restricted volume types",
        "seccompProfile",
    ]
    assert ps.forbidden_detail(restricted) == (
        'host namespaces (hostNetwork=true), hostPort (container "x" uses hostPort 8080), privileged (container "x" '
        'must not set securityContext.privileged=true), unrestricted capabilities (container "x" must not include '
        '"SYS_ADMIN" in securityContext.capabilities.add), restricted volume types (volume "host" uses restricted '
        'volume type "hostPath"), seccompProfile (pod must not set securityContext.seccompProfile.type to '
        '"Unconfined")'
    )


def test_versions_pick_each_checks_revision() -> None:
    """A version label evaluates the checks as they were then: before v1.8 privilege escalation is not checked,
    before v1.22 capabilities and before v1.19 seccomp are not (restricted); from v1.25 Windows pods skip the
    Linux-only restricted checks; a version newer than every check is `latest`."""
    reasons = lambda lv, spec: [r for r, _ in ps.evaluate(lv, {}, spec)]  # noqa: E731
    assert reasons(LevelVersion(RESTRICTED, (1, 7)), BUSYBOX) == ["runAsNonRoot != true"]
    assert reasons(LevelVersion(RESTRICTED, (1, 21)), BUSYBOX) == [
        "allowPrivilegeEscalation != false",
        "runAsNonRoot != true",
        "seccompProfile",
    ]
    windows = {**BUSYBOX, "os": {"name": "windows"}}
    assert reasons(LevelVersion(RESTRICTED, (1, 24)), windows) == reasons(LevelVersion(RESTRICTED, (1, 24)), BUSYBOX)
    assert reasons(LevelVersion(RESTRICTED, (1, 25)), windows) == ["runAsNonRoot != true"]
    assert ps.evaluate(LevelVersion(RESTRICTED, (1, 99)), {}, BUSYBOX) == ps.evaluate(
        LevelVersion(RESTRICTED), {}, BUSYBOX
    )
    assert str(LevelVersion(RESTRICTED, (1, 99))) == "restricted:v1.99"


def test_privileged_allows_everything() -> None:
    spec = {"hostPID": True, "containers": [c("x", privileged=True)]}
    assert ps.evaluate(LevelVersion(PRIVILEGED), {}, spec) == []


@pytest.mark.parametrize(
    ("spec", "meta", "expect"),
    [
        pytest.param(
            {"containers": [c("a", procMount="Unmasked")]},
            {},
            ("procMount", 'container "a" must not set securityContext.procMount to "Unmasked"'),
            id="procMount",
        ),
        pytest.param(
            {"hostIPC": True, "hostPID": True, "hostNetwork": True},
            {},
            ("host namespaces", "hostNetwork=true, hostPID=true, hostIPC=true"),
            id="hostNamespaces/multiple host namespaces",
        ),
        pytest.param(
            {"containers": [c("a", windowsOptions={"hostProcess": True})]},
            {},
            ("hostProcess", 'container "a" must not set securityContext.windowsOptions.hostProcess=true'),
            id="windowsHostProcess",
        ),
        pytest.param(
            {"containers": [c("a", appArmorProfile={"type": "Unconfined"})]},
            {"annotations": {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
            (
                "forbidden AppArmor profiles",
                'container "a" and annotation must not set AppArmor profile type to "Unconfined", '
                '"container.apparmor.security.beta.kubernetes.io/a="unconfined""',
            ),
            id="appArmorProfile",
        ),
        pytest.param(
            {"containers": [c("a", runAsUser=0), c("b", runAsUser=1000)], "securityContext": {"runAsUser": 0}},
            {},
            ("runAsUser=0", 'pod and container "a" must not set runAsUser=0'),
            id="runAsUser",
        ),
    ],
)
def test_other_checks(spec: Obj, meta: Obj, expect: ps.Result) -> None:
    """The other checks' wording, each alone (the only violation at restricted:latest besides the plain
    container's four)."""
    results = ps.evaluate(
        LevelVersion(RESTRICTED),
        meta,
        {**COMPLIANT, **spec, "containers": spec.get("containers") or COMPLIANT["containers"]},
    )
    others = [r for r in results if r[0] not in dict(ps.evaluate(LevelVersion(RESTRICTED), {}, BUSYBOX))]
    assert others == [expect]
