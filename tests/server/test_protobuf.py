"""The protobuf body of `kubectl create job` (captured from kubectl 1.32), decoded to the Job it stands for."""

from __future__ import annotations

import pytest

from kjobs.api.errors import ApiError
from kjobs.server import protobuf

# kubectl create job x --image=busybox:1.36 -- sh -c "echo hi"   (POST /apis/batch/v1/namespaces/default/jobs)
CREATE_JOB = bytes.fromhex(
    "6b3873000a0f0a0862617463682f763112034a6f62128e010a110a017812001a0022002a00320038004200126f326d0a100a0012001a"
    "0022002a00320038004200125912360a0178120c62757379626f783a312e33361a0273681a022d631a076563686f2068692a0042006a"
    "007200800100880100900100a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a0820002800"
    "30003a001a002200"
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
        pytest.param(_envelope(_len(2, _len(4, b"\x0a\x01x"))), id="unsupported-field-with-a-value"),  # selector
        pytest.param(protobuf.MAGIC + _len(1, _len(1, b"v1") + _len(2, b"Pod")), id="other-kind"),
        pytest.param(_envelope(b"\x0a\xff"), id="truncated"),
    ],
)
def test_unreadable_bodies_are_415(body: bytes) -> None:
    with pytest.raises(ApiError) as err:
        protobuf.decode(body)
    assert err.value.code == 415 and err.value.reason == "UnsupportedMediaType"
