"""Feature gates: parsing `--feature-gates` as component-base does, defaults, AllAlpha/AllBeta, locks."""

from __future__ import annotations

import pytest

from kjobs.api import features as fg
from kjobs.api.features import DEFAULT, FeatureGateError, FeatureGates


def test_defaults_are_kubernetes_1_35_and_kjobs_gates_off() -> None:
    assert DEFAULT.enabled(fg.JOB_SUCCESS_POLICY)
    assert DEFAULT.enabled(fg.CONTAINER_RESTART_RULES)  # beta, on by default in 1.35
    for name, spec in fg.KNOWN.items():
        if spec.kjobs:
            assert spec.stage is fg.Stage.ALPHA and not DEFAULT.enabled(name), name


def test_parse_sets_gates_and_skips_empty_items() -> None:
    gates = FeatureGates.parse(" JobPodRestartLimit = true,,ContainerRestartRules=false")
    assert gates.enabled(fg.JOB_POD_RESTART_LIMIT)
    assert not gates.enabled(fg.CONTAINER_RESTART_RULES)
    assert FeatureGates.parse("") == DEFAULT


def test_all_alpha_turns_every_kjobs_gate_on_and_explicit_settings_win() -> None:
    gates = FeatureGates.parse("AllAlpha=true,ExitCodeRanges=false")
    assert gates.enabled(fg.JOB_POD_RESTART_LIMIT) and gates.enabled(fg.POD_FAILURE_POLICY_RULE_NAME)
    assert not gates.enabled(fg.EXIT_CODE_RANGES)
    assert FeatureGates.parse("AllBeta=false").enabled(fg.CONTAINER_RESTART_RULES) is False
    assert FeatureGates.parse("AllBeta=false").enabled(fg.JOB_MANAGED_BY)  # GA, not touched


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Nope=true", "unrecognized feature gate: Nope"),
        ("JobPodRestartLimit", "missing bool value for JobPodRestartLimit"),
        (
            "JobPodRestartLimit=yes",
            'invalid value of JobPodRestartLimit=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
        ),
        ("JobSuccessPolicy=false", "cannot set feature gate JobSuccessPolicy to false, feature is locked to true"),
    ],
)
def test_bad_values_fail_with_kubernetes_messages(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as info:
        FeatureGates.parse(text)
    assert str(info.value) == message


def test_gates_are_frozen_and_hashable() -> None:
    gates = FeatureGates.parse("AllAlpha=true")
    assert hash(gates) == hash(FeatureGates.parse("AllAlpha=true"))
    with pytest.raises(TypeError):
        gates.overrides["ExitCodeRanges"] = False  # type: ignore[index]
