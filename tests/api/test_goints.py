"""Numbers Kubernetes reads with Go's `strconv`: what Python's `int()` takes and Go refuses is no number."""

from __future__ import annotations

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.goints import go_atoi
from kjobs.api.nodeaffinity import expression_parses, match_expression
from kjobs.api.selectors import parse_label_selector


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0", 0),
        ("+7", 7),
        ("-12", -12),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("9223372036854775808", None),
        ("00000000000000000000001", 1),
        ("", None),
        ("+", None),
        (" 2", None),
        ("2 ", None),
        ("1_000", None),
        ("٣", None),
        ("0x10", None),
    ],
)
def test_go_atoi_reads_what_strconv_reads(text: str, want: int | None) -> None:
    assert go_atoi(text) == want


def test_a_node_label_with_an_underscore_is_no_number_to_gt() -> None:
    """`nodeSelectorRequirementsAsSelector` + `Requirement.Matches`: the label value goes through ParseInt."""
    gt = {"key": "cores", "operator": "Gt", "values": ["8"]}
    assert match_expression(gt, {"cores": "16"})
    assert not match_expression(gt, {"cores": "1_000"})
    assert not match_expression(gt, {"cores": " 16"})
    assert not expression_parses({"key": "cores", "operator": "Lt", "values": ["1_0"]})


def test_a_label_selector_gt_value_must_be_a_go_integer() -> None:
    assert parse_label_selector("cores>8").matches_labels({"cores": "16"})
    assert not parse_label_selector("cores>8").matches_labels({"cores": "1_6"})
    with pytest.raises(ApiError) as refused:
        parse_label_selector("cores>1_0")
    assert "for 'Gt', 'Lt' operators, the value must be an integer" in refused.value.message


def test_a_huge_number_is_out_of_range_without_converting_it() -> None:
    """A 65,537-digit string would raise in `int()` (Python's 4,300-digit limit), not answer None."""
    assert go_atoi("1" * 65_537) is None
    assert go_atoi("-" + "0" * 70_000 + "5") == -5
