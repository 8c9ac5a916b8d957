"""Feature gates: which optional API fields and behaviours a kjobs cluster has, as Kubernetes has them.

Kubernetes' gates that matter to Jobs and their pods carry their 1.35 stage and default (pkg/features/
kube_features.go, `defaultVersionedKubernetesFeatureGates`); kjobs' own extensions — the rest of the design
KEP-3329 left undone (kubernetes/enhancements keps/sig-apps/3329-retriable-and-non-retriable-failures) — are
alpha and off by default, so that with every kjobs gate off a manifest behaves exactly as on Kubernetes.

`--feature-gates Name=true,Other=false` is parsed as component-base does it
(staging/src/k8s.io/component-base/featuregate/feature_gate.go: `Set`, `SetFromMap`): an unknown name, a
value that is not a Go bool and a locked GA gate set against its default are errors with Kubernetes' words;
`AllAlpha=`/`AllBeta=` set every alpha/beta gate that is not named explicitly. The result is a frozen
`FeatureGates`, passed explicitly to validation, the API service and the CLI (no process-wide state).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

ENV_VAR = "KJOBS_FEATURE_GATES"
"""The environment variable the test harnesses read a gate string from (see tests/conformance)."""


class Stage(enum.Enum):
    """A gate's maturity (component-base's `prerelease`)."""

    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""


@dataclass(frozen=True)
class FeatureSpec:
    """One gate: its stage, default, whether it is locked to the default, and who defines it."""

    default: bool
    stage: Stage
    locked: bool = False
    kjobs: bool = False
    doc: str = ""


# Kubernetes' own names (1.35 stage and default).
JOB_BACKOFF_LIMIT_PER_INDEX = "JobBackoffLimitPerIndex"
JOB_MANAGED_BY = "JobManagedBy"
JOB_POD_REPLACEMENT_POLICY = "JobPodReplacementPolicy"
JOB_SUCCESS_POLICY = "JobSuccessPolicy"
CONTAINER_RESTART_RULES = "ContainerRestartRules"
IMAGE_VOLUME = "ImageVolume"
IN_PLACE_POD_VERTICAL_SCALING = "InPlacePodVerticalScaling"
DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
# kjobs' own (alpha, off by default).
JOB_POD_RESTART_LIMIT = "JobPodRestartLimit"
JOB_POD_FAILURE_POLICY_ON_FAILURE = "JobPodFailurePolicyOnFailure"
EXIT_CODE_RANGES = "ExitCodeRanges"
POD_FAILURE_POLICY_RULE_NAME = "PodFailurePolicyRuleName"

KNOWN: Mapping[str, FeatureSpec] = MappingProxyType(
    {
        JOB_BACKOFF_LIMIT_PER_INDEX: FeatureSpec(True, Stage.GA, locked=True, doc="backoffLimitPerIndex, FailIndex"),
        JOB_MANAGED_BY: FeatureSpec(True, Stage.GA, locked=True, doc="spec.managedBy"),
        JOB_POD_REPLACEMENT_POLICY: FeatureSpec(True, Stage.GA, locked=True, doc="spec.podReplacementPolicy"),
        JOB_SUCCESS_POLICY: FeatureSpec(True, Stage.GA, locked=True, doc="spec.successPolicy"),
        CONTAINER_RESTART_RULES: FeatureSpec(
            True, Stage.BETA, doc="containers[].restartPolicy and restartPolicyRules (KEP-5307)"
        ),
        IMAGE_VOLUME: FeatureSpec(True, Stage.BETA, doc="volumes[].image, an OCI image as a volume (KEP-4639)"),
        # GA and locked on in 1.35: their fields (containers' resizePolicy, a sidecar's included; the pod's
        # resourceClaims and containers' resources.claims) are always kept and validated.
        IN_PLACE_POD_VERTICAL_SCALING: FeatureSpec(
            True, Stage.GA, locked=True, doc="containers[].resizePolicy, init (sidecar) containers' included"
        ),
        DYNAMIC_RESOURCE_ALLOCATION: FeatureSpec(
            True, Stage.GA, locked=True, doc="spec.resourceClaims and containers[].resources.claims"
        ),
        JOB_POD_RESTART_LIMIT: FeatureSpec(
            False, Stage.ALPHA, kjobs=True, doc="pod spec.maxRestartTimes (KEP-3322's proposed field)"
        ),
        JOB_POD_FAILURE_POLICY_ON_FAILURE: FeatureSpec(
            False, Stage.ALPHA, kjobs=True, doc="podFailurePolicy with restartPolicy OnFailure and maxRestartTimes"
        ),
        EXIT_CODE_RANGES: FeatureSpec(
            False, Stage.ALPHA, kjobs=True, doc="valueRanges beside values in onExitCodes and restart rules"
        ),
        POD_FAILURE_POLICY_RULE_NAME: FeatureSpec(False, Stage.ALPHA, kjobs=True, doc="podFailurePolicy.rules[].name"),
    }
)

ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"


class FeatureGateError(ValueError):
    """A `--feature-gates` value Kubernetes would refuse; the message is Kubernetes' own."""


def _parse_go_bool(name: str, text: str) -> bool:
    """Go's `strconv.ParseBool`, with component-base's message when it fails."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise FeatureGateError(f'invalid value of {name}={text}, err: strconv.ParseBool: parsing "{text}": invalid syntax')


def parse_map(text: str) -> dict[str, bool]:
    """`Name=true,Other=false` as a map (component-base's `Set`: items trimmed, empty items skipped)."""
    result: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        result[name] = _parse_go_bool(name, value.strip())
    return result


@dataclass(frozen=True)
class FeatureGates:
    """An immutable set of gate values: the defaults overridden by what was set."""

    overrides: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))

    def enabled(self, name: str) -> bool:
        """Whether gate `name` is on (a name not in `KNOWN` is a programming error)."""
        if name in self.overrides:
            return self.overrides[name]
        return KNOWN[name].default

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.overrides.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FeatureGates) and dict(self.overrides) == dict(other.overrides)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its overrides (a read-only mapping cannot be pickled): for simulations in worker processes."""
        return _gates_from_overrides, (dict(self.overrides),)

    @classmethod
    def from_map(cls, values: Mapping[str, bool]) -> FeatureGates:
        """component-base's `SetFromMap`: check every name and lock, then apply AllAlpha/AllBeta to the gates
        not named explicitly."""
        overrides: dict[str, bool] = {}
        for name, value in values.items():
            if name in (ALL_ALPHA, ALL_BETA):
                continue
            spec = KNOWN.get(name)
            if spec is None:
                raise FeatureGateError(f"unrecognized feature gate: {name}")
            if spec.locked and value != spec.default:
                raise FeatureGateError(
                    f"cannot set feature gate {name} to {str(value).lower()}, "
                    f"feature is locked to {str(spec.default).lower()}"
                )
            overrides[name] = value
        for special, stage in ((ALL_ALPHA, Stage.ALPHA), (ALL_BETA, Stage.BETA)):
            if special in values:
                for name, spec in KNOWN.items():
                    if spec.stage is stage and name not in overrides:
                        overrides[name] = values[special]
        return cls(MappingProxyType(dict(sorted(overrides.items()))))

    @classmethod
    def parse(cls, text: str) -> FeatureGates:
        """A `--feature-gates` value (empty: the defaults)."""
        return cls.from_map(parse_map(text))

    def __str__(self) -> str:
        return self.text

    @cached_property
    def text(self) -> str:
        """`Name=true,Other=false` of the overrides, made once: the gates never change, and every pod create
        keys a memo by them (`kjobs.api.validation_pod.validate_pod_spec`)."""
        return ",".join(f"{k}={str(v).lower()}" for k, v in self.overrides.items())


def setting_warnings(text: str) -> list[str]:
    """The warnings component-base logs for a valid `--feature-gates` value: setting a GA gate (which will
    be removed) is allowed but noted."""
    return [
        f"Setting GA feature gate {name}={str(value).lower()}. It will be removed in a future release."
        for name, value in parse_map(text).items()
        if name in KNOWN and KNOWN[name].stage is Stage.GA
    ]


DEFAULT = FeatureGates()
"""Every gate at its default."""


def _gates_from_overrides(overrides: dict[str, bool]) -> FeatureGates:
    return FeatureGates(MappingProxyType(overrides))
