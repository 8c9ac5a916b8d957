"""Protobuf request bodies (captured from kubectl 1.32), decoded to the objects they stand for with the generated
field table (`data/protobuf-v1.32.json`)."""

from __future__ import annotations

import pytest

from kjobs.api.errors import ApiError
from kjobs.server import protobuf, schema

# kubectl create job x --image=busybox:1.36 -- sh -c "echo hi"   (POST /apis/batch/v1/namespaces/default/jobs)
CREATE_JOB = bytes.fromhex(
    "6b3873000a0f0a0862617463682f763112034a6f62128e010a110a017812001a0022002a00320038004200126f326d0a100a0012001a"
    "0022002a00320038004200125912360a0178120c62757379626f783a312e33361a0273681a022d631a076563686f2068692a0042006a"
    "007200800100880100900100a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a0820002800"
    "30003a001a002200"
)


# kubectl create namespace x1
CREATE_NAMESPACE = bytes.fromhex(
    "6b3873000a0f0a02763112094e616d657370616365121a0a120a02783112001a0022002a0032003800420012001a020a001a002200"
)

# kubectl create priorityclass pc1 --value=10 --description=hi --preemption-policy=Never
CREATE_PRIORITY_CLASS = bytes.fromhex(
    "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c61737312240a130a037063311200"
    "1a0022002a00320038004200100a1800220268692a054e657665721a002200"
)

# kubectl create pdb pdb1 --selector=a=b --min-available=50%
CREATE_PDB = bytes.fromhex(
    "6b3873000a200a09706f6c6963792f76311213506f6444697372757074696f6e42756467657412390a140a047064623112001a002200"
    "2a0032003800420012150a09080110001a0335302512080a060a01611201621a0a080018002000280030001a002200"
)

# kubectl debug p1 --copy-to=p1-debug --image=busybox:1.36 --container=dbg --profile=general -- sleep 5
# (p1: a pod with a volume, a toleration, ports, env, resources, a probe and a security context)
DEBUG_COPY_TO = bytes.fromhex(
    "6b3873000a090a0276311203506f6412d8030a1f0a0870312d646562756712001a0764656661756c7422002a0032003800420012a203"
    "0a0f0a0773637261746368120412020a0012c8010a046d61696e120c62757379626f783a312e33361a05736c6565701a033130302a00"
    "32120a0468747470100018903f22035443502a003a060a015812013142330a100a066d656d6f727912060a0436344d69120d0a036370"
    "7512060a043130306d12100a066d656d6f727912060a0436344d694a190a077363726174636810001a082f7363726174636822003200"
    "6a142f6465762f7465726d696e6174696f6e2d6c6f67720c49664e6f7450726573656e747a0420003800800100880100900100a20104"
    "46696c6512450a03646267120c62757379626f783a312e33361a05736c6565701a01352a0042006a0072007a0e0a0c0a0a5359535f50"
    "5452414345800100880100900100a2010446696c651a054e657665722000320c436c7573746572466972737442004a00520058006000"
    "680072008201008a01009a011164656661756c742d7363686564756c6572b2011a0a016b12064578697374731a0022094e6f45786563"
    "7574652805c20100c80100d80101f00101fa0114507265656d70744c6f7765725072696f726974791a100a001a0022002a0032004a00"
    "5a0072001a002200"
)


def _len(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2, len(payload)]) + payload


def _varint(number: int, value: int) -> bytes:
    return bytes([number << 3, value])


def _envelope(job: bytes) -> bytes:
    return protobuf.MAGIC + _len(1, _len(1, b"batch/v1") + _len(2, b"Job")) + _len(2, job)


def test_kubectl_create_job_body() -> None:
    assert protobuf.decode(CREATE_JOB) == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "x"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "x", "image": "busybox:1.36", "command": ["sh", "-c", "echo hi"]}],
                    "restartPolicy": "Never",
                }
            }
        },
    }


def test_pointer_fields_keep_explicit_zeros_and_maps_decode() -> None:
    meta = _len(1, b"j") + _len(11, _len(1, b"app") + _len(2, b"x"))
    spec = _varint(7, 0) + _varint(10, 0)  # backoffLimit: 0, suspend: false (pointers: kept)
    decoded = protobuf.decode(_envelope(_len(1, meta) + _len(2, spec)))
    assert decoded["metadata"] == {"name": "j", "labels": {"app": "x"}}
    assert decoded["spec"] == {"backoffLimit": 0, "suspend": False}


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"not protobuf", id="no-envelope"),
        pytest.param(_envelope(_len(1, _len(15, b"x"))), id="unknown-field-with-a-value"),  # the gone clusterName
        pytest.param(protobuf.MAGIC + _len(1, _len(1, b"v1") + _len(2, b"ComponentStatus")), id="kind-not-served"),
        pytest.param(_envelope(_len(2, _varint(2, 1) + _len(7, b"x"))), id="wrong-wire-type"),  # completions: varint
        pytest.param(_envelope(b"\x0a\xff"), id="truncated"),
    ],
)
def test_unreadable_bodies_are_415(body: bytes) -> None:
    with pytest.raises(ApiError) as err:
        protobuf.decode(body)
    assert err.value.code == 415 and err.value.reason == "UnsupportedMediaType"


def test_kubectl_create_namespace_priorityclass_and_pdb_bodies() -> None:
    assert protobuf.decode(CREATE_NAMESPACE) == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x1"}}
    assert protobuf.decode(CREATE_PRIORITY_CLASS) == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "pc1"},
        "value": 10,
        "description": "hi",
        "preemptionPolicy": "Never",
    }
    assert protobuf.decode(CREATE_PDB) == {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb1"},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"a": "b"}}},
    }


def test_kubectl_debug_copy_to_body() -> None:
    pod = protobuf.decode(DEBUG_COPY_TO)
    assert pod["metadata"] == {"name": "p1-debug", "namespace": "default"}
    spec = pod["spec"]
    assert spec["volumes"] == [{"name": "scratch", "emptyDir": {}}]  # inlined VolumeSource; an empty pointer kept
    main, debug = spec["containers"]
    assert main["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert main["resources"] == {"limits": {"memory": "64Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}}
    assert main["securityContext"] == {"runAsUser": 0, "allowPrivilegeEscalation": False}
    assert debug["securityContext"] == {"capabilities": {"add": ["SYS_PTRACE"]}}
    assert spec["tolerations"] == [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]
    assert spec["terminationGracePeriodSeconds"] == 0 and spec["shareProcessNamespace"] is True
    assert "status" not in pod and "nodeName" not in spec  # Go's zero values of non-pointer fields


def test_special_messages_decode_to_their_json_forms() -> None:
    int_port = _len(2, _varint(2, 80))  # HTTPGetAction.port: IntOrString {type 0, intVal 80}
    time = _len(9, _varint(1, 100) + _varint(2, 0))  # ObjectMeta.deletionTimestamp
    meta = _len(1, b"p") + time + _len(14, b"f1") + _len(14, b"f2")
    probe = _len(1, _len(2, int_port))  # Probe.handler (inline) → httpGet
    container = _len(1, b"c") + _len(11, probe)
    pod = (
        protobuf.MAGIC
        + _len(1, _len(1, b"v1") + _len(2, b"Pod"))
        + _len(2, _len(1, meta) + _len(2, _len(2, container)))
    )
    decoded = protobuf.decode(pod)
    assert decoded["metadata"] == {"name": "p", "deletionTimestamp": "1970-01-01T00:01:40Z", "finalizers": ["f1", "f2"]}
    assert decoded["spec"]["containers"] == [{"name": "c", "readinessProbe": {"httpGet": {"port": 80}}}]


def test_table_json_names_are_the_schemas_properties() -> None:
    """Every field the table names is a property of its type's OpenAPI schema (both generated from 1.32)."""
    roots, messages = protobuf._table()
    assert roots["v1/Namespace"] == "k8s.io.api.core.v1.Namespace"
    all_schemas = schema.schemas()
    for message, fields in messages.items():
        properties = all_schemas.get("io.k8s." + message[len("k8s.io.") :], {}).get("properties")
        if not properties:  # Time, Quantity, ...: a JSON form of their own; or inlined (EphemeralContainerCommon)
            continue
        for name, _kind, _label, flags in fields.values():
            assert "i" in flags or name in properties, (message, name)


def test_corrupt_bodies_are_415_never_a_crash() -> None:
    """Every one-byte corruption or truncation of a real body decodes to something or is refused with 415."""
    for i in range(len(protobuf.MAGIC), len(DEBUG_COPY_TO)):
        for byte in (0x00, 0x07, 0x7F, 0xFF):
            body = DEBUG_COPY_TO[:i] + bytes([byte]) + DEBUG_COPY_TO[i + 1 :]
            try:
                protobuf.decode(body)
            except ApiError as err:
                assert err.code == 415
    for size in range(len(DEBUG_COPY_TO)):
        try:
            protobuf.decode(DEBUG_COPY_TO[:size])
        except ApiError as err:
            assert err.code == 415


def test_events_v1_event_body() -> None:
    """What a Go client's events.k8s.io/v1 recorder (kube-scheduler's) sends: the fields by their v1 names."""
    envelope = protobuf.MAGIC + _len(1, _len(1, b"events.k8s.io/v1") + _len(2, b"Event"))
    event = _len(1, _len(1, b"e")) + _len(4, b"default-scheduler") + _len(7, b"Scheduled") + _len(10, b"assigned")
    assert protobuf.decode(envelope + _len(2, event)) == {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "reportingController": "default-scheduler",
        "reason": "Scheduled",
        "note": "assigned",
    }
