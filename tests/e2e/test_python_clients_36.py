"""Third-party Python clients against `kjobs up` where stop 36 found kjobs answering otherwise than a v1.32 API
server (docs/clients-stop36.md): the bookkeeping of server-side apply as structured-merge-diff keeps it — the
`FieldManagerConflict` cause of a 409, the managers a forced apply or a removal leaves owning nothing, and the
order of `managedFields`. Each test is what a user of the client writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_python_clients import kubeconfig as kubeconfig  # the fixture: one `kjobs up` for this module

pytestmark = pytest.mark.e2e


def _configmap(name: str, data: dict[str, str], **labels: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def test_lightkube_forced_apply_takes_the_field_and_the_loser_leaves(kubeconfig: Path) -> None:
    """lightkube `apply` by a second field manager: the 409's cause is read as `reason` FieldManagerConflict
    (metav1.StatusCause's JSON name for its type), and after `force=True` the first applier, which owned only that
    key, has no `managedFields` entry left."""
    from lightkube import ApiError, Client, KubeConfig
    from lightkube.codecs import from_dict

    config = KubeConfig.from_file(str(kubeconfig))
    first = Client(config=config, field_manager="team-a")
    second = Client(config=config, field_manager="team-b")
    first.apply(from_dict(_configmap("lk36", {"size": "1"})))
    with pytest.raises(ApiError) as refused:
        second.apply(from_dict(_configmap("lk36", {"size": "2"})))
    assert refused.value.status.code == 409
    causes = refused.value.status.details.causes
    assert [(c.reason, c.field, c.message) for c in causes] == [
        ("FieldManagerConflict", ".data.size", 'conflict with "team-a"')
    ]
    forced = second.apply(from_dict(_configmap("lk36", {"size": "2"})), force=True)
    assert forced.data == {"size": "2"}
    assert [(m.manager, m.operation, m.fieldsV1) for m in forced.metadata.managedFields] == [
        ("team-b", "Apply", {"f:data": {"f:size": {}}})
    ]


def test_kubernetes_patch_removing_applied_fields_and_the_entries_order(kubeconfig: Path) -> None:
    """The official client: a ConfigMap created by the typed API, then applied through the dynamic client's
    `server_side_apply`, then patched to drop a key and a label the applier set and to add another label. The
    applier keeps only what is still there, and `managedFields` are in the apiserver's order: the Apply entry
    first, then the Update ones by time and manager."""
    from kubernetes import client, config
    from kubernetes.dynamic import DynamicClient

    with config.new_client_from_config(str(kubeconfig)) as api:
        core = client.CoreV1Api(api)
        core.create_namespaced_config_map("default", _configmap("py36", {"a": "1"}), field_manager="creator")
        configmaps = DynamicClient(api).resources.get(api_version="v1", kind="ConfigMap")
        configmaps.server_side_apply(
            body=_configmap("py36", {"a": "1", "b": "2"}, team="x"), namespace="default", field_manager="applier"
        )
        patched = core.patch_namespaced_config_map(
            "py36",
            "default",
            {"metadata": {"labels": {"team": None, "tier": "batch"}}, "data": {"b": None}},
            field_manager="editor",
        )
        assert patched.data == {"a": "1"} and patched.metadata.labels == {"tier": "batch"}
        entries = [(m.manager, m.operation, m.fields_v1) for m in patched.metadata.managed_fields]
        assert entries[0] == ("applier", "Apply", {"f:data": {"f:a": {}}})
        # (what each Update entry holds is kjobs' simpler reckoning: no `.` for a map the write added)
        assert [(manager, operation) for manager, operation, _ in entries[1:]] == [
            ("creator", "Update"),  # earlier, or in the same second and first by name
            ("editor", "Update"),
        ]


def test_kubernetes_replace_from_a_manifest_keeps_the_other_managers(kubeconfig: Path) -> None:
    """`replace_namespaced_config_map` with a manifest (no managedFields in it, as a file written by hand or by
    `kubectl get` is): the apiserver starts from the live managedFields, so the labeller keeps its label and the
    replacer owns only the key it added."""
    from kubernetes import client, config

    with config.new_client_from_config(str(kubeconfig)) as api:
        core = client.CoreV1Api(api)
        core.create_namespaced_config_map("default", _configmap("rp36", {"a": "1"}), field_manager="creator")
        core.patch_namespaced_config_map(
            "rp36", "default", {"metadata": {"labels": {"x": "y"}}}, field_manager="tagger"
        )
        replaced = core.replace_namespaced_config_map(
            "rp36", "default", _configmap("rp36", {"a": "1", "b": "2"}, x="y"), field_manager="replacer"
        )
        owners = {m.manager: m.fields_v1 for m in replaced.metadata.managed_fields}
        assert owners == {
            "creator": {"f:data": {".": {}, "f:a": {}}},  # each made the map it set: its `.` (SMD's Compare)
            "tagger": {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}},
            "replacer": {"f:data": {"f:b": {}}},
        }
