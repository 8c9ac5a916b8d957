"""Resource quantities: parsing as Kubernetes accepts them, exact values, canonical printing."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kjobs.api.quantity import ERR_FORMAT_WRONG, ERR_SUFFIX, Format, QuantityError, canonical, parse_quantity


@pytest.mark.parametrize(
    ("text", "value", "printed"),
    [
        ("100m", Fraction(1, 10), "100m"),
        ("1Gi", 2**30, "1Gi"),
        ("1e3", 1000, "1e3"),
        ("500M", 500_000_000, "500M"),
        ("1.5Gi", 3 * 2**29, "1536Mi"),
        ("0.1", Fraction(1, 10), "100m"),
        ("1000m", 1, "1"),
        ("1000", 1000, "1k"),
        ("1025", 1025, "1025"),
        ("12e2", 1200, "1200"),
        ("+2k", 2000, "2k"),
        ("-1", -1, "-1"),
        ("1n", Fraction(1, 10**9), "1n"),
        ("0.0000000001", Fraction(1, 10**9), "1n"),
        ("1Ei", 2**60, "1Ei"),
        ("0.5Ki", 512, "512"),
        (".5", Fraction(1, 2), "500m"),
        (2, 2, "2"),
        (0.25, Fraction(1, 4), "250m"),
    ],
)
def test_parse_and_print(text: str | int | float, value: Fraction | int, printed: str) -> None:
    q = parse_quantity(text)
    assert q.value == value
    assert str(q) == printed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ERR_FORMAT_WRONG),
        ("abc", ERR_FORMAT_WRONG),
        ("1.2.3", ERR_FORMAT_WRONG),
        ("1Q", ERR_FORMAT_WRONG),
        ("5e", ERR_SUFFIX),
        ("1KiB", ERR_FORMAT_WRONG),
        ("1iK", ERR_SUFFIX),
    ],
)
def test_rejected(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert str(info.value) == message


def test_units_for_the_scheduler_and_node_agent() -> None:
    assert parse_quantity("250m").milli_value() == 250
    assert parse_quantity("1.5").milli_value() == 1500
    assert parse_quantity("1Mi").int_value() == 1048576
    assert parse_quantity("0.5").int_value() == 1  # rounded up, like Kubernetes' Value()
    assert parse_quantity("1Gi").format is Format.BINARY_SI


def test_canonical_rounds_to_milli() -> None:
    assert canonical("1n") == "1m"
    assert canonical("1500m") == "1500m"
    assert canonical("2048Ki") == "2Mi"
