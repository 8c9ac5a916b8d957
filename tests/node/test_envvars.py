"""Container environment, downward API and $(VAR) expansion as the kubelet does them."""

from __future__ import annotations

import base64

import pytest

from kjobs.node.envvars import ConfigError, container_command, container_env, env_references, expand
from tests.node.helpers import make_pod

VARS = {"A": "alpha", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("$(A)", "alpha", id="defined"),
        pytest.param("x-$(A)-y", "x-alpha-y", id="inside"),
        pytest.param("$(MISSING)", "$(MISSING)", id="undefined-kept"),
        pytest.param("$$(A)", "$(A)", id="escaped"),
        pytest.param("$$", "$", id="double-dollar"),
        pytest.param("$(A", "$(A", id="incomplete"),
        pytest.param("$A", "$A", id="no-parens"),
        pytest.param("cost $", "cost $", id="trailing-dollar"),
        pytest.param("$(EMPTY)x", "x", id="empty-value"),
        pytest.param("$(A)$(A)", "alphaalpha", id="adjacent"),
    ],
)
def test_expand(text: str, expected: str) -> None:
    assert expand(text, VARS.get) == expected


def test_env_values_fieldrefs_and_order() -> None:
    pod = make_pod()
    pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] = "7"
    pod["metadata"]["annotations"]["note"] = "hello"
    pod["spec"]["nodeName"] = "node-1"
    container = {
        "name": "main",
        "env": [
            {"name": "LATER_REF", "value": "$(INDEX)"},
            {
                "name": "JOB_COMPLETION_INDEX",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}},
            },
            {"name": "INDEX", "value": "i=$(JOB_COMPLETION_INDEX)"},
            {"name": "NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "NOTE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['note']"}}},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
        ],
    }
    env = container_env(pod, container, host_ip="10.0.0.1", pod_ip="10.0.0.2")
    assert env == {
        "LATER_REF": "$(INDEX)",
        "JOB_COMPLETION_INDEX": "7",
        "INDEX": "i=7",
        "NAME": "job-0-abcde",
        "NS": "ns",
        "UID": "uid-1",
        "NODE": "node-1",
        "NOTE": "hello",
        "POD_IP": "10.0.0.2",
        "HOST_IP": "10.0.0.1",
    }


def test_whole_label_and_annotation_maps_and_plural_ips() -> None:
    pod = make_pod()
    pod["metadata"]["labels"] = {"b": "2", "a": "1"}
    pod["metadata"]["annotations"] = {}
    pod["spec"]["serviceAccountName"] = "robot"
    container = {
        "env": [
            {"name": "LABELS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels"}}},
            {"name": "ANNOTATIONS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations"}}},
            {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
            {"name": "POD_IPS", "valueFrom": {"fieldRef": {"fieldPath": "status.podIPs"}}},
            {"name": "HOST_IPS", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIPs"}}},
        ]
    }
    env = container_env(pod, container, host_ip="10.0.0.1", pod_ip="10.0.0.2")
    assert env == {
        "LABELS": 'a="1"\nb="2"',  # sorted, one per line, as the kubelet formats them
        "ANNOTATIONS": "",
        "SA": "robot",
        "POD_IPS": "10.0.0.2",
        "HOST_IPS": "10.0.0.1",
    }


def test_command_and_args_expand_against_the_final_env() -> None:
    container = {"command": ["sh", "-c", "echo $(MSG) $$(MSG)"], "args": ["$(MSG)", "$(NOPE)"]}
    assert container_command(container, {"MSG": "hi"}) == ["sh", "-c", "echo hi $(MSG)", "hi", "$(NOPE)"]


def test_resource_field_ref() -> None:
    container = {
        "name": "main",
        "resources": {"limits": {"memory": "64Mi"}},
        "env": [{"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}}],
    }
    assert container_env(make_pod(), container)["MEM"] == "64"


@pytest.mark.parametrize(
    ("item", "message"),
    [
        pytest.param(
            {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}},
            'configmap "cfg" not found',
            id="configmap",
        ),
        pytest.param(
            {"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.bogus"}}},
            'unsupported fieldPath: "spec.bogus"',
            id="bad-fieldpath",
        ),
    ],
)
def test_unresolvable_env_is_a_config_error(item: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        container_env(make_pod(), {"name": "main", "env": [item]})


CM = {"metadata": {"name": "app"}, "data": {"MODE": "fast", "LEVEL": "3", "bad=name": "x"}}
SECRET = {"metadata": {"name": "creds"}, "type": "Opaque", "data": {"TOKEN": base64.b64encode(b"s3cr3t").decode()}}
SOURCES = {("configmap", "app"): CM, ("secret", "creds"): SECRET, ("configmap", "gone"): None}


def test_env_from_first_then_env_later_wins_with_prefix_and_expansion() -> None:
    container = {
        "name": "main",
        "envFrom": [
            {"configMapRef": {"name": "app"}},
            {"secretRef": {"name": "creds"}, "prefix": "DB_"},
            {"configMapRef": {"name": "gone", "optional": True}},
        ],
        "env": [
            {"name": "LEVEL", "value": "9"},
            {"name": "URL", "value": "db://$(DB_TOKEN)@$(MODE)"},
            {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "TOKEN"}}},
            {"name": "M", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "MODE"}}},
            {"name": "OPT", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "nope", "optional": True}}},
        ],
    }
    env = container_env(make_pod(), container, sources=SOURCES)
    assert env == {
        "MODE": "fast",
        "LEVEL": "9",
        "DB_TOKEN": "s3cr3t",
        "URL": "db://s3cr3t@fast",
        "KEY": "s3cr3t",
        "M": "fast",
    }
    assert env_references({"spec": {"containers": [container]}}) == {
        ("configmap", "app"),
        ("secret", "creds"),
        ("configmap", "gone"),
    }
    assert env_references(make_pod()) == frozenset()


@pytest.mark.parametrize(
    ("item", "message"),
    [
        pytest.param(
            {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "app", "key": "k"}}},
            "couldn't find key k in ConfigMap ns/app",
            id="configmap-key",
        ),
        pytest.param(
            {"name": "X", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "k"}}},
            "couldn't find key k in Secret ns/creds",
            id="secret-key",
        ),
        pytest.param(
            {"name": "X", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}},
            'secret "other" not found',
            id="secret",
        ),
    ],
)
def test_a_missing_key_or_object_is_the_kubelets_error(item: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        container_env(make_pod(), {"name": "main", "env": [item]}, sources=SOURCES)
    assert str(raised.value) == message


def test_a_missing_env_from_object_is_an_error_unless_optional() -> None:
    with pytest.raises(ConfigError, match=r'^configmap "gone" not found$'):
        container_env(make_pod(), {"name": "main", "envFrom": [{"configMapRef": {"name": "gone"}}]}, sources=SOURCES)


def test_optional_missing_reference_is_skipped() -> None:
    item = {"name": "X", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": True}}}
    assert container_env(make_pod(), {"name": "main", "env": [item]}) == {}
