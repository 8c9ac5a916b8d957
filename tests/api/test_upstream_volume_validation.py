"""Rows of Kubernetes' volume-source tables, met through a Job's pod template.

Each table is named after its upstream test in pkg/apis/core/validation/validation_test.go (kubernetes commit
000f26050b9b): `TestValidateVolumes`, `TestValidateCSIVolumeSource`, `TestValidateNFSVolumeSource`,
`TestValidateGlusterfs`, `TestValidateKeyToPath` and the ephemeral half of `testValidatePVC`
(`TestValidateEphemeralVolume`); docs/upstream-pod-validation.md lists what is ported and left out. A row's
volume goes into a created Job's `spec.template.spec.volumes` after defaulting (upstream validates the row as
written), and the errors are compared whole — path, type, bad value, detail and order — as kube-apiserver renders
them, where upstream asks only for the type and field. Rows named `kjobs:` are kjobs' own, for rules upstream
exercises only through other tables (downward API selectors, projected sources, image mounts).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kjobs.api.disabled_fields import drop_disabled_job_fields
from kjobs.api.errors import ApiError
from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj
from kjobs.api.validation import validate_pod
from kjobs.api.validation_formats import inclusive_range_error, is_dns1123_label, is_dns1123_subdomain, is_label_value
from kjobs.client.resources import JOBS
from tests.api.job_fixtures import api_job
from tests.api.test_upstream_pod_validation import _ctr, _pod, _template_errors
from tests.api.upstream_validation_support import causes, run

MODE = "must be a number between 0 and 0777 (octal), both inclusive"
HOST_PATH_TYPES = '"", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"'
QUOBYTE = "must be a host:port pair or multiple pairs separated by commas"
VALID_INITIATOR = "iqn.2015-02.example.com:init"
DOWNWARD_FIELDS = '"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"'
BYTE_DIVISORS = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def _errors(*volumes: Obj, **spec: Any) -> list[str]:
    return [str(e) for e in _template_errors(volumes=list(volumes), **spec)]


def _label(name: str) -> str:
    return is_dns1123_label(name)[0]


def _subdomain(name: str) -> str:
    return is_dns1123_subdomain(name)[0]


def _iscsi(**fields: Any) -> Obj:
    return {
        "name": "iscsi",
        "iscsi": {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test", "lun": 1, "fsType": "ext4"}
        | fields,
    }


def _downward(*items: Obj, **fields: Any) -> Obj:
    return {"name": "downapi", "downwardAPI": ({"items": list(items)} if items else {}) | fields}


def _labels_file(path: str, **fields: Any) -> Obj:
    return {"path": path, "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}} | fields


def _resource_file(path: str, resource: str, **ref: Any) -> Obj:
    return {"path": path, "resourceFieldRef": {"containerName": "test-container", "resource": resource} | ref}


def _quobyte(**fields: Any) -> Obj:
    return {"name": "quobyte", "quobyte": fields}


def _fc(**fields: Any) -> Obj:
    return {"name": "fc", "fc": {"fsType": "ext4"} | fields}


# --- TestValidateVolumes ---------------------------------------------------------------------------------------

VALID = [
    pytest.param({"name": "empty", "emptyDir": {}}, id="valid alpha name"),
    pytest.param({"name": "123", "emptyDir": {}}, id="valid num name"),
    pytest.param({"name": "empty-123", "emptyDir": {}}, id="valid alphanum name"),
    pytest.param({"name": "123-empty", "emptyDir": {}}, id="valid numalpha name"),
    pytest.param({"name": "hostpath", "hostPath": {"path": "/mnt/path", "type": "Directory"}}, id="default HostPath"),
    pytest.param({"name": "hostpath", "hostPath": {"path": "/mnt/path", "type": "Socket"}}, id="valid HostPath"),
    pytest.param(
        {"name": "gce-pd", "gcePersistentDisk": {"pdName": "my-PD", "fsType": "ext4", "partition": 1}},
        id="valid GcePersistentDisk",
    ),
    pytest.param(
        {"name": "aws-ebs", "awsElasticBlockStore": {"volumeID": "my-PD", "fsType": "ext4", "partition": 1}},
        id="valid AWSElasticBlockStore",
    ),
    pytest.param(
        {"name": "git-repo", "gitRepo": {"repository": "my-repo", "revision": "hashstring", "directory": "target"}},
        id="valid GitRepo",
    ),
    pytest.param(
        {"name": "git-repo-dot", "gitRepo": {"repository": "my-repo", "directory": "."}}, id="valid GitRepo in ."
    ),
    pytest.param(
        {"name": "git-repo-dot-dot-foo", "gitRepo": {"repository": "my-repo", "directory": "..foo"}},
        id="valid GitRepo with .. in name",
    ),
    pytest.param(_iscsi(), id="valid ISCSI"),
    pytest.param(_iscsi(iqn="eui.0123456789ABCDEF"), id="valid IQN: eui format"),
    pytest.param(_iscsi(iqn="naa.62004567BA64678D0123456789ABCDEF"), id="valid IQN: naa format"),
    pytest.param(_iscsi(initiatorName=VALID_INITIATOR), id="valid initiatorName"),
    pytest.param({"name": "secret", "secret": {"secretName": "my-secret"}}, id="valid Secret"),
    pytest.param(
        {"name": "secret", "secret": {"secretName": "my-secret", "defaultMode": 0o644}},
        id="valid Secret with defaultMode",
    ),
    pytest.param(
        {
            "name": "secret",
            "secret": {"secretName": "my-secret", "items": [{"key": "key", "path": "filename", "mode": 0o644}]},
        },
        id="valid Secret with projection and mode",
    ),
    pytest.param(
        {"name": "secret", "secret": {"secretName": "my-secret", "items": [{"key": "key", "path": "dir/filename"}]}},
        id="valid Secret with subdir projection",
    ),
    pytest.param({"name": "cfgmap", "configMap": {"name": "my-cfgmap"}}, id="valid ConfigMap"),
    pytest.param(
        {"name": "cfgmap", "configMap": {"name": "my-cfgmap", "defaultMode": 0o644}},
        id="valid ConfigMap with defaultMode",
    ),
    pytest.param(
        {
            "name": "cfgmap",
            "configMap": {"name": "my-cfgmap", "items": [{"key": "key", "path": "filename", "mode": 0o644}]},
        },
        id="valid ConfigMap with projection and mode",
    ),
    pytest.param(
        {"name": "cfgmap", "configMap": {"name": "my-cfgmap", "items": [{"key": "key", "path": "dir/filename"}]}},
        id="valid ConfigMap with subdir projection",
    ),
    pytest.param({"name": "glusterfs", "glusterfs": {"endpoints": "host1", "path": "path"}}, id="valid Glusterfs"),
    pytest.param(
        {"name": "flocker", "flocker": {"datasetUUID": "d846b09d-223d-43df-ab5b-d6db2206a0e4"}},
        id="valid Flocker -- datasetUUID",
    ),
    pytest.param({"name": "flocker", "flocker": {"datasetName": "datasetName"}}, id="valid Flocker -- datasetName"),
    pytest.param({"name": "rbd", "rbd": {"monitors": ["foo"], "image": "bar", "fsType": "ext4"}}, id="valid RBD"),
    pytest.param(
        {"name": "cinder", "cinder": {"volumeID": "29ea5088-4f60-4757-962e-dba678767887", "fsType": "ext4"}},
        id="valid Cinder",
    ),
    pytest.param({"name": "cephfs", "cephfs": {"monitors": ["foo"]}}, id="valid CephFS"),
    pytest.param(
        _downward(
            _labels_file("labels"),
            {"path": "labels with subscript", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['key']"}},
            {
                "path": "labels with complex subscript",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['test.example.com/key']"},
            },
            {"path": "annotations", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations"}},
            {
                "path": "annotations with subscript",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['key']"},
            },
            {
                "path": "annotations with complex subscript",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['TEST.EXAMPLE.COM/key']"},
            },
            {"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}},
            {"path": "name", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            _labels_file("path/with/subdirs"),
            _labels_file("path/./withdot"),
            _labels_file("path/with/embedded..dotdot"),
            _labels_file("path/with/leading/..dotdot"),
            _resource_file("cpu_limit", "limits.cpu"),
            _resource_file("cpu_request", "requests.cpu"),
            _resource_file("memory_limit", "limits.memory"),
            _resource_file("memory_request", "requests.memory"),
        ),
        id="valid DownwardAPI",
    ),
    pytest.param(
        _downward(
            _resource_file("hugepages_request", "requests.hugepages-2Mi"),
            _resource_file("hugepages_limit", "limits.hugepages-2Mi"),
        ),
        id="hugepages-downwardAPI-enabled",
    ),
    pytest.param(_downward(defaultMode=0o644), id="downapi valid defaultMode"),
    pytest.param(_downward(_labels_file("path", mode=0o644)), id="downapi valid item mode"),
    pytest.param(_fc(targetWWNs=["some_wwn"], lun=1), id="FC valid targetWWNs and lun"),
    pytest.param(_fc(wwids=["some_wwid"]), id="FC valid wwids"),
    pytest.param(
        {"name": "flex-volume", "flexVolume": {"driver": "kubernetes.io/blue", "fsType": "ext4"}}, id="valid FlexVolume"
    ),
    pytest.param(
        {"name": "azure-file", "azureFile": {"secretName": "key", "shareName": "share"}}, id="valid AzureFile"
    ),
    pytest.param(
        _quobyte(registry="registry:7861", volume="volume", user="root", group="root", tenant="ThisIsSomeTenantUUID"),
        id="valid Quobyte",
    ),
    pytest.param(_quobyte(registry="registry:7861", volume="/test", tenant=""), id="empty tenant quobyte"),
    pytest.param(
        {"name": "azure-disk", "azureDisk": {"diskName": "foo", "diskURI": "https://blob/vhds/bar.vhd"}},
        id="valid AzureDisk",
    ),
    pytest.param(
        {
            "name": "scaleio-volume",
            "scaleIO": {"gateway": "http://abcd/efg", "system": "test-system", "volumeName": "test-vol-1"},
        },
        id="valid scaleio volume",
    ),
    pytest.param(
        {"name": "image-volume", "image": {"reference": "quay.io/my/artifact:v1", "pullPolicy": "IfNotPresent"}},
        id="valid image volume on pod",
    ),
    pytest.param(
        {"name": "image-volume", "image": {"reference": "", "pullPolicy": "IfNotPresent"}},
        id="image volume with empty reference on other object",
    ),
    pytest.param({"name": "working", "emptyDir": {"medium": "HugePages"}}, id="hugePagesCase"),
]


@pytest.mark.parametrize("volume", VALID)
def test_validate_volumes_success(volume: Obj) -> None:
    assert _errors(volume) == []


FAILURES = [
    pytest.param({"name": "", "emptyDir": {}}, ["volumes[0].name: Required value"], id="zero-length name"),
    pytest.param(
        {"name": "a" * 64, "emptyDir": {}},
        [f'volumes[0].name: Invalid value: "{"a" * 64}": must be no more than 63 characters'],
        id="name > 63 characters",
    ),
    pytest.param(
        {"name": "a.b.c", "emptyDir": {}},
        ['volumes[0].name: Invalid value: "a.b.c": must not contain dots'],
        id="name has dots",
    ),
    pytest.param(
        {"name": "Not a DNS label!", "emptyDir": {}},
        [f'volumes[0].name: Invalid value: "Not a DNS label!": {_label("Not a DNS label!")}'],
        id="name not a DNS label",
    ),
    pytest.param(
        {"name": "dups", "emptyDir": {}, "hostPath": {"path": "/mnt/path", "type": "Directory"}},
        ["volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"],
        id="more than one source",
    ),
    pytest.param(
        {"name": "hostpath", "hostPath": {"path": "/mnt/path", "type": "invalid"}},
        [f'volumes[0].hostPath.type: Unsupported value: "invalid": supported values: {HOST_PATH_TYPES}'],
        id="invalid HostPath",
    ),
    pytest.param(
        {"name": "hostpath", "hostPath": {"path": "/mnt/path/..", "type": "Directory"}},
        ["volumes[0].hostPath.path: Invalid value: \"/mnt/path/..\": must not contain '..'"],
        id="invalid HostPath backsteps",
    ),
    pytest.param(
        {"name": "gitrepo", "gitRepo": {"repository": "foo", "directory": "../dots/bar"}},
        ["volumes[0].gitRepo.directory: Invalid value: \"../dots/bar\": must not contain '..'"],
        id="GitRepo starts with ../",
    ),
    pytest.param(
        {"name": "gitrepo", "gitRepo": {"repository": "foo", "directory": "dots/../bar"}},
        ["volumes[0].gitRepo.directory: Invalid value: \"dots/../bar\": must not contain '..'"],
        id="GitRepo contains ..",
    ),
    pytest.param(
        {"name": "gitrepo", "gitRepo": {"repository": "foo", "directory": "/abstarget"}},
        ['volumes[0].gitRepo.directory: Invalid value: "/abstarget": must be a relative path'],
        id="GitRepo absolute target",
    ),
    pytest.param(_iscsi(targetPortal=""), ["volumes[0].iscsi.targetPortal: Required value"], id="empty portal"),
    pytest.param(_iscsi(iqn=""), ["volumes[0].iscsi.iqn: Required value"], id="empty iqn"),
    pytest.param(
        _iscsi(iqn="iqn.2015-02.example.com:test;ls;"),
        ['volumes[0].iscsi.iqn: Invalid value: "iqn.2015-02.example.com:test;ls;": must be valid format'],
        id="invalid IQN: iqn format",
    ),
    pytest.param(
        _iscsi(iqn="eui.0123456789ABCDEFGHIJ"),
        ['volumes[0].iscsi.iqn: Invalid value: "eui.0123456789ABCDEFGHIJ": must be valid format'],
        id="invalid IQN: eui format",
    ),
    pytest.param(
        _iscsi(iqn="naa.62004567BA_4-78D.123456789ABCDEF"),
        ['volumes[0].iscsi.iqn: Invalid value: "naa.62004567BA_4-78D.123456789ABCDEF": must be valid format'],
        id="invalid IQN: naa format",
    ),
    pytest.param(
        _iscsi(initiatorName="2015-02.example.com:init"),
        [
            'volumes[0].iscsi.initiatorname: Invalid value: "2015-02.example.com:init": '
            "must be valid format starting with iqn, eui, or naa"
        ],
        id="invalid initiatorName",
    ),
    pytest.param(_iscsi(chapAuthDiscovery=True), ["volumes[0].iscsi.secretRef: Required value"], id="empty secret"),
    pytest.param(_iscsi(chapAuthSession=True), ["volumes[0].iscsi.secretRef: Required value"], id="empty secret"),
    pytest.param(
        {"name": "secret", "secret": {"secretName": "s", "items": [{"key": "key", "path": ""}]}},
        ["volumes[0].secret.items[0].path: Required value"],
        id="secret with missing path",
    ),
    pytest.param(
        {"name": "secret", "secret": {"secretName": "s", "items": [{"key": "key", "path": "../foo"}]}},
        ["volumes[0].secret.items[0].path: Invalid value: \"../foo\": must not contain '..'"],
        id="secret with leading ..",
    ),
    pytest.param(
        {"name": "secret", "secret": {"secretName": "s", "items": [{"key": "key", "path": "foo/../bar"}]}},
        ["volumes[0].secret.items[0].path: Invalid value: \"foo/../bar\": must not contain '..'"],
        id="secret with .. inside",
    ),
    pytest.param(
        {"name": "secret", "secret": {"secretName": "s", "defaultMode": 0o1000}},
        [f"volumes[0].secret.defaultMode: Invalid value: 512: {MODE}"],
        id="secret with invalid positive defaultMode",
    ),
    pytest.param(
        {"name": "secret", "secret": {"secretName": "s", "defaultMode": -1}},
        [f"volumes[0].secret.defaultMode: Invalid value: -1: {MODE}"],
        id="secret with invalid negative defaultMode",
    ),
    pytest.param(
        {"name": "cfgmap", "configMap": {"name": "c", "items": [{"key": "key", "path": ""}]}},
        ["volumes[0].configMap.items[0].path: Required value"],
        id="configmap with missing path",
    ),
    pytest.param(
        {"name": "cfgmap", "configMap": {"name": "c", "items": [{"key": "key", "path": "../foo"}]}},
        ["volumes[0].configMap.items[0].path: Invalid value: \"../foo\": must not contain '..'"],
        id="configmap with leading ..",
    ),
    pytest.param(
        {"name": "cfgmap", "configMap": {"name": "c", "items": [{"key": "key", "path": "foo/../bar"}]}},
        ["volumes[0].configMap.items[0].path: Invalid value: \"foo/../bar\": must not contain '..'"],
        id="configmap with .. inside",
    ),
    pytest.param(
        {"name": "cfgmap", "configMap": {"name": "c", "defaultMode": 0o1000}},
        [f"volumes[0].configMap.defaultMode: Invalid value: 512: {MODE}"],
        id="configmap with invalid positive defaultMode",
    ),
    pytest.param(
        {"name": "cfgmap", "configMap": {"name": "c", "defaultMode": -1}},
        [f"volumes[0].configMap.defaultMode: Invalid value: -1: {MODE}"],
        id="configmap with invalid negative defaultMode",
    ),
    pytest.param(
        {"name": "glusterfs", "glusterfs": {"endpoints": "", "path": "path"}},
        ["volumes[0].glusterfs.endpoints: Required value"],
        id="empty hosts",
    ),
    pytest.param(
        {"name": "glusterfs", "glusterfs": {"endpoints": "host", "path": ""}},
        ["volumes[0].glusterfs.path: Required value"],
        id="empty path",
    ),
    pytest.param(
        {"name": "flocker", "flocker": {"datasetName": ""}},
        ["volumes[0].flocker: Required value: one of datasetName and datasetUUID is required"],
        id="both empty",
    ),
    pytest.param(
        {
            "name": "flocker",
            "flocker": {"datasetName": "datasetName", "datasetUUID": "d846b09d-223d-43df-ab5b-d6db2206a0e4"},
        },
        [
            'volumes[0].flocker: Invalid value: "resource": '
            "datasetName and datasetUUID can not be specified simultaneously"
        ],
        id="both specified",
    ),
    pytest.param(
        {"name": "flocker", "flocker": {"datasetName": "foo/bar"}},
        ["volumes[0].flocker.datasetName: Invalid value: \"foo/bar\": must not contain '/'"],
        id="slash in flocker datasetName",
    ),
    pytest.param(
        {"name": "rbd", "rbd": {"monitors": [], "image": "bar", "fsType": "ext4"}},
        ["volumes[0].rbd.monitors: Required value"],
        id="empty rbd monitors",
    ),
    pytest.param(
        {"name": "rbd", "rbd": {"monitors": ["foo"], "image": "", "fsType": "ext4"}},
        ["volumes[0].rbd.image: Required value"],
        id="empty image",
    ),
    pytest.param(
        {"name": "cephfs", "cephfs": {"monitors": []}},
        ["volumes[0].cephfs.monitors: Required value"],
        id="empty cephfs monitors",
    ),
    pytest.param(
        _downward(_labels_file("path", mode=0o1000)),
        [f"volumes[0].downwardAPI.mode: Invalid value: 512: {MODE}"],
        id="downapi invalid positive item mode",
    ),
    pytest.param(
        _downward(_labels_file("path", mode=-1)),
        [f"volumes[0].downwardAPI.mode: Invalid value: -1: {MODE}"],
        id="downapi invalid negative item mode",
    ),
    pytest.param(
        _downward(_labels_file("")), ["volumes[0].downwardAPI.path: Required value"], id="downapi empty metatada path"
    ),
    pytest.param(
        _downward(_labels_file("/absolutepath")),
        ['volumes[0].downwardAPI.path: Invalid value: "/absolutepath": must be a relative path'],
        id="downapi absolute path",
    ),
    pytest.param(
        _downward(_labels_file("../../passwd")),
        ["volumes[0].downwardAPI.path: Invalid value: \"../../passwd\": must not contain '..'"],
        id="downapi dot dot path",
    ),
    pytest.param(
        _downward(_labels_file("..badFileName")),
        ["volumes[0].downwardAPI.path: Invalid value: \"..badFileName\": must not start with '..'"],
        id="downapi dot dot file name",
    ),
    pytest.param(
        _downward(_labels_file("..badDirName/goodFileName")),
        ["volumes[0].downwardAPI.path: Invalid value: \"..badDirName/goodFileName\": must not start with '..'"],
        id="downapi dot dot first level dirent",
    ),
    pytest.param(
        _downward(
            _labels_file("test", resourceFieldRef={"containerName": "test-container", "resource": "requests.memory"})
        ),
        [
            'volumes[0].downwardAPI: Invalid value: "resource": '
            "fieldRef and resourceFieldRef can not be specified simultaneously"
        ],
        id="downapi fieldRef and ResourceFieldRef together",
    ),
    pytest.param(
        _downward(defaultMode=0o1000),
        [f"volumes[0].downwardAPI.defaultMode: Invalid value: 512: {MODE}"],
        id="downapi invalid positive defaultMode",
    ),
    pytest.param(
        _downward(defaultMode=-1),
        [f"volumes[0].downwardAPI.defaultMode: Invalid value: -1: {MODE}"],
        id="downapi invalid negative defaultMode",
    ),
    pytest.param(
        _fc(targetWWNs=[], lun=1, wwids=[]),
        ["volumes[0].fc.targetWWNs: Required value: must specify either targetWWNs or wwids, but not both"],
        id="FC empty targetWWNs and wwids",
    ),
    pytest.param(
        _fc(targetWWNs=["some_wwn"], lun=1, wwids=["some_wwid"]),
        [
            'volumes[0].fc.targetWWNs: Invalid value: ["some_wwn"]: '
            "targetWWNs and wwids can not be specified simultaneously"
        ],
        id="FC invalid: both targetWWNs and wwids simultaneously",
    ),
    pytest.param(
        _fc(targetWWNs=["wwn"]),
        ["volumes[0].fc.lun: Required value: lun is required if targetWWNs is specified"],
        id="FC valid targetWWNs and empty lun",
    ),
    pytest.param(
        _fc(targetWWNs=["wwn"], lun=256),
        [f"volumes[0].fc.lun: Invalid value: 256: {inclusive_range_error(0, 255)}"],
        id="FC valid targetWWNs and invalid lun",
    ),
    pytest.param(
        {"name": "azure-file", "azureFile": {"secretName": "", "shareName": "share"}},
        ["volumes[0].azureFile.secretName: Required value"],
        id="AzureFile empty secret",
    ),
    pytest.param(
        {"name": "azure-file", "azureFile": {"secretName": "name", "shareName": ""}},
        ["volumes[0].azureFile.shareName: Required value"],
        id="AzureFile empty share",
    ),
    pytest.param(
        _quobyte(volume="/test", tenant="ThisIsSomeTenantUUID"),
        [f"volumes[0].quobyte.registry: Required value: {QUOBYTE}"],
        id="empty registry quobyte",
    ),
    pytest.param(
        _quobyte(registry="registry7861", volume="/test", tenant="ThisIsSomeTenantUUID"),
        [f'volumes[0].quobyte.registry: Invalid value: "registry7861": {QUOBYTE}'],
        id="wrong format registry quobyte",
    ),
    pytest.param(
        _quobyte(registry="registry:7861,reg2", volume="/test", tenant="ThisIsSomeTenantUUID"),
        [f'volumes[0].quobyte.registry: Invalid value: "registry:7861,reg2": {QUOBYTE}'],
        id="wrong format multiple registries quobyte",
    ),
    pytest.param(
        _quobyte(registry="registry:7861", tenant="ThisIsSomeTenantUUID"),
        ["volumes[0].quobyte.volume: Required value"],
        id="empty volume quobyte",
    ),
    pytest.param(
        _quobyte(
            registry="registry:7861",
            volume="/test",
            tenant="this is too long to be a valid uuid so this test has to fail on the maximum length validation "
            "of the tenant.",
        ),
        ["volumes[0].quobyte.tenant: Required value: must be a UUID and may not exceed a length of 64 characters"],
        id="too long tenant quobyte",
    ),
    pytest.param(
        {"name": "azure-disk", "azureDisk": {"diskName": "", "diskURI": "https://blob/vhds/bar.vhd"}},
        ["volumes[0].azureDisk.diskName: Required value"],
        id="AzureDisk empty disk name",
    ),
    pytest.param(
        {"name": "azure-disk", "azureDisk": {"diskName": "foo", "diskURI": ""}},
        ["volumes[0].azureDisk.diskURI: Required value"],
        id="AzureDisk empty disk uri",
    ),
    pytest.param(
        {
            "name": "scaleio-volume",
            "scaleIO": {"gateway": "http://abcd/efg", "system": "test-system", "volumeName": ""},
        },
        ["volumes[0].scaleIO.volumeName: Required value"],
        id="ScaleIO with empty name",
    ),
    pytest.param(
        {"name": "scaleio-volume", "scaleIO": {"gateway": "", "system": "test-system", "volumeName": "test-vol-1"}},
        ["volumes[0].scaleIO.gateway: Required value"],
        id="ScaleIO with empty gateway",
    ),
    pytest.param(
        {
            "name": "scaleio-volume",
            "scaleIO": {"gateway": "http://agc/efg/gateway", "system": "", "volumeName": "test-vol-1"},
        },
        ["volumes[0].scaleIO.system: Required value"],
        id="ScaleIO with empty system",
    ),
    pytest.param(
        {
            "name": "projected-volume",
            "projected": {"sources": [{"secret": {"name": "foo"}}, {"secret": {"name": "foo"}, "downwardAPI": {}}]},
        },
        ["volumes[0].projected.sources[1]: Forbidden: may not specify more than 1 volume type per source"],
        id="ProjectedVolumeSource more than one projection in a source",
    ),
    pytest.param(
        {"name": "projected-volume", "projected": {"sources": [{"secret": {}}, {"secret": {}, "downwardAPI": {}}]}},
        [
            "volumes[0].projected.sources[0].secret.name: Required value",
            "volumes[0].projected.sources[1].secret.name: Required value",
            "volumes[0].projected.sources[1]: Forbidden: may not specify more than 1 volume type per source",
        ],
        id="ProjectedVolumeSource more than one projection in a source",
    ),
    pytest.param({"name": "volume"}, ["volumes[0]: Required value: must specify a volume type"], id="no volume source"),
    pytest.param(
        {"name": "", "image": {"reference": "quay.io/my/artifact:v1", "pullPolicy": "IfNotPresent"}},
        ["volumes[0].name: Required value"],
        id="image volume with empty name",
    ),
    pytest.param(
        {"name": "image-volume", "image": {"reference": "quay.io/my/artifact:v1", "pullPolicy": "wrong"}},
        [
            'volumes[0].image.pullPolicy: Unsupported value: "wrong": '
            'supported values: "Always", "IfNotPresent", "Never"'
        ],
        id="image volume with wrong pullPolicy",
    ),
]


@pytest.mark.parametrize(("volume", "expected"), FAILURES)
def test_validate_volumes_failures(volume: Obj, expected: list[str]) -> None:
    """Upstream compares type and field (and a detail substring); these are kube-apiserver's whole errors."""
    assert _errors(volume) == expected


def test_validate_volumes_image_volume_with_empty_reference_on_pod() -> None:
    """ "image volume with empty reference on pod": a Pod's image volume needs its reference (a template's may
    be filled in later, `opts.ResourceIsPod`)."""
    volume = {"name": "image-volume", "image": {"reference": "", "pullPolicy": "IfNotPresent"}}
    assert [str(e) for e in validate_pod(_pod(volumes=[volume]))] == ["spec.volumes[0].image.reference: Required value"]


def test_validate_volumes_dups_case() -> None:
    volume = {"name": "abc", "emptyDir": {}}
    assert _errors(volume, volume) == ['volumes[1].name: Duplicate value: "abc"']


# --- TestValidateCSIVolumeSource, TestValidateNFSVolumeSource, TestValidateGlusterfs, TestValidateKeyToPath -----

CSI_VALID = [
    pytest.param("test-driver", id="all required fields ok"),
    pytest.param("comgooglestoragecsigcepd", id="driver name: ok no punctuations"),
    pytest.param("io.kubernetes.storage.csi.flex", id="driver name: ok dot only"),
    pytest.param("io-kubernetes-storage-csi-flex", id="driver name: ok dash only"),
    pytest.param("2io.kubernetes.storage-csi.flex", id="driver name: ok beginning with number"),
    pytest.param("io.kubernetes.storage-csi.flex2", id="driver name: ok ending with number"),
    pytest.param("a", id="driver name: ok length 1"),
]


@pytest.mark.parametrize("driver", CSI_VALID)
def test_validate_csi_volume_source_success(driver: str) -> None:
    assert _errors({"name": "csi", "csi": {"driver": driver}}) == []


def test_validate_csi_volume_source_valid_node_publish_secret_ref() -> None:
    """ "valid nodePublishSecretRef"."""
    csi = {"driver": "com.google.gcepd", "nodePublishSecretRef": {"name": "foobar"}}
    assert _errors({"name": "csi", "csi": csi}) == []


def _bad_driver(driver: str) -> list[str]:
    return [f"volumes[0].csi.driver: Invalid value: {_go_quoted(driver)}: {_subdomain(driver.lower())}"]


def _go_quoted(text: str) -> str:
    return '"' + text + '"'


@pytest.mark.parametrize(
    ("csi", "expected"),
    [
        pytest.param(
            {"driver": ""},
            ["volumes[0].csi.driver: Required value", f'volumes[0].csi.driver: Invalid value: "": {_subdomain("")}'],
            id="missing driver name",
        ),
        pytest.param(
            {"driver": "io_kubernetes_storage_csi_flex"},
            _bad_driver("io_kubernetes_storage_csi_flex"),
            id="driver name: invalid underscore",
        ),
        pytest.param(
            {"driver": "io.kubernetes.storage_csi.flex"},
            _bad_driver("io.kubernetes.storage_csi.flex"),
            id="driver name: invalid dot underscores",
        ),
        pytest.param(
            {"driver": "io.kubernetes-storage.csi_flex"},
            _bad_driver("io.kubernetes-storage.csi_flex"),
            id="driver name: invalid dot dash underscores",
        ),
        pytest.param(
            {"driver": "g" * 65},
            ["volumes[0].csi.driver: Too long: may not be more than 63 bytes"],
            id="driver name: invalid length > 63",
        ),
        pytest.param(
            {"driver": "_comgooglestoragecsigcepd"},
            _bad_driver("_comgooglestoragecsigcepd"),
            id="driver name: invalid start char",
        ),
        pytest.param(
            {"driver": "comgooglestoragecsigcepd/"},
            _bad_driver("comgooglestoragecsigcepd/"),
            id="driver name: invalid end char",
        ),
        pytest.param(
            {"driver": "com/google/storage/csi~gcepd"},
            _bad_driver("com/google/storage/csi~gcepd"),
            id="driver name: invalid separators",
        ),
        pytest.param(
            {"driver": "com.google.gcepd", "nodePublishSecretRef": {"name": ""}},
            ["volumes[0].csi.nodePublishSecretRef.name: Required value"],
            id="nodePublishSecretRef: invalid name missing",
        ),
        pytest.param(
            {"driver": "Com.Google.GCEPD", "nodePublishSecretRef": {"name": "Foo"}},
            [f'volumes[0].csi.name: Invalid value: "Foo": {_subdomain("Foo")}'],
            id="kjobs: driver names are compared lower-cased; a bad secret name is reported at csi.name",
        ),
    ],
)
def test_validate_csi_volume_source(csi: Obj, expected: list[str]) -> None:
    """Upstream checks the first error's type and field suffix; these are all of kube-apiserver's errors."""
    assert _errors({"name": "csi", "csi": csi}) == expected


@pytest.mark.parametrize(
    ("nfs", "expected"),
    [
        pytest.param({"server": "", "path": "/tmp"}, ["volumes[0].nfs.server: Required value"], id="missing server"),
        pytest.param(
            {"server": "my-server", "path": ""},
            ["volumes[0].nfs.path: Required value", 'volumes[0].nfs.path: Invalid value: "": must be an absolute path'],
            id="missing path",
        ),
        pytest.param(
            {"server": "my-server", "path": "tmp"},
            ['volumes[0].nfs.path: Invalid value: "tmp": must be an absolute path'],
            id="abs path",
        ),
    ],
)
def test_validate_nfs_volume_source(nfs: Obj, expected: list[str]) -> None:
    assert _errors({"name": "nfs", "nfs": nfs}) == expected


@pytest.mark.parametrize(
    ("gfs", "expected"),
    [
        pytest.param({"endpoints": "", "path": "/tmp"}, ["endpoints"], id="missing endpointname"),
        pytest.param({"endpoints": "my-endpoint", "path": ""}, ["path"], id="missing path"),
        pytest.param({"endpoints": "", "path": ""}, ["endpoints", "path"], id="missing endpointname and path"),
    ],
)
def test_validate_glusterfs(gfs: Obj, expected: list[str]) -> None:
    assert _errors({"name": "gfs", "glusterfs": gfs}) == [f"volumes[0].glusterfs.{f}: Required value" for f in expected]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        pytest.param({"key": "k", "path": "p"}, [], id="0"),
        pytest.param({"key": "k", "path": "p/p/p/p"}, [], id="1"),
        pytest.param({"key": "k", "path": "p/..p/p../p..p"}, [], id="2"),
        pytest.param({"key": "k", "path": "p", "mode": 0o644}, [], id="3"),
        pytest.param({"key": "", "path": "p"}, ["key: Required value"], id="4"),
        pytest.param({"key": "k", "path": ""}, ["path: Required value"], id="5"),
        pytest.param({"key": "k", "path": "..p"}, ["path: Invalid value: \"..p\": must not start with '..'"], id="6"),
        pytest.param({"key": "k", "path": "../p"}, ["path: Invalid value: \"../p\": must not contain '..'"], id="7"),
        pytest.param(
            {"key": "k", "path": "p/../p"}, ["path: Invalid value: \"p/../p\": must not contain '..'"], id="8"
        ),
        pytest.param({"key": "k", "path": "p/.."}, ["path: Invalid value: \"p/..\": must not contain '..'"], id="9"),
        pytest.param({"key": "k", "path": "p", "mode": 0o1000}, [f"mode: Invalid value: 512: {MODE}"], id="10"),
        pytest.param({"key": "k", "path": "p", "mode": -1}, [f"mode: Invalid value: -1: {MODE}"], id="11"),
    ],
)
def test_validate_key_to_path(item: Obj, expected: list[str]) -> None:
    """TestValidateKeyToPath's rows (unnamed upstream: ids are their indexes), as a configMap volume's item."""
    volume = {"name": "cfg", "configMap": {"name": "c", "items": [item]}}
    assert _errors(volume) == [f"volumes[0].configMap.items[0].{text}" for text in expected]


# --- TestValidateEphemeralVolume (testValidatePVC with ephemeral=true) -------------------------------------------

GOOD_CLAIM_SPEC: Obj = {
    "selector": {"matchExpressions": [{"key": "key2", "operator": "Exists"}]},
    "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
    "resources": {"requests": {"storage": "10G"}},
    "storageClassName": "valid",
    "volumeMode": "Filesystem",
}
STORAGE_10G = {"requests": {"storage": "10G"}}
CLAIM = "volumes[0].ephemeral.volumeClaimTemplate"
LABEL_VALUE = is_label_value("hyphen not allowed")[0]


def _claim(meta: Obj | None = None, spec: Obj | None = None) -> Obj:
    template: Obj = {"spec": GOOD_CLAIM_SPEC if spec is None else spec}
    if meta is not None:
        template["metadata"] = meta
    return {"name": "foo", "ephemeral": {"volumeClaimTemplate": template}}


EPHEMERAL_VALID = [
    pytest.param(_claim(), id="good-claim"),
    pytest.param(_claim({"namespace": ""}), id="missing-name"),
    pytest.param(_claim({"name": ""}), id="missing-namespace"),
    pytest.param(_claim({"labels": {"apps.kubernetes.io/name": "test"}}), id="with-good-labels"),
    pytest.param(_claim({"labels": {"foo": "bar"}}), id="with-good-annotations"),
    pytest.param(
        _claim(spec={"accessModes": ["ReadWriteOncePod"], "resources": STORAGE_10G}), id="with-read-write-once-pod"
    ),
]


@pytest.mark.parametrize("volume", EPHEMERAL_VALID)
def test_validate_ephemeral_volume_success(volume: Obj) -> None:
    assert _errors(volume) == []


def _spec(**fields: Any) -> Obj:
    return {"accessModes": ["ReadWriteOnce"], "resources": STORAGE_10G} | fields


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        pytest.param(
            _claim({"generateName": "pvc-"}),
            [f"{CLAIM}.metadata.generateName: Forbidden: cannot be set"],
            id="with-generate-name",
        ),
        pytest.param(
            _claim({"uid": "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d"}),
            [f"{CLAIM}.metadata.uID: Forbidden: cannot be set"],
            id="with-uid",
        ),
        pytest.param(
            _claim({"resourceVersion": "1"}),
            [f"{CLAIM}.metadata.resourceVersion: Forbidden: cannot be set"],
            id="with-resource-version",
        ),
        pytest.param(
            _claim({"generation": 100}),
            [f"{CLAIM}.metadata.generation: Forbidden: cannot be set"],
            id="with-generation",
        ),
        pytest.param(
            _claim({"creationTimestamp": "2024-01-01T00:00:00Z"}),
            [f"{CLAIM}.metadata.creationTimestamp: Forbidden: cannot be set"],
            id="with-creation-timestamp",
        ),
        pytest.param(
            _claim({"deletionGracePeriodSeconds": 10}),
            [f"{CLAIM}.metadata.deletionGracePeriodSeconds: Forbidden: cannot be set"],
            id="with-deletion-grace-period-seconds",
        ),
        pytest.param(
            _claim(
                {
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "pod",
                            "name": "foo",
                            "uid": "ac051fac-2ead-46d9-b8b4-4e0fbeb7455d",
                        }
                    ]
                }
            ),
            [f"{CLAIM}.metadata.ownerReferences: Forbidden: cannot be set"],
            id="with-owner-references",
        ),
        pytest.param(
            _claim({"finalizers": ["example.com/foo"]}),
            [f"{CLAIM}.metadata.finalizers: Forbidden: cannot be set"],
            id="with-finalizers",
        ),
        pytest.param(
            _claim(
                {
                    "managedFields": [
                        {"fieldsType": "FieldsV1", "operation": "Apply", "apiVersion": "apps/v1", "manager": "foo"}
                    ]
                }
            ),
            [f"{CLAIM}.metadata.managedFields: Forbidden: cannot be set"],
            id="with-managed-fields",
        ),
        pytest.param(
            _claim({"labels": {"hello-world": "hyphen not allowed"}}),
            [f'{CLAIM}.metadata.labels: Invalid value: "hyphen not allowed": {LABEL_VALUE}'],
            id="with-bad-labels",
        ),
        pytest.param(
            _claim({"labels": {"hello-world": "hyphen not allowed"}}),
            [f'{CLAIM}.metadata.labels: Invalid value: "hyphen not allowed": {LABEL_VALUE}'],
            id="with-bad-annotations",
        ),
        pytest.param(
            _claim(spec=_spec(accessModes=["ReadWriteOncePod", "ReadWriteMany"])),
            [f"{CLAIM}.spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
            id="with-read-write-once-pod-and-others",
        ),
        pytest.param(
            _claim(spec=GOOD_CLAIM_SPEC | {"resources": {"requests": {"storage": "0G"}}, "volumeMode": None}),
            [f'{CLAIM}.spec.resources[storage]: Invalid value: "0": must be greater than zero'],
            id="invalid-claim-zero-capacity",
        ),
        pytest.param(
            _claim(
                spec=_spec(
                    accessModes=["ReadWriteOnce", "ReadOnlyMany"],
                    selector={
                        "matchExpressions": [{"key": "key2", "operator": "InvalidOp", "values": ["value1", "value2"]}]
                    },
                )
            ),
            [
                f'{CLAIM}.spec.selector.matchExpressions[0].operator: Invalid value: "InvalidOp": '
                "not a valid selector operator"
            ],
            id="invalid-label-selector",
        ),
        pytest.param(
            _claim(spec=_spec(accessModes=["fakemode"])),
            [
                f'{CLAIM}.spec.accessModes: Unsupported value: "fakemode": supported values: "ReadOnlyMany", '
                '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
            ],
            id="invalid-accessmode",
        ),
        pytest.param(
            _claim(spec={"resources": STORAGE_10G}),
            [f"{CLAIM}.spec.accessModes: Required value: at least 1 access mode is required"],
            id="no-access-modes",
        ),
        pytest.param(
            _claim(spec={"accessModes": ["ReadWriteOnce"]}),
            [f"{CLAIM}.spec.resources[storage]: Required value"],
            id="no-resource-requests",
        ),
        pytest.param(
            _claim(spec=_spec(resources={"requests": {"memory": "10G"}})),
            [f"{CLAIM}.spec.resources[storage]: Required value"],
            id="invalid-resource-requests",
        ),
        pytest.param(
            _claim(spec=GOOD_CLAIM_SPEC | {"resources": {"requests": {"storage": "-10G"}}}),
            [f'{CLAIM}.spec.resources[storage]: Invalid value: "-10G": must be greater than zero'],
            id="negative-storage-request",
        ),
        pytest.param(
            _claim(spec=GOOD_CLAIM_SPEC | {"resources": {"requests": {"storage": "0G"}}}),
            [f'{CLAIM}.spec.resources[storage]: Invalid value: "0": must be greater than zero'],
            id="zero-storage-request",
        ),
        pytest.param(
            _claim(spec=GOOD_CLAIM_SPEC | {"storageClassName": "-invalid-"}),
            [f'{CLAIM}.spec.storageClassName: Invalid value: "-invalid-": {_subdomain("-invalid-")}'],
            id="invalid-storage-class-name",
        ),
        pytest.param(
            _claim(spec=_spec(accessModes=["ReadWriteOnce", "ReadOnlyMany"], volumeMode="fakeVolumeMode")),
            [f'{CLAIM}.spec.volumeMode: Unsupported value: "fakeVolumeMode": supported values: "Block", "Filesystem"'],
            id="invalid-volume-mode",
        ),
        pytest.param(
            _claim(
                spec=_spec(
                    dataSource={"kind": "PersistentVolumeClaim", "name": "pvc1"},
                    dataSourceRef={"kind": "PersistentVolumeClaim", "name": "pvc2"},
                )
            ),
            [f"{CLAIM}.spec: Invalid value: {{}}: must match dataSourceRef"],
            id="mismatch-data-source-and-ref",
        ),
        pytest.param(
            _claim(spec=_spec(dataSource={"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"})),
            [f'{CLAIM}.spec.dataSource.apiGroup: Invalid value: "^invalid": {_subdomain("^invalid")}'],
            id="invaild-apigroup-in-data-source",
        ),
        pytest.param(
            _claim(spec=_spec(dataSourceRef={"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"})),
            [f'{CLAIM}.spec.dataSourceRef.apiGroup: Invalid value: "^invalid": {_subdomain("^invalid")}'],
            id="invaild-apigroup-in-data-source-ref",
        ),
        pytest.param(
            _claim(spec=GOOD_CLAIM_SPEC | {"volumeAttributesClassName": "-invalid-"}),
            [f'{CLAIM}.spec.volumeAttributesClassName: Invalid value: "-invalid-": {_subdomain("-invalid-")}'],
            id="invalid-volume-attributes-class-name",
        ),
        pytest.param(
            {"name": "foo", "ephemeral": {}},
            ["volumes[0].ephemeral.volumeClaimTemplate: Required value"],
            id="kjobs: an ephemeral volume without its claim template",
        ),
    ],
)
def test_validate_ephemeral_volume(volume: Obj, expected: list[str]) -> None:
    """Upstream asks only for a failure; these are kube-apiserver's errors."""
    assert _errors(volume) == expected


# --- kjobs rows: downward API selectors, projected sources, image mounts ------------------------------------------


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        pytest.param(
            _downward({"path": "node", "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}),
            [
                'volumes[0].downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": '
                f"supported values: {DOWNWARD_FIELDS}"
            ],
            id="kjobs: downwardAPI fieldRef to a field only env may read",
        ),
        pytest.param(
            _downward({"path": "node", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['a b']"}}),
            [
                'volumes[0].downwardAPI.fieldRef: Invalid value: "a b": name part must consist of alphanumeric '
                "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
            id="kjobs: downwardAPI fieldRef to a label that is no qualified name",
        ),
        pytest.param(
            _downward({"path": "cpu", "resourceFieldRef": {"resource": "limits.cpu"}}),
            ["volumes[0].downwardAPI.resourceFieldRef.containerName: Required value"],
            id="kjobs: downwardAPI resourceFieldRef must name its container",
        ),
        pytest.param(
            _downward(_resource_file("gpu", "limits.nvidia.com/gpu")),
            [
                'volumes[0].downwardAPI.resourceFieldRef.resource: Unsupported value: "limits.nvidia.com/gpu": '
                'supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", '
                '"requests.ephemeral-storage", "requests.memory"'
            ],
            id="kjobs: downwardAPI resourceFieldRef to an unsupported resource",
        ),
        pytest.param(
            _downward(
                _resource_file("cpu", "limits.cpu", divisor="2"),
                _resource_file("mem", "requests.memory", divisor="3Mi"),
                _resource_file("disk", "limits.ephemeral-storage", divisor="1m"),
                _resource_file("huge", "limits.hugepages-2Mi", divisor="10"),
                _resource_file("ok", "limits.cpu", divisor="1000m"),
            ),
            [
                'volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.cpu": '
                "only divisor's values 1m and 1 are supported with the cpu resource",
                'volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "requests.memory": '
                f"only divisor's values {BYTE_DIVISORS} are supported with the memory resource",
                'volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.ephemeral-storage": '
                f"only divisor's values {BYTE_DIVISORS} are supported with the local ephemeral storage resource",
                'volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.hugepages-2Mi": '
                f"only divisor's values {BYTE_DIVISORS} are supported with the hugepages resource",
            ],
            id="kjobs: downwardAPI divisors (1000m is 1)",
        ),
        pytest.param(
            _downward({"path": "nothing"}),
            ["volumes[0].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required"],
            id="kjobs: downwardAPI item without a selector",
        ),
        pytest.param(
            {
                "name": "proj",
                "projected": {
                    "defaultMode": 0o1000,
                    "sources": [
                        {"configMap": {"name": "c", "items": [{"key": "k", "path": "a"}]}},
                        {"secret": {"name": "s", "items": [{"key": "k", "path": "a"}]}},
                        {"downwardAPI": {"items": [_labels_file("a")]}},
                        {"serviceAccountToken": {"path": "a", "expirationSeconds": 3600}},
                    ],
                },
            },
            [
                f"volumes[0].projected.defaultMode: Invalid value: 512: {MODE}",
                'volumes[0].projected: Invalid value: "s": conflicting duplicate paths',
                'volumes[0].projected: Invalid value: "a": conflicting duplicate paths',
            ],
            id="kjobs: projected duplicate paths (a token's path is not counted)",
        ),
        pytest.param(
            {
                "name": "proj",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"path": "", "expirationSeconds": 599}},
                        {"serviceAccountToken": {"path": "../token", "expirationSeconds": 2**32 + 1}},
                        {"serviceAccountToken": {"path": "token", "audience": "", "expirationSeconds": 600}},
                    ]
                },
            },
            [
                "volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 599: "
                "may not specify a duration less than 10 minutes",
                "volumes[0].projected.path: Required value",
                "volumes[0].projected.sources[1].serviceAccountToken.expirationSeconds: Invalid value: 4294967297: "
                "may not specify a duration larger than 2^32 seconds",
                "volumes[0].projected.path: Invalid value: \"../token\": must not contain '..'",
            ],
            id="kjobs: projected service account tokens (errors of the path name the volume)",
        ),
    ],
)
def test_kjobs_volume_rows(volume: Obj, expected: list[str]) -> None:
    assert _errors(volume) == expected


def test_image_volume_mounts_take_no_sub_path() -> None:
    """`ValidateVolumeMounts`: "not allowed in image volume sources", on the item, before the list's own
    subPath errors (which name the list)."""
    volume = {"name": "img", "image": {"reference": "quay.io/my/artifact:v1", "pullPolicy": "IfNotPresent"}}
    mounts = [
        {"name": "img", "mountPath": "/a", "subPath": "../x"},
        {"name": "img", "mountPath": "/b", "subPathExpr": "y"},
    ]
    assert _errors(volume, containers=[_ctr(volumeMounts=mounts)]) == [
        'containers[0].volumeMounts[0].subPath: Invalid value: "../x": not allowed in image volume sources',
        "containers[0].volumeMounts.subPath: Invalid value: \"../x\": must not contain '..'",
        'containers[0].volumeMounts[1].subPathExpr: Invalid value: "y": not allowed in image volume sources',
    ]


def test_iscsi_initiator_with_a_long_target_names_the_volume() -> None:
    """A volume name and target portal over 64 bytes with an initiator name is refused at `volumes[0].name`."""
    portal = "10.0.0.1:" + "3" * 60
    volume = _iscsi(targetPortal=portal, initiatorName=VALID_INITIATOR)
    assert _errors(volume) == [
        'volumes[0].name: Invalid value: "iscsi": Total length of <volume name>:<iscsi.targetPortal> must be '
        "under 64 characters if iscsi.initiatorName is specified."
    ]


# --- gates: ImageVolume (beta, on) and ClusterTrustBundleProjection (off) ------------------------------------------

IMAGE_VOLUME_OFF = FeatureGates.parse("ImageVolume=false")


def _job_with(volumes: list[Obj], mounts: list[Obj]) -> Obj:
    job = api_job()
    job["spec"]["template"]["spec"]["volumes"] = volumes
    job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = mounts
    return job


def test_image_volumes_are_dropped_with_the_gate_off_unless_already_used() -> None:
    """`dropImageVolumes`: with ImageVolume off an image volume and the mounts of it go; a stored template that
    already had one keeps it."""
    image = {"name": "img", "image": {"reference": "r:1", "pullPolicy": "IfNotPresent"}}
    empty = {"name": "e", "emptyDir": {}}
    mounts = [{"name": "img", "mountPath": "/img"}, {"name": "e", "mountPath": "/e"}]
    job = _job_with([image, empty], mounts)
    drop_disabled_job_fields(job, None, IMAGE_VOLUME_OFF)
    spec = job["spec"]["template"]["spec"]
    assert spec["volumes"] == [empty]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "e", "mountPath": "/e"}]
    only_image = _job_with([image], [mounts[0]])
    drop_disabled_job_fields(only_image, None, IMAGE_VOLUME_OFF)
    assert "volumes" not in only_image["spec"]["template"]["spec"]
    assert "volumeMounts" not in only_image["spec"]["template"]["spec"]["containers"][0]
    kept = _job_with([image], [mounts[0]])
    drop_disabled_job_fields(kept, _job_with([image], []), IMAGE_VOLUME_OFF)
    assert kept["spec"]["template"]["spec"]["volumes"] == [image]
    on = _job_with([image], [mounts[0]])
    drop_disabled_job_fields(on, None, FeatureGates())
    assert on["spec"]["template"]["spec"]["volumes"] == [image]


def test_cluster_trust_bundle_projections_are_dropped_unless_already_used() -> None:
    """ClusterTrustBundleProjection is off (as on 1.32): `dropDisabledClusterTrustBundleProjection` empties the
    source, which validation then accepts; a stored spec that had one keeps it, and it is validated."""
    bundle = {"clusterTrustBundle": {"name": "a", "signerName": "b", "path": "../ca"}}
    volume = {"name": "p", "projected": {"sources": [bundle]}}
    job = _job_with([copy.deepcopy(volume)], [])
    drop_disabled_job_fields(job, None, FeatureGates())
    assert job["spec"]["template"]["spec"]["volumes"] == [{"name": "p", "projected": {"sources": [{}]}}]
    kept = _job_with([copy.deepcopy(volume)], [])
    drop_disabled_job_fields(kept, _job_with([copy.deepcopy(volume)], []), FeatureGates())
    assert kept["spec"]["template"]["spec"]["volumes"][0]["projected"]["sources"] == [bundle]
    assert _errors(volume) == [
        'volumes[0].projected.sources[0].clusterTrustBundle: Invalid value: {"name":"a","path":"../ca",'
        '"signerName":"b"}: only one of name and signerName may be used',
        "volumes[0].projected.sources[0].clusterTrustBundle.path: Invalid value: \"../ca\": must not contain '..'",
    ]


# --- through the API: kubectl apply of such a Job --------------------------------------------------------------


def test_a_job_with_a_bad_volume_is_refused_by_the_api() -> None:
    """What `kubectl apply` (a create) gets: 422 Invalid with kube-apiserver's message and cause."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "vols"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
                    "volumes": [{"name": "data", "hostPath": {"path": "/srv", "type": "Dir"}}],
                }
            }
        },
    }
    detail = f'Unsupported value: "Dir": supported values: {HOST_PATH_TYPES}'

    async def scenario(client: Any) -> None:
        with pytest.raises(ApiError) as refused:
            await client.create(JOBS, "default", job)
        assert refused.value.message == (
            f'Job.batch "vols" is invalid: spec.template.spec.volumes[0].hostPath.type: {detail}'
        )
        assert causes(refused.value) == [
            ("spec.template.spec.volumes[0].hostPath.type", "FieldValueNotSupported", detail)
        ]

    run(scenario)
