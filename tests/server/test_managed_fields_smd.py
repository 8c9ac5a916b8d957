"""`managedFields` as structured-merge-diff v4.4.2 (the one Kubernetes v1.32 vendors) computes them, by type.

Update entries are `TypedValue.Compare(old, new)`'s Added and Modified (typed/compare.go): a granular map or list
the old object lacks owns its `.` member; an atomic map (`x-kubernetes-map-type: atomic`) or list is one leaf; the
old object on create is the kind's Go zero value, whose non-pointer structs (`metadata`, `spec`, `template`) are
there. Apply entries are `ToFieldSet` of the configuration (typed/tofieldset.go). The rows whose id names an
upstream test are that test's case recast on a Kubernetes kind with the same shape (docs/managed-fields.md)."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import orjson
import pytest

from kjobs.api.types import Obj
from kjobs.server import apply, fieldtrees, schema

CRONJOBS = "/apis/batch/v1/namespaces/default/cronjobs"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
APPLY = {"content-type": "application/apply-patch+yaml"}
POD = schema.strategies_for(schema.schema_name("", "v1", "Pod"))
JOB = schema.strategies_for(schema.schema_name("batch", "v1", "Job"))


def _cronjob(env: list[Obj] | None = None, labels: dict[str, str] | None = None) -> Obj:
    container: Obj = {"name": "main", "image": "busybox", "command": ["true"]}
    if env is not None:
        container["env"] = env
    template: Obj = {"spec": {"restartPolicy": "Never", "containers": [container]}}
    if labels is not None:
        template["metadata"] = {"labels": labels}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "c"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}},
    }


def _key_ref(**ref: Any) -> list[Obj]:
    return [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", **ref}}}]


def _apply(http: httpx.Client, body: Obj, manager: str, *, force: bool = False) -> httpx.Response:
    params: dict[str, str] = {"fieldManager": manager}
    if force:
        params["force"] = "true"
    name = body["metadata"]["name"]
    plural = CRONJOBS if body["kind"] == "CronJob" else CONFIGMAPS
    return http.patch(f"{plural}/{name}", params=params, content=orjson.dumps(body), headers=APPLY)


def _entry(obj: Obj, manager: str) -> Obj:
    [entry] = [e for e in obj["metadata"]["managedFields"] if e["manager"] == manager]
    return entry["fieldsV1"]  # type: ignore[no-any-return]


def _container(tree: Obj) -> Obj:
    jobs = tree["f:spec"]["f:jobTemplate"]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    return jobs['k:{"name":"main"}']  # type: ignore[no-any-return]


# --- 1. Atomic maps and lists are leaves ---------------------------------------------------------------------


def test_an_atomic_map_is_one_leaf_of_an_update_entry() -> None:
    old: Obj = {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["env"] = _key_ref(key="k")
    new["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]
            }
        }
    }
    tree = fieldtrees.changed_fields_v1(old, new, POD)
    container = tree["f:spec"]["f:containers"]['k:{"name":"main"}']
    assert container == {
        "f:env": {".": {}, 'k:{"name":"X"}': {".": {}, "f:name": {}, "f:valueFrom": {".": {}, "f:configMapKeyRef": {}}}}
    }
    affinity = tree["f:spec"]["f:affinity"]
    assert affinity == {".": {}, "f:nodeAffinity": {".": {}, "f:requiredDuringSchedulingIgnoredDuringExecution": {}}}
    # a change inside the atomic map is a change of the map
    changed = copy.deepcopy(new)
    changed["spec"]["containers"][0]["env"][0]["valueFrom"]["configMapKeyRef"]["key"] = "other"
    again = fieldtrees.changed_fields_v1(new, changed, POD)
    assert again == {
        "f:spec": {
            "f:containers": {
                'k:{"name":"main"}': {"f:env": {'k:{"name":"X"}': {"f:valueFrom": {"f:configMapKeyRef": {}}}}}
            }
        }
    }


def test_owner_references_are_atomic_elements_of_a_keyed_list() -> None:
    pod: Obj = {
        "metadata": {
            "name": "p",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u"}],
        },
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    tree = apply.fields_v1_of(pod, POD)
    assert tree["f:metadata"] == {"f:ownerReferences": {".": {}, 'k:{"uid":"u"}': {}}}
    applied = apply.field_set(pod, POD)
    assert ("f:metadata", "f:ownerReferences", 'k:{"uid":"u"}') in applied  # the element, no `.` of its own
    assert not any(len(p) > 3 and p[1] == "f:ownerReferences" for p in applied)


def test_an_atomic_map_is_one_leaf_of_an_apply_entry(http: httpx.Client) -> None:
    applied = _apply(http, _cronjob(_key_ref(key="k", optional=True)), "a")
    assert applied.status_code == 201, applied.text
    env = _container(_entry(applied.json(), "a"))["f:env"]
    assert env == {'k:{"name":"X"}': {".": {}, "f:name": {}, "f:valueFrom": {"f:configMapKeyRef": {}}}}


def test_two_appliers_disagreeing_on_an_atomic_map_conflict_on_the_maps_path(http: httpx.Client) -> None:
    assert _apply(http, _cronjob(_key_ref(key="k", optional=True)), "a").status_code == 201
    # b wants the same name and key, without `optional`: a different value of the one leaf
    refused = _apply(http, _cronjob(_key_ref(key="k")), "b")
    assert refused.status_code == 409, refused.text
    path = '.spec.jobTemplate.spec.template.spec.containers[name="main"].env[name="X"].valueFrom.configMapKeyRef'
    assert refused.json()["message"] == f'Apply failed with 1 conflict: conflict with "a": {path}'
    # forced, it replaces the map whole (a merge would have kept `optional`) and takes it from a
    forced = _apply(http, _cronjob(_key_ref(key="k")), "b", force=True)
    assert forced.status_code == 200, forced.text
    container = forced.json()["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["env"][0]["valueFrom"]["configMapKeyRef"] == {"name": "cm", "key": "k"}
    # a keeps the element and its name; its valueFrom held nothing else (an Apply entry has no map `.`)
    assert _container(_entry(forced.json(), "a"))["f:env"] == {'k:{"name":"X"}': {".": {}, "f:name": {}}}


def test_an_applier_that_stops_naming_a_key_of_an_atomic_map_drops_it(http: httpx.Client) -> None:
    assert _apply(http, _cronjob(_key_ref(key="k", optional=True)), "a").status_code == 201
    again = _apply(http, _cronjob(_key_ref(key="k")), "a")
    assert again.status_code == 200, again.text
    container = again.json()["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["env"][0]["valueFrom"]["configMapKeyRef"] == {"name": "cm", "key": "k"}


def test_a_list_without_a_list_type_or_atomic_is_one_leaf() -> None:
    old: Obj = {"spec": {"containers": [{"name": "main", "image": "busybox", "command": ["a"]}]}}
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["command"] = ["a", "b"]
    new["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]  # x-kubernetes-list-type: atomic
    tree = fieldtrees.changed_fields_v1(old, new, POD)
    assert tree == {"f:spec": {"f:containers": {'k:{"name":"main"}': {"f:command": {}}}, "f:tolerations": {}}}


# --- 2. `.` members on Update ----------------------------------------------------------------------------------


def test_a_create_compares_with_the_zero_value_of_the_kind() -> None:
    job: Obj = {
        "metadata": {"name": "j", "labels": {"app": "x"}},
        "spec": {
            "manualSelector": True,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "busybox",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "livenessProbe": {"exec": {"command": ["true"]}},
                        }
                    ],
                },
            },
        },
    }
    assert apply.fields_v1_of(job, JOB) == {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {
            "f:manualSelector": {},
            "f:selector": {},  # atomic
            "f:template": {  # a non-pointer struct: in the zero value, no `.`
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:containers": {  # a slice without omitempty: null in the zero value, no `.`
                        'k:{"name":"main"}': {
                            ".": {},
                            "f:image": {},
                            "f:livenessProbe": {".": {}, "f:exec": {".": {}, "f:command": {}}},
                            "f:name": {},
                            "f:ports": {
                                ".": {},
                                'k:{"containerPort":80,"protocol":"TCP"}': {
                                    ".": {},
                                    "f:containerPort": {},
                                    "f:protocol": {},
                                },
                            },
                            "f:resources": {},  # a non-pointer struct of a new element: `{}` where there was nothing
                        }
                    },
                    "f:restartPolicy": {},
                },
            },
        },
    }


def test_an_update_adds_the_dot_of_maps_and_lists_the_old_object_lacks() -> None:
    old: Obj = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    new["metadata"]["finalizers"] = ["x/y"]
    new["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    tree = fieldtrees.changed_fields_v1(old, new, POD)
    assert tree == {
        "f:metadata": {"f:finalizers": {".": {}, 'v:"x/y"': {}}, "f:labels": {".": {}, "f:a": {}}},
        "f:spec": {
            "f:containers": {
                'k:{"name":"main"}': {"f:env": {".": {}, 'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}}}}
            }
        },
    }
    more = copy.deepcopy(new)  # the maps and lists are there now: their new members own no `.`
    more["metadata"]["labels"]["c"] = "d"
    more["spec"]["containers"][0]["env"].append({"name": "B", "value": "2"})
    assert fieldtrees.changed_fields_v1(new, more, POD) == {
        "f:metadata": {"f:labels": {"f:c": {}}},
        "f:spec": {
            "f:containers": {'k:{"name":"main"}': {"f:env": {'k:{"name":"B"}': {".": {}, "f:name": {}, "f:value": {}}}}}
        },
    }


# --- 3. Empty maps and lists an applier sends -------------------------------------------------------------------

EMPTIES = [
    # nested_test.go TestUpdateNestedType "struct_apply_remove_dangling": a null struct is owned
    pytest.param({"affinity": None}, {("f:spec", "f:affinity")}, id="struct_apply_remove_dangling"),
    # visitMapItems: an empty map is owned as a leaf
    pytest.param({"affinity": {}}, {("f:spec", "f:affinity")}, id="empty-map"),
    # doList: an empty granular list (`volumes`, x-kubernetes-list-type: map) is nobody's
    pytest.param({"volumes": []}, set(), id="empty-granular-list"),
]


@pytest.mark.parametrize(("spec", "owned"), EMPTIES)
def test_empty_values_in_an_applied_configuration(spec: Obj, owned: set[apply.FieldPath]) -> None:
    assert apply.field_set({"spec": spec}, POD) == owned


def test_an_empty_atomic_list_an_applier_sends_is_owned() -> None:
    assert apply.field_set({"spec": {"tolerations": []}}, POD) == {("f:spec", "f:tolerations")}


def test_an_empty_map_an_update_sets_where_there_was_none_is_a_leaf() -> None:
    old: Obj = {"metadata": {"name": "c"}}
    assert fieldtrees.changed_fields_v1(old, {**old, "data": {}}, schema.strategies_for(None)) == {"f:data": {}}
    # and emptying a map that had keys changes no member of its own: its keys are Removed
    full: Obj = {**old, "data": {"a": "1"}}
    assert fieldtrees.changed_fields_v1(full, {**old, "data": {}}, schema.strategies_for(None)) == {}
    assert fieldtrees.changed_fields_v1({**old, "data": {}}, full, schema.strategies_for(None)) == {
        "f:data": {"f:a": {}}
    }


def test_the_kubectl_create_configmap_entry(http: httpx.Client) -> None:
    created = http.post(
        CONFIGMAPS,
        params={"fieldManager": "kubectl-create"},
        json={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "creationTimestamp": None},
            "data": {"a": "b"},
        },
    )
    assert created.status_code == 201, created.text
    assert _entry(created.json(), "kubectl-create") == {"f:data": {".": {}, "f:a": {}}}


# --- List types from `x-kubernetes-list-type`, not the patch strategy --------------------------------------------


def test_a_jobs_conditions_are_an_atomic_list_and_a_pods_a_keyed_one() -> None:
    # JobStatus.conditions is `+listType=atomic` (with a strategic-merge key); PodStatus.conditions is a list map.
    condition = {"type": "Complete", "status": "True"}
    job = fieldtrees.changed_fields_v1({"status": {}}, {"status": {"conditions": [condition]}}, JOB, status=True)
    assert job == {"f:status": {"f:conditions": {}}}
    pod = fieldtrees.changed_fields_v1({"status": {}}, {"status": {"conditions": [condition]}}, POD, status=True)
    assert pod == {
        "f:status": {"f:conditions": {".": {}, 'k:{"type":"Complete"}': {".": {}, "f:status": {}, "f:type": {}}}}
    }
    host = fieldtrees.changed_fields_v1({"status": {}}, {"status": {"hostIPs": [{"ip": "10.0.0.1"}]}}, POD, status=True)
    assert host == {"f:status": {"f:hostIPs": {}}}  # atomic too


def test_a_list_map_element_is_named_by_all_its_keys_a_missing_one_by_its_default() -> None:
    # ports: x-kubernetes-list-map-keys [containerPort, protocol]; protocol's `+default="TCP"` (types.go)
    config: Obj = {"spec": {"containers": [{"name": "main", "ports": [{"containerPort": 80}]}]}}
    element = ("f:spec", "f:containers", 'k:{"name":"main"}', "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}')
    assert (*element, ".") in apply.field_set(config, POD)
    spread = {"topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1}
    tree = fieldtrees.changed_fields_v1({"spec": {}}, {"spec": {"topologySpreadConstraints": [spread]}}, POD)
    assert list(tree["f:spec"]["f:topologySpreadConstraints"]) == [
        ".",
        'k:{"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}',
    ]
