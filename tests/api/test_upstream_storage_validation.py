"""Upstream's PersistentVolume, PersistentVolumeClaim and StorageClass validation tables (docs/storage.md).

pkg/apis/core/validation/validation_test.go (`TestValidatePersistentVolumes`, `testValidatePVC` through
`TestValidatePersistentVolumeClaim`, `TestAlphaPVVolumeModeUpdate`) and pkg/apis/storage/validation/
validation_test.go (`TestValidateStorageClass`). Upstream checks only whether there were errors; these ports
call kjobs' validators on the row's object (as upstream calls `ValidatePersistentVolume` and friends, without
defaulting) and check the `(field, type)` of every error, so a wrong path fails too. Rows upstream writes with
Go-only fields (uid, managedFields...) are kept when their JSON means the same.
"""

from __future__ import annotations

from typing import Any

import pytest

from kjobs.api import storage
from kjobs.api.types import Obj

GOOD_PV_SOURCE = {"hostPath": {"path": "/foo", "type": "Directory"}}


def pv(name: str = "foo", namespace: str = "", **spec: Any) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "spec": spec}


def good(**extra: Any) -> Obj:
    return {"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"], **GOOD_PV_SOURCE, **extra}


def errors(found: list[Any]) -> list[tuple[str, str]]:
    return [(e.field, e.type.value) for e in found]


NODE_AFFINITY = {
    "required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]}
}
LOCAL = {"local": {"path": "/foo"}}

PV_ROWS = [
    pytest.param(pv(**good()), [], id="good-volume"),
    pytest.param(pv(**good(capacity={"storage": "10Gi"})), [], id="good-volume-with-capacity-unit"),
    pytest.param(pv(**good(capacity={"storage": "10"})), [], id="good-volume-without-capacity-unit"),
    pytest.param(pv(**good(storageClassName="valid")), [], id="good-volume-with-storage-class"),
    pytest.param(pv(**good(persistentVolumeReclaimPolicy="Retain")), [], id="good-volume-with-retain-policy"),
    pytest.param(pv(**good(volumeMode="Filesystem")), [], id="good-volume-with-volume-mode"),
    pytest.param(
        pv(**good(accessModes=["fakemode"])), [("spec.accessModes", "FieldValueNotSupported")], id="invalid-accessmode"
    ),
    pytest.param(
        pv(**good(persistentVolumeReclaimPolicy="fakeReclaimPolicy")),
        [("spec.persistentVolumeReclaimPolicy", "FieldValueNotSupported")],
        id="invalid-reclaimpolicy",
    ),
    pytest.param(
        pv(**good(volumeMode="fakeVolumeMode")),
        [("spec.volumeMode", "FieldValueNotSupported")],
        id="invalid-volume-mode",
    ),
    pytest.param(pv(**good(accessModes=["ReadWriteOncePod"])), [], id="with-read-write-once-pod"),
    pytest.param(
        pv(**good(accessModes=["ReadWriteOncePod", "ReadWriteMany"])),
        [("spec.accessModes", "FieldValueForbidden")],
        id="with-read-write-once-pod-and-others",
    ),
    pytest.param(
        pv(namespace="unexpected-namespace", **good()),
        [("metadata.namespace", "FieldValueForbidden")],
        id="unexpected-namespace",
    ),
    pytest.param(
        pv(capacity={"storage": "10G"}, accessModes=["ReadWriteOnce"]),
        [("spec", "FieldValueRequired")],
        id="missing-volume-source",
    ),
    pytest.param(
        pv("123*Bad(Name", "unexpected-namespace", **good()),
        [("metadata.name", "FieldValueInvalid"), ("metadata.namespace", "FieldValueForbidden")],
        id="bad-name",
    ),
    pytest.param(pv("", **good()), [("metadata.name", "FieldValueRequired")], id="missing-name"),
    pytest.param(
        pv(accessModes=["ReadWriteOnce"], **GOOD_PV_SOURCE),
        [("spec.capacity", "FieldValueRequired"), ("spec.capacity", "FieldValueNotSupported")],
        id="missing-capacity",
    ),
    pytest.param(
        pv(**good(capacity={"storage": "0"})),
        [("spec.capacity[storage]", "FieldValueInvalid")],
        id="bad-volume-zero-capacity",
    ),
    pytest.param(
        pv("goodname", "missing-accessmodes", capacity={"storage": "10G"}, **GOOD_PV_SOURCE),
        [("metadata.namespace", "FieldValueForbidden"), ("spec.accessModes", "FieldValueRequired")],
        id="missing-accessmodes",
    ),
    pytest.param(
        pv(capacity={"storage": "5G"}, **GOOD_PV_SOURCE, gcePersistentDisk={"pdName": "foo", "fsType": "ext4"}),
        [("spec.accessModes", "FieldValueRequired"), ("spec.gcePersistentDisk", "FieldValueForbidden")],
        id="too-many-sources",
    ),
    pytest.param(
        pv(
            "bad-recycle-do-not-want",
            **good(hostPath={"path": "/", "type": "Directory"}, persistentVolumeReclaimPolicy="Recycle"),
        ),
        [("spec.persistentVolumeReclaimPolicy", "FieldValueForbidden")],
        id="host mount of / with recycle reclaim policy",
    ),
    pytest.param(
        pv(
            "bad-recycle-do-not-want",
            **good(hostPath={"path": "/a/..", "type": "Directory"}, persistentVolumeReclaimPolicy="Recycle"),
        ),
        [("spec.hostPath.path", "FieldValueInvalid"), ("spec.persistentVolumeReclaimPolicy", "FieldValueForbidden")],
        id="host mount of / with recycle reclaim policy 2",
    ),
    pytest.param(
        pv("invalid-storage-class-name", **good(storageClassName="-invalid-")),
        [("spec.storageClassName", "FieldValueInvalid")],
        id="invalid-storage-class-name",
    ),
    pytest.param(
        pv(**good(hostPath={"path": "/foo/..", "type": "Directory"}, storageClassName="backstep-hostpath")),
        [("spec.hostPath.path", "FieldValueInvalid")],
        id="bad-hostpath-volume-backsteps",
    ),
    pytest.param(
        pv(capacity={"storage": "10G"}, accessModes=["ReadWriteOnce"], nodeAffinity=NODE_AFFINITY, **LOCAL),
        [],
        id="volume-node-affinity",
    ),
    pytest.param(
        pv(capacity={"storage": "10G"}, accessModes=["ReadWriteOnce"], nodeAffinity={}, **LOCAL),
        [("spec.nodeAffinity.required", "FieldValueRequired")],
        id="volume-empty-node-affinity",
    ),
]


PV_ROWS += [
    pytest.param(
        pv(
            capacity={"storage": "10G"},
            accessModes=["ReadWriteOnce"],
            nodeAffinity={
                "required": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"operator": "In", "values": ["test-label-value"]}]}]
                }
            },
            **LOCAL,
        ),
        # IsQualifiedName("") says both "name part must be non-empty" and what a name part must consist of
        [("spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].key", "FieldValueInvalid")] * 2,
        id="volume-bad-node-affinity",
    ),
    pytest.param(
        pv(
            "invalid-volume-attributes-class-name",
            **good(storageClassName="invalid", volumeAttributesClassName="-invalid-"),
        ),
        [("spec.volumeAttributesClassName", "FieldValueInvalid"), ("spec.csi", "FieldValueRequired")],
        id="invalid-volume-attributes-class-name",
    ),
    pytest.param(
        pv(
            "invalid-empty-volume-attributes-class-name",
            **good(storageClassName="invalid", volumeAttributesClassName=""),
        ),
        [("spec.volumeAttributesClassName", "FieldValueRequired"), ("spec.csi", "FieldValueRequired")],
        id="invalid-empty-volume-attributes-class-name",
    ),
    pytest.param(
        pv(
            capacity={"storage": "10G"},
            accessModes=["ReadWriteOnce"],
            csi={"driver": "test-driver", "volumeHandle": "test-123"},
            storageClassName="valid",
            volumeAttributesClassName="valid",
        ),
        [],
        id="volume-with-good-volume-attributes-class-and-matched-volume-resource-when-feature-gate-is-on",
    ),
    pytest.param(
        pv(**good(storageClassName="valid", volumeAttributesClassName="valid")),
        [("spec.csi", "FieldValueRequired")],
        id="volume-with-good-volume-attributes-class-and-mismatched-volume-resource-when-feature-gate-is-on",
    ),
]


@pytest.mark.parametrize(("volume", "want"), PV_ROWS)
def test_validate_persistent_volumes(volume: Obj, want: list[tuple[str, str]]) -> None:
    """TestValidatePersistentVolumes (the hostPath rows; the node affinity ones with a `local` volume)."""
    assert sorted(errors(storage.validate_persistent_volume(volume))) == sorted(want)


def test_local_volume_requires_node_affinity() -> None:
    """`Local volume requires node affinity`, at spec.nodeAffinity."""
    found = storage.validate_persistent_volume(pv(capacity={"storage": "1G"}, accessModes=["ReadWriteOnce"], **LOCAL))
    assert [str(e) for e in found] == ["spec.nodeAffinity: Required value: Local volume requires node affinity"]


GOOD_CLAIM_SPEC: Obj = {
    "selector": {"matchExpressions": [{"key": "key2", "operator": "Exists"}]},
    "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
    "resources": {"requests": {"storage": "10G"}},
    "storageClassName": "valid",
    "volumeMode": "Filesystem",
}


def claim(name: str = "foo", namespace: str = "ns", spec: Obj | None = None, **meta: Any) -> Obj:
    metadata: Obj = {**meta}
    if name:
        metadata["name"] = name
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata, "spec": dict(GOOD_CLAIM_SPEC if spec is None else spec)}


def request(storage_value: str, **extra: Any) -> Obj:
    return {"resources": {"requests": {"storage": storage_value}}, **extra}


PVC_ROWS = [
    pytest.param(claim(), [], id="good-claim"),
    pytest.param(claim(""), [("metadata.name", "FieldValueRequired")], id="missing-name"),
    pytest.param(claim(namespace=""), [("metadata.namespace", "FieldValueRequired")], id="missing-namespace"),
    pytest.param(claim(generateName="pvc-"), [], id="with-generate-name"),
    pytest.param(claim(uid="ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"), [], id="with-uid"),
    pytest.param(claim(resourceVersion="1"), [], id="with-resource-version"),
    pytest.param(claim(generation=100), [], id="with-generation"),
    pytest.param(claim(deletionGracePeriodSeconds=10), [], id="with-deletion-grace-period-seconds"),
    pytest.param(
        claim(ownerReferences=[{"apiVersion": "v1", "kind": "pod", "name": "foo", "uid": "ac051fac"}]),
        [],
        id="with-owner-references",
    ),
    pytest.param(claim(finalizers=["example.com/foo"]), [], id="with-finalizers"),
    pytest.param(claim(labels={"apps.kubernetes.io/name": "test"}), [], id="with-good-labels"),
    pytest.param(
        claim(labels={"hello-world": "hyphen not allowed"}),
        [("metadata.labels", "FieldValueInvalid")],
        id="with-bad-labels",
    ),
    pytest.param(claim(labels={"foo": "bar"}), [], id="with-good-annotations"),
    pytest.param(
        claim(spec={"accessModes": ["ReadWriteOncePod"], **request("10G")}), [], id="with-read-write-once-pod"
    ),
    pytest.param(
        claim(spec={"accessModes": ["ReadWriteOncePod", "ReadWriteMany"], **request("10G")}),
        [("spec.accessModes", "FieldValueForbidden")],
        id="with-read-write-once-pod-and-others",
    ),
    pytest.param(
        claim(spec={**GOOD_CLAIM_SPEC, **request("0G")}),
        [("spec.resources[storage]", "FieldValueInvalid")],
        id="invalid-claim-zero-capacity",
    ),
    pytest.param(
        claim(
            spec={
                "selector": {"matchExpressions": [{"key": "key2", "operator": "InvalidOp", "values": ["v1", "v2"]}]},
                "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                **request("10G"),
            }
        ),
        [("spec.selector.matchExpressions[0].operator", "FieldValueInvalid")],
        id="invalid-label-selector",
    ),
    pytest.param(
        claim(spec={"accessModes": ["fakemode"], **request("10G")}),
        [("spec.accessModes", "FieldValueNotSupported")],
        id="invalid-accessmode",
    ),
    pytest.param(claim(spec=request("10G")), [("spec.accessModes", "FieldValueRequired")], id="no-access-modes"),
    pytest.param(
        claim(spec={"accessModes": ["ReadWriteOnce"]}),
        [("spec.resources[storage]", "FieldValueRequired")],
        id="no-resource-requests",
    ),
    pytest.param(
        claim(spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"memory": "10G"}}}),
        [("spec.resources[storage]", "FieldValueRequired")],
        id="invalid-resource-requests",
    ),
    pytest.param(
        claim(spec={**GOOD_CLAIM_SPEC, **request("-10G")}),
        [("spec.resources[storage]", "FieldValueInvalid")],
        id="negative-storage-request",
    ),
    pytest.param(
        claim(spec={**GOOD_CLAIM_SPEC, **request("0G")}),
        [("spec.resources[storage]", "FieldValueInvalid")],
        id="zero-storage-request",
    ),
    pytest.param(
        claim(spec={**GOOD_CLAIM_SPEC, "storageClassName": "-invalid-"}),
        [("spec.storageClassName", "FieldValueInvalid")],
        id="invalid-storage-class-name",
    ),
    pytest.param(
        claim(spec={"accessModes": ["ReadWriteOnce"], **request("10G"), "volumeMode": "fakeVolumeMode"}),
        [("spec.volumeMode", "FieldValueNotSupported")],
        id="invalid-volume-mode",
    ),
    pytest.param(
        claim(
            spec={
                "accessModes": ["ReadWriteOnce"],
                **request("10G"),
                "dataSource": {"kind": "PersistentVolumeClaim", "name": "pvc1"},
                "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "pvc2"},
            }
        ),
        [("spec", "FieldValueInvalid")],
        id="mismatch-data-source-and-ref",
    ),
    pytest.param(
        claim(
            spec={
                "accessModes": ["ReadWriteOnce"],
                **request("10G"),
                "dataSource": {"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"},
            }
        ),
        [("spec.dataSource.apiGroup", "FieldValueInvalid")],
        id="invaild-apigroup-in-data-source",
    ),
    pytest.param(
        claim(
            spec={
                "accessModes": ["ReadWriteOnce"],
                **request("10G"),
                "dataSourceRef": {"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"},
            }
        ),
        [("spec.dataSourceRef.apiGroup", "FieldValueInvalid")],
        id="invaild-apigroup-in-data-source-ref",
    ),
    pytest.param(
        claim(spec={**GOOD_CLAIM_SPEC, "volumeAttributesClassName": "-invalid-"}),
        [("spec.volumeAttributesClassName", "FieldValueInvalid")],
        id="invalid-volume-attributes-class-name",
    ),
]


@pytest.mark.parametrize(("pvc", "want"), PVC_ROWS)
def test_validate_persistent_volume_claim(pvc: Obj, want: list[tuple[str, str]]) -> None:
    """TestValidatePersistentVolumeClaim (testValidatePVC, not ephemeral; the creationTimestamp and managedFields
    rows are server-set fields here, cleared before validation)."""
    assert sorted(errors(storage.validate_persistent_volume_claim(pvc))) == sorted(want)


def vol_mode_pv(mode: str | None) -> Obj:
    spec = good()
    if mode is not None:
        spec["volumeMode"] = mode
    return pv("pv", **spec) | {"metadata": {"name": "pv", "resourceVersion": "1"}}


VOLUME_MODE_ROWS = [
    pytest.param("Block", "Block", False, id="valid-update-volume-mode-block-to-block"),
    pytest.param("Filesystem", "Filesystem", False, id="valid-update-volume-mode-file-to-file"),
    pytest.param("Filesystem", "Block", True, id="invalid-update-volume-mode-to-block"),
    pytest.param("Block", "Filesystem", True, id="invalid-update-volume-mode-to-file"),
    pytest.param(None, "Filesystem", True, id="invalid-update-volume-mode-nil-to-file"),
    pytest.param(None, "Block", True, id="invalid-update-volume-mode-nil-to-block"),
    pytest.param("Filesystem", None, True, id="invalid-update-volume-mode-file-to-nil"),
    pytest.param("Block", None, True, id="invalid-update-volume-mode-block-to-nil"),
]


@pytest.mark.parametrize(("old", "new", "fails"), VOLUME_MODE_ROWS)
def test_alpha_pv_volume_mode_update(old: str | None, new: str | None, fails: bool) -> None:
    """TestAlphaPVVolumeModeUpdate: volumeMode is immutable, at upstream's path `volumeMode`."""
    found = storage.validate_persistent_volume_update(vol_mode_pv(new), vol_mode_pv(old))
    assert errors(found) == ([("volumeMode", "FieldValueInvalid")] if fails else [])


def test_pv_source_immutable() -> None:
    """ValidatePersistentVolumeUpdate: the source may not change (`spec.persistentvolumesource`)."""
    old = vol_mode_pv("Filesystem")
    new = vol_mode_pv("Filesystem")
    new["spec"]["hostPath"] = {"path": "/elsewhere", "type": "Directory"}
    found = storage.validate_persistent_volume_update(new, old)
    assert errors(found) == [("spec.persistentvolumesource", "FieldValueForbidden")]
    assert found[0].detail.startswith("spec.persistentvolumesource is immutable after creation\n")


def source_volume(**source: Any) -> Obj:
    body = pv(capacity={"storage": "1G"}, accessModes=["ReadWriteOnce"], storageClassName="valid", **source)
    body["metadata"]["resourceVersion"] = "1"
    return body


HOST_FOO = {"hostPath": {"path": "/foo", "type": "Directory"}}
CSI = {"driver": "come.google.gcepd", "volumeHandle": "foobar"}
EXPAND = {"name": "expansion-secret", "namespace": "default"}
SOURCE_UPDATE_ROWS = [
    pytest.param(HOST_FOO, HOST_FOO, False, id="condition-no-update"),
    pytest.param(
        HOST_FOO,
        {"flexVolume": {"driver": "kubernetes.io/blue", "fsType": "ext4"}},
        True,
        id="condition-update-source-type",
    ),
    pytest.param(
        HOST_FOO, {"hostPath": {"path": "/updated", "type": "Directory"}}, True, id="condition-update-source-deep"
    ),
    pytest.param(
        {"csi": CSI},
        {"csi": {**CSI, "controllerExpandSecretRef": EXPAND}},
        False,
        id="csi-expansion-enabled-with-pv-secret",
    ),
    pytest.param(
        {"csi": {**CSI, "controllerExpandSecretRef": EXPAND}},
        {"csi": {**CSI, "controllerExpandSecretRef": {"name": "foo-secret", "namespace": "default"}}},
        True,
        id="csi-expansion-enabled-with-old-pv-secret",
    ),
    pytest.param(
        {"csi": CSI},
        {"csi": {**CSI, "controllerPublishSecretRef": {"name": "key-name", "namespace": "default"}}},
        True,
        id="csi-cntrlpublish-enabled-with-shortSecretRef",
    ),
]


@pytest.mark.parametrize(("old", "new", "fails"), SOURCE_UPDATE_ROWS)
def test_validate_persistent_volume_source_update(old: Obj, new: Obj, fails: bool) -> None:
    """TestValidatePersistentVolumeSourceUpdate (its first rows): the source is immutable, except that a CSI
    volume's controllerExpandSecretRef may be set where it was not."""
    found = errors(storage.validate_persistent_volume_update(source_volume(**new), source_volume(**old)))
    assert found == ([("spec.persistentvolumesource", "FieldValueForbidden")] if fails else [])


def bound_claim(storage_value: str = "10G", phase: str = "Bound", **spec: Any) -> Obj:
    body = claim(spec={**GOOD_CLAIM_SPEC, **request(storage_value), **spec})
    body["metadata"]["resourceVersion"] = "1"
    body["status"] = {"phase": phase}
    return body


PVC_UPDATE_ROWS = [
    pytest.param(bound_claim(), bound_claim(), [], id="no change"),
    pytest.param(bound_claim(phase="Pending"), bound_claim(phase="Pending", volumeName="pv"), [], id="volumeName once"),
    pytest.param(
        bound_claim(volumeName="pv"),
        bound_claim(volumeName="other"),
        [("spec", "FieldValueForbidden")],
        id="volumeName twice",
    ),
    pytest.param(bound_claim(), bound_claim("20G"), [], id="grow a bound claim"),
    pytest.param(
        bound_claim(phase="Pending"),
        bound_claim("20G", phase="Pending"),
        [("spec", "FieldValueForbidden")],
        id="grow an unbound claim",
    ),
    pytest.param(
        bound_claim("20G"),
        bound_claim("10G"),
        [("spec.resources.requests.storage", "FieldValueForbidden")],
        id="shrink",
    ),
    pytest.param(
        bound_claim(), bound_claim(accessModes=["ReadWriteOnce"]), [("spec", "FieldValueForbidden")], id="access modes"
    ),
    pytest.param(
        bound_claim(volumeMode="Filesystem"),
        bound_claim(volumeMode="Block"),
        [("spec", "FieldValueForbidden"), ("volumeMode", "FieldValueInvalid")],
        id="volume mode",
    ),
]


@pytest.mark.parametrize(("old", "new", "want"), PVC_UPDATE_ROWS)
def test_validate_persistent_volume_claim_update(old: Obj, new: Obj, want: list[tuple[str, str]]) -> None:
    """ValidatePersistentVolumeClaimUpdate's rules (kjobs' own rows): the spec is immutable except a first
    volumeName and a bound claim's growing request."""
    assert sorted(errors(storage.validate_persistent_volume_claim_update(new, old))) == sorted(want)


def test_claim_class_may_be_set_once_from_nil() -> None:
    """validateStorageClassUpgradeFromNil: a claim without a class may be given one."""
    old = bound_claim(phase="Pending")
    del old["spec"]["storageClassName"]
    new = bound_claim(phase="Pending", storageClassName="fast")
    assert storage.validate_persistent_volume_claim_update(new, old) == []
    changed = bound_claim(phase="Pending", storageClassName="slow")
    assert errors(storage.validate_persistent_volume_claim_update(changed, new)) == [("spec", "FieldValueForbidden")]


def sc(name: str = "foo", namespace: str = "", **fields: Any) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, **fields}


def _long_parameters() -> dict[str, str]:
    params: dict[str, str] = {}
    total = 0
    while total < storage.MAX_PROVISIONER_PARAMETER_SIZE:
        key, value = f"param/{total}", f"value-{total}"
        params[key] = value
        total += len(key) + len(value)
    return params


SC_ROWS = [
    pytest.param(
        sc(
            provisioner="kubernetes.io/foo-provisioner",
            parameters={},
            reclaimPolicy="Delete",
            volumeBindingMode="Immediate",
        ),
        [],
        id="empty parameters",
    ),
    pytest.param(
        sc(provisioner="kubernetes.io/foo-provisioner", reclaimPolicy="Delete", volumeBindingMode="Immediate"),
        [],
        id="nil parameters",
    ),
    pytest.param(
        sc(
            provisioner="kubernetes.io/foo-provisioner",
            parameters={
                "kubernetes.io/foo-parameter": "free/form/string",
                "foo-parameter": "free-form-string",
                "foo-parameter2": '{"embedded": "json", "with": {"structures":"inside"}}',
            },
            reclaimPolicy="Delete",
            volumeBindingMode="Immediate",
        ),
        [],
        id="some parameters",
    ),
    pytest.param(
        sc(provisioner="kubernetes.io/foo-provisioner", reclaimPolicy="Retain", volumeBindingMode="Immediate"),
        [],
        id="retain reclaimPolicy",
    ),
    # the error rows have no volumeBindingMode: upstream's errors include its Required one, as here
    pytest.param(
        sc(namespace="bar", provisioner="kubernetes.io/foo-provisioner", reclaimPolicy="Delete"),
        [("metadata.namespace", "FieldValueForbidden"), ("volumeBindingMode", "FieldValueRequired")],
        id="namespace is present",
    ),
    pytest.param(
        sc(provisioner="kubernetes.io/invalid/provisioner", reclaimPolicy="Delete"),
        [("provisioner", "FieldValueInvalid"), ("volumeBindingMode", "FieldValueRequired")],
        id="invalid provisioner",
    ),
    pytest.param(
        sc(provisioner="kubernetes.io/foo", parameters={"": "value"}, reclaimPolicy="Delete"),
        [("parameters", "FieldValueInvalid"), ("volumeBindingMode", "FieldValueRequired")],
        id="invalid empty parameter name",
    ),
    pytest.param(
        sc(provisioner="", reclaimPolicy="Delete"),
        [("provisioner", "FieldValueRequired"), ("volumeBindingMode", "FieldValueRequired")],
        id="provisioner: Required value",
    ),
    pytest.param(
        sc(provisioner="kubernetes.io/foo", parameters=_long_parameters(), reclaimPolicy="Delete"),
        [("parameters", "FieldValueTooLong"), ("volumeBindingMode", "FieldValueRequired")],
        id="too long parameters",
    ),
    pytest.param(
        sc(provisioner="kubernetes.io/foo", reclaimPolicy="Recycle"),
        [("reclaimPolicy", "FieldValueNotSupported"), ("volumeBindingMode", "FieldValueRequired")],
        id="invalid reclaimpolicy",
    ),
]


@pytest.mark.parametrize(("body", "want"), SC_ROWS)
def test_validate_storage_class(body: Obj, want: list[tuple[str, str]]) -> None:
    """TestValidateStorageClass (successCases, then errorCases by name)."""
    assert sorted(errors(storage.validate_storage_class(body))) == sorted(want)


def test_storage_class_update_rules() -> None:
    """ValidateStorageClassUpdate: parameters, provisioner, reclaim policy and binding mode are fixed."""
    old = sc(provisioner="a.io/x", reclaimPolicy="Delete", volumeBindingMode="Immediate", parameters={"k": "v"})
    old["metadata"]["resourceVersion"] = "1"
    new = sc(provisioner="b.io/x", reclaimPolicy="Retain", volumeBindingMode="WaitForFirstConsumer", parameters={})
    new["metadata"]["resourceVersion"] = "1"
    found = storage.validate_storage_class_update(new, old)
    assert [str(e) for e in found] == [
        "parameters: Forbidden: updates to parameters are forbidden.",
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]


def test_defaults() -> None:
    """SetDefaults_PersistentVolume(Claim), SetDefaults_HostPathVolumeSource, SetDefaults_StorageClass."""
    volume = storage.default_persistent_volume_in_place(pv(**good(hostPath={"path": "/x"})) | {"status": {}})
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert volume["spec"]["volumeMode"] == "Filesystem"
    assert volume["spec"]["hostPath"]["type"] == ""
    assert volume["status"]["phase"] == "Pending"
    pvc = storage.default_persistent_volume_claim_in_place(claim(spec=request("1Gi")) | {"status": {}})
    assert pvc["spec"]["volumeMode"] == "Filesystem" and pvc["status"]["phase"] == "Pending"
    cls = storage.default_storage_class_in_place(sc(provisioner="x.io/y"))
    assert (cls["reclaimPolicy"], cls["volumeBindingMode"]) == ("Delete", "Immediate")


def test_host_path() -> None:
    """kjobs.storage.host_path: the directory of a hostPath or local volume, None otherwise."""
    from kjobs.storage import host_path

    assert host_path(pv(**good())) == "/foo"
    assert host_path(pv(**LOCAL)) == "/foo"
    assert host_path(pv(nfs={"server": "s", "path": "/e"})) is None
    assert host_path({}) is None
