"""Quantities and QoS class."""

from __future__ import annotations

from decimal import Decimal

import pytest

from kjobs.node.resources import memory_limit_bytes, parse_quantity, qos_class
from tests.node.helpers import make_pod


@pytest.mark.parametrize(
    ("text", "value"),
    [
        pytest.param("50Mi", Decimal(50 * 2**20), id="Mi"),
        pytest.param("1Gi", Decimal(2**30), id="Gi"),
        pytest.param("128974848", Decimal(128974848), id="plain"),
        pytest.param("129e6", Decimal(129_000_000), id="exponent"),
        pytest.param("129M", Decimal(129_000_000), id="M"),
        pytest.param("100m", Decimal("0.1"), id="milli"),
        pytest.param("0.5", Decimal("0.5"), id="fraction"),
    ],
)
def test_parse_quantity(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value


def test_bad_quantity_names_the_text() -> None:
    with pytest.raises(ValueError, match="12Qi"):
        parse_quantity("12Qi")


def test_memory_limit_bytes() -> None:
    assert memory_limit_bytes({"resources": {"limits": {"memory": "50Mi"}}}) == 52428800
    assert memory_limit_bytes({"resources": {"requests": {"memory": "50Mi"}}}) is None
    assert memory_limit_bytes({}) is None


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
