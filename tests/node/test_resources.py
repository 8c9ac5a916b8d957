"""Memory limits and the QoS class."""

from __future__ import annotations

import pytest

from kjobs.node.envvars import ConfigError
from kjobs.node.resources import memory_limit_bytes, qos_class
from tests.node.helpers import make_pod


def test_memory_limit_bytes() -> None:
    assert memory_limit_bytes({"resources": {"limits": {"memory": "50Mi"}}}) == 52428800
    assert memory_limit_bytes({"resources": {"requests": {"memory": "50Mi"}}}) is None
    assert memory_limit_bytes({}) is None
    assert memory_limit_bytes({"resources": {"limits": {"memory": "129e6"}}}) == 129_000_000


def test_bad_memory_limit_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid memory limit '12Qi'"):
        memory_limit_bytes({"resources": {"limits": {"memory": "12Qi"}}})


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        pytest.param({}, "BestEffort", id="none"),
        pytest.param({"requests": {"memory": "10Mi"}}, "Burstable", id="requests-only"),
        pytest.param({"limits": {"memory": "10Mi", "cpu": "1"}}, "Guaranteed", id="limits-default-requests"),
        pytest.param(
            {"limits": {"memory": "10Mi", "cpu": "1"}, "requests": {"memory": "5Mi", "cpu": "1"}},
            "Burstable",
            id="requests-below-limits",
        ),
        pytest.param({"limits": {"memory": "10Mi"}}, "Burstable", id="memory-only"),
    ],
)
def test_qos_class(resources: dict, qos: str) -> None:
    assert qos_class(make_pod([{"name": "main", "image": "x", "resources": resources}])) == qos


def test_qos_class_reads_the_class_the_api_server_set_as_get_pod_qos_does() -> None:
    pod = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert qos_class(pod) == "BestEffort"
    assert qos_class({**pod, "status": {"qosClass": "Burstable"}}) == "Burstable"
    assert qos_class({**pod, "status": {"qosClass": "bogus"}}) == "BestEffort"  # computed when unknown
