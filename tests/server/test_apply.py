"""Server-side apply: field ownership in managedFields, conflicts with other managers, removal of dropped fields."""

from __future__ import annotations

import httpx
import orjson
import pytest

from kjobs.server import apply, schema
from tests.server.conftest import job_manifest

JOBS = "/apis/batch/v1/namespaces/default/jobs"
APPLY = {"content-type": "application/apply-patch+yaml"}
JOB_STRATEGIES = schema.strategies_for(schema.schema_name("batch", "v1", "Job"))


def _apply(http: httpx.Client, body: object, manager: str, *, force: bool = False) -> httpx.Response:
    params = {"fieldManager": manager, "fieldValidation": "Strict"}
    if force:
        params["force"] = "true"
    return http.patch(f"{JOBS}/ssa", params=params, content=orjson.dumps(body), headers=APPLY)


def _managers(job: dict[str, object]) -> dict[tuple[str, str], set[str]]:
    result = {}
    for entry in job["metadata"]["managedFields"]:  # type: ignore[index]
        paths = apply.from_fields_v1(entry["fieldsV1"])
        result[(entry["manager"], entry["operation"])] = {apply.format_path(p) for p in paths}
    return result


def test_field_set_uses_merge_keys() -> None:
    job = job_manifest("x")
    paths = {apply.format_path(p) for p in apply.field_set(job, JOB_STRATEGIES)}
    assert '.spec.template.spec.containers[name="main"].image' in paths
    assert '.spec.template.spec.containers[name="main"].command' in paths  # atomic list: one leaf
    assert ".metadata.labels.app" in paths and ".metadata.name" not in paths


def test_apply_creates_then_owns_and_removes_dropped_fields(http: httpx.Client) -> None:
    config = job_manifest("ssa", backoffLimit=3)
    config["metadata"]["labels"]["extra"] = "1"  # type: ignore[index]
    created = _apply(http, config, "alice")
    assert created.status_code == 201
    owned = _managers(created.json())[("alice", "Apply")]
    assert {".spec.backoffLimit", ".metadata.labels.extra"} <= owned
    del config["metadata"]["labels"]["extra"]  # type: ignore[index]
    updated = _apply(http, config, "alice")
    assert updated.status_code == 200
    assert "extra" not in updated.json()["metadata"]["labels"]  # no longer applied, nobody else owns it


def test_conflicting_apply_is_409_unless_forced(http: httpx.Client) -> None:
    assert _apply(http, job_manifest("ssa", backoffLimit=3), "alice").status_code == 201
    same = _apply(http, job_manifest("ssa", backoffLimit=3), "bob")
    assert same.status_code == 200  # same value: shared ownership, no conflict
    clash = _apply(http, job_manifest("ssa", backoffLimit=5), "bob")
    assert clash.status_code == 409
    status = clash.json()
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.backoffLimit'
    assert status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "alice"',  # an applier's identifier has no version (printManager)
            "field": ".spec.backoffLimit",
        }
    ]
    forced = _apply(http, job_manifest("ssa", backoffLimit=5), "bob", force=True)
    assert forced.status_code == 200 and forced.json()["spec"]["backoffLimit"] == 5
    managers = _managers(forced.json())
    assert ".spec.backoffLimit" in managers[("bob", "Apply")]
    assert ".spec.backoffLimit" not in managers[("alice", "Apply")]


def test_an_update_takes_ownership_from_the_applier(http: httpx.Client) -> None:
    assert _apply(http, job_manifest("ssa", backoffLimit=3), "alice").status_code == 201
    patch = http.patch(
        f"{JOBS}/ssa",
        params={"fieldManager": "editor"},
        content=b'{"spec":{"backoffLimit":4}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    managers = _managers(patch.json())
    assert managers[("editor", "Update")] == {".spec.backoffLimit"}
    assert ".spec.backoffLimit" not in managers[("alice", "Apply")]
    # re-applying the old value now conflicts with the editor
    again = _apply(http, job_manifest("ssa", backoffLimit=3), "alice")
    assert again.status_code == 409 and 'conflict with "editor" using batch/v1' in again.json()["message"]


@pytest.mark.parametrize("manager", [None, ""])
def test_apply_needs_a_field_manager(http: httpx.Client, manager: str | None) -> None:
    params = {} if manager is None else {"fieldManager": manager}
    response = http.patch(f"{JOBS}/ssa", params=params, content=orjson.dumps(job_manifest("ssa")), headers=APPLY)
    assert response.status_code == 422  # ValidatePatchOptions, before the body is read
    assert response.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"apiVersion": None, "kind": None}, "invalid object type: /, Kind=", id="neither"),
        pytest.param({"kind": None}, "invalid object type: batch/v1, Kind=", id="no-kind"),
        pytest.param({"apiVersion": "v1"}, "invalid object type: /v1, Kind=Job", id="core-version"),
        pytest.param({"apiVersion": "batch/v1beta1"}, "invalid object type: batch/v1beta1, Kind=Job", id="version"),
        pytest.param({"kind": "CronJob"}, "invalid object type: batch/v1, Kind=CronJob", id="kind"),
    ],
)
@pytest.mark.parametrize("exists", [False, True])
def test_apply_of_another_type_is_a_bad_request(
    http: httpx.Client, change: dict[str, str | None], message: str, exists: bool
) -> None:
    """The field manager refuses a configuration that does not name the endpoint's group, version and kind
    (a patch body without them, as a hand-written `{"spec": ...}` sent as apply) before merging anything."""
    if exists:
        assert _apply(http, job_manifest("ssa"), "alice").status_code == 201
    config = {**job_manifest("ssa"), **change}
    response = _apply(http, {k: v for k, v in config.items() if v is not None}, "bob")
    assert response.status_code == 400
    assert response.json() | {"metadata": {}} == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "BadRequest",
        "code": 400,
    }
    assert (http.get(f"{JOBS}/ssa").status_code == 200) is exists


def test_apply_with_managed_fields_is_a_bad_request(http: httpx.Client) -> None:
    created = _apply(http, job_manifest("ssa"), "alice").json()
    config = job_manifest("ssa")
    config["metadata"]["managedFields"] = created["metadata"]["managedFields"]  # type: ignore[index]
    response = _apply(http, config, "alice")
    assert (response.status_code, response.json()["message"]) == (400, "metadata.managedFields must be nil")


def test_apply_with_a_stale_resource_version_is_409(http: httpx.Client) -> None:
    """A resourceVersion in the applied configuration is a precondition, as in any write (it is not retried)."""
    created = _apply(http, job_manifest("ssa", backoffLimit=3), "alice").json()
    config = job_manifest("ssa", backoffLimit=4)
    config["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]  # type: ignore[index]
    assert _apply(http, config, "alice").status_code == 200
    config["metadata"]["labels"]["later"] = "1"  # type: ignore[index]
    stale = _apply(http, config, "alice")
    assert stale.status_code == 409
    assert stale.json()["message"] == (
        'Operation cannot be fulfilled on jobs.batch "ssa": the object has been modified; please apply your '
        "changes to the latest version and try again"
    )


CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _configmap(data: dict[str, str], *, last_applied: bool = False) -> dict[str, object]:
    config: dict[str, object] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "csa"}, "data": data}
    if last_applied:  # what `kubectl apply` (client-side) sends: the configuration in the annotation
        text = orjson.dumps(config, option=orjson.OPT_SORT_KEYS).decode() + "\n"
        config = {**config, "metadata": {"name": "csa", "annotations": {LAST_APPLIED: text}}}
    return config


def _apply_cm(http: httpx.Client, body: object, manager: str) -> httpx.Response:
    params = {"fieldManager": manager, "fieldValidation": "Strict"}
    return http.patch(f"{CONFIGMAPS}/csa", params=params, content=orjson.dumps(body), headers=APPLY)


def test_kubectl_server_side_apply_keeps_the_client_side_annotation_in_step(http: httpx.Client) -> None:
    # lastappliedupdater.go: an apply by the `kubectl` manager rewrites an existing last-applied annotation to
    # the configuration applied, so a later client-side apply diffs against it (test/cmd apply.txtar's
    # CSA -> SSA migration: the field the server-side apply added is removed by the next client-side apply).
    created = http.post(
        CONFIGMAPS,
        params={"fieldManager": "kubectl-client-side-apply"},
        json=_configmap({"key": "value", "legacy": "unused"}, last_applied=True),
    )
    assert created.status_code == 201
    applied = _apply_cm(http, _configmap({"key": "value", "ssaKey": "ssaValue"}), "kubectl")
    assert applied.status_code == 200, applied.text
    annotation = applied.json()["metadata"]["annotations"][LAST_APPLIED]
    assert annotation == (
        '{"apiVersion":"v1","data":{"key":"value","ssaKey":"ssaValue"},"kind":"ConfigMap","metadata":{"name":"csa"}}\n'
    )
    other = _apply_cm(http, _configmap({"key": "value", "other": "x"}), "someone-else")
    assert other.json()["metadata"]["annotations"][LAST_APPLIED] == annotation  # only kubectl's applies


def test_kubectl_server_side_apply_takes_fields_a_client_side_apply_set_without_force(http: httpx.Client) -> None:
    # lastappliedmanager.go: a conflict with the fields the last-applied annotation names, still as the object
    # has them, does not stop `kubectl apply --server-side` (the upgrade from client-side apply); another
    # manager's apply, or a field the annotation does not name, still conflicts.
    created = http.post(
        CONFIGMAPS,
        params={"fieldManager": "kubectl-client-side-apply"},
        json=_configmap({"key": "v1"}, last_applied=True),
    )
    assert created.status_code == 201
    assert _apply_cm(http, _configmap({"key": "v2"}), "not-kubectl").status_code == 409
    upgraded = _apply_cm(http, _configmap({"key": "v2"}), "kubectl")
    assert upgraded.status_code == 200, upgraded.text
    owners = {e["manager"]: e for e in upgraded.json()["metadata"]["managedFields"]}
    assert "f:key" in owners["kubectl"]["fieldsV1"]["f:data"]
    # It keeps the data map's own member (`.`), as SMD leaves it: the map is still there. With no child left,
    # fieldpath/serialize.go writes that member as `{}` (a `.` is written only beside children).
    assert owners["kubectl-client-side-apply"]["fieldsV1"]["f:data"] == {}


def test_a_pods_creator_does_not_own_what_admission_sets(http: httpx.Client) -> None:
    # The create handler records managed fields before mutating admission (handlers/create.go): the
    # ServiceAccount and default toleration plugins' fields belong to nobody, so an apply by the creator that
    # leaves them out does not drop them (the pod update would be Forbidden).
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "adm"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }
    created = http.post("/api/v1/namespaces/default/pods", params={"fieldManager": "creator"}, json=pod)
    assert created.status_code == 201
    spec = created.json()["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    assert "f:serviceAccountName" not in spec and "f:serviceAccount" not in spec and "f:tolerations" not in spec
    assert "f:enableServiceLinks" in spec  # a default the decoder applies is the creator's


@pytest.mark.parametrize("validation", ["", "Ignore", "Strict"])
def test_an_applied_field_the_schema_lacks_cannot_be_typed(http: httpx.Client, validation: str) -> None:
    """structuredmerge.go types the configuration before any field validation: a field the Job schema lacks is
    refused with structured-merge-diff's paths (a keyed list's element by its key), never recorded as owned.
    kube-apiserver v1.32 answers 500 with this message (kubernetes#122480); kjobs 400, as kubernetes#139255."""
    job = job_manifest("typed")
    job["metadata"]["namespace"] = "default"
    job["spec"]["bogus"] = 1
    job["spec"]["template"]["spec"]["containers"][0]["imag"] = "x"
    response = http.patch(
        f"{JOBS}/typed",
        params={"fieldManager": "m", "fieldValidation": validation},
        content=orjson.dumps(job),
        headers=APPLY,
    )
    assert response.status_code == 400, response.text
    head, *causes = response.json()["message"].split("\n")
    assert head == "failed to create typed patch object (default/typed; batch/v1, Kind=Job): errors:"
    # the converter walks a map in Go's map order, so a cluster lists these in either order
    assert sorted(causes) == [
        "  .spec.bogus: field not declared in schema",
        '  .spec.template.spec.containers[name="main"].imag: field not declared in schema',
    ]
    assert http.get(f"{JOBS}/typed").status_code == 404
    del job["spec"]["bogus"], job["spec"]["template"]["spec"]["containers"][0]["imag"]
    job["status"] = {"bogus": True}
    status = http.patch(f"{JOBS}/typed", params={"fieldManager": "m"}, content=orjson.dumps(job), headers=APPLY)
    assert status.json()["message"].endswith("): .status.bogus: field not declared in schema")
    del job["status"]
    created = http.patch(f"{JOBS}/typed", params={"fieldManager": "m"}, content=orjson.dumps(job), headers=APPLY)
    assert created.status_code == 201


def test_a_manager_forced_out_of_all_it_owned_has_no_entry(http: httpx.Client) -> None:
    """structured-merge-diff's `update` drops a manager whose set a forced apply emptied: no `fieldsV1: {}`
    entry is left behind for the applier who lost its only field."""
    assert _apply_cm(http, _configmap({"a": "1"}), "alice").status_code == 201
    forced = http.patch(
        f"{CONFIGMAPS}/csa",
        params={"fieldManager": "bob", "force": "true"},
        content=orjson.dumps(_configmap({"a": "2"})),
        headers=APPLY,
    )
    assert forced.status_code == 200
    assert [(e["manager"], e["fieldsV1"]) for e in forced.json()["metadata"]["managedFields"]] == [
        ("bob", {"f:data": {"f:a": {}}})
    ]


def test_fields_an_update_removes_leave_their_owners(http: httpx.Client) -> None:
    """A merge patch that deletes an applied data key and label: the applier no longer owns them
    (`compare.Removed` is taken from every manager), and the patch's manager, having only removed, owns nothing
    and gets no entry (nor ownership of the emptied `labels`)."""
    config = _configmap({"a": "1", "b": "2"})
    config["metadata"] = {"name": "csa", "labels": {"x": "1"}}
    assert _apply_cm(http, config, "alice").status_code == 201
    patched = http.patch(
        f"{CONFIGMAPS}/csa",
        params={"fieldManager": "editor"},
        content=b'{"metadata":{"labels":{"x":null}},"data":{"b":null}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200
    assert [(e["manager"], e["fieldsV1"]) for e in patched.json()["metadata"]["managedFields"]] == [
        ("alice", {"f:data": {"f:a": {}}})
    ]


def test_managed_fields_are_in_the_apiservers_order(http: httpx.Client) -> None:
    """Every write re-sorts `managedFields` as `sortEncodedManagedFields` does: Apply entries before Update ones,
    then by time, manager name, apiVersion and subresource; an applier that came last stands first."""
    created = http.post(CONFIGMAPS, params={"fieldManager": "creator"}, json=_configmap({"a": "1"}))
    assert created.status_code == 201
    assert _apply_cm(http, _configmap({"a": "1", "b": "2"}), "zed").status_code == 200
    labelled = http.patch(
        f"{CONFIGMAPS}/csa",
        params={"fieldManager": "labeller"},
        content=b'{"metadata":{"labels":{"x":"1"}}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    entries = labelled.json()["metadata"]["managedFields"]
    assert (entries[0]["manager"], entries[0]["operation"]) == ("zed", "Apply")
    updates = [(e["time"], e["manager"]) for e in entries[1:]]
    assert updates == sorted(updates) and {m for _, m in updates} == {"creator", "labeller"}
