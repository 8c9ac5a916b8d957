"""Fields of a gate that is off, handled as Kubernetes handles a disabled alpha field.

Kubernetes drops such a field from a create or update in the registry strategy's PrepareForCreate /
PrepareForUpdate, unless the stored object already uses it (pkg/api/pod/util.go, `dropDisabledFields` and
`dropContainerRestartRules`/`containerRestartRulesInUse`; pkg/registry/batch/job/strategy.go,
`dropDisabledFields`); validation then sees the object without it, and an object that already used the field
keeps validating as if the gate were on. kjobs does the same for its own gated fields. Through the API, strict
field validation (`kjobs.server.schema`, gated overlay) has already refused or pruned such fields when the
gate is off; this is the second line, for bodies that skip that check.

InPlacePodVerticalScaling and DynamicResourceAllocation are GA and locked on in 1.35, so their fields
(`resizePolicy`; `resourceClaims`, `resources.claims`) are never dropped: `dropDisabledFields`' resize-policy and
`dropDisabledDynamicResourceAllocationFields` branches cannot fire.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

from kjobs.api import features as fg
from kjobs.api.features import FeatureGates
from kjobs.api.types import Obj


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def job_spec(job: Any) -> Obj:
    """A Job's `spec` (empty if missing)."""
    return _dict(_dict(job).get("spec"))


def job_pod_spec(job: Any) -> Obj:
    """A Job's `spec.template.spec` (empty if missing)."""
    return _dict(_dict(job_spec(job).get("template")).get("spec"))


def _containers(spec: Obj, *keys: str) -> Iterator[Obj]:
    for key in keys:
        items = spec.get(key)
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                yield item


def _restart_exit_codes(spec: Obj) -> Iterator[Obj]:
    for container in _containers(spec, "initContainers", "containers"):
        rules = container.get("restartPolicyRules")
        for rule in rules if isinstance(rules, list) else []:
            if isinstance(rule, dict) and isinstance(rule.get("exitCodes"), dict):
                yield rule["exitCodes"]


def _policy_rules(spec: Obj) -> Iterator[Obj]:
    rules = _dict(spec.get("podFailurePolicy")).get("rules")
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, dict):
            yield rule


def _restart_rules_in_use(pod_spec: Obj) -> bool:
    for c in _containers(pod_spec, "initContainers"):
        if c.get("restartPolicy") not in (None, "Always") or c.get("restartPolicyRules"):
            return True
    return any(
        c.get("restartPolicy") is not None or c.get("restartPolicyRules")
        for c in _containers(pod_spec, "containers", "ephemeralContainers")
    )


def _volumes(spec: Obj) -> Iterator[Obj]:
    volumes = spec.get("volumes")
    for volume in volumes if isinstance(volumes, list) else []:
        if isinstance(volume, dict):
            yield volume


def _image_volumes_in_use(pod_spec: Obj) -> bool:
    return any(v.get("image") is not None for v in _volumes(pod_spec))


def _projections(pod_spec: Obj) -> Iterator[Obj]:
    for volume in _volumes(pod_spec):
        sources = _dict(volume.get("projected")).get("sources")
        for source in sources if isinstance(sources, list) else []:
            if isinstance(source, dict):
                yield source


def _cluster_trust_bundles_in_use(pod_spec: Obj) -> bool:
    return any(s.get("clusterTrustBundle") is not None for s in _projections(pod_spec))


def _drop_image_volumes(pod_spec: Obj) -> None:
    """`dropImageVolumes` (pkg/api/pod/util.go): image volumes go, and every container's mounts of them."""
    names = {v.get("name") for v in _volumes(pod_spec) if v.get("image") is not None}
    if not names:
        return
    kept = [v for v in pod_spec["volumes"] if not (isinstance(v, dict) and v.get("image") is not None)]
    if kept:
        pod_spec["volumes"] = kept
    else:
        del pod_spec["volumes"]
    for container in _containers(pod_spec, "initContainers", "containers", "ephemeralContainers"):
        mounts = container.get("volumeMounts")
        if not isinstance(mounts, list):
            continue
        kept_mounts = [m for m in mounts if not (isinstance(m, dict) and m.get("name") in names)]
        if kept_mounts:
            container["volumeMounts"] = kept_mounts
        else:
            del container["volumeMounts"]


def in_use(pod_spec: Obj, spec: Obj | None = None) -> set[str]:
    """The gates whose fields `pod_spec` (and a Job's `spec`, for its podFailurePolicy) use."""
    spec = spec or {}
    used: set[str] = set()
    if _restart_rules_in_use(pod_spec):
        used.add(fg.CONTAINER_RESTART_RULES)
    if pod_spec.get("maxRestartTimes") is not None:
        used.add(fg.JOB_POD_RESTART_LIMIT)
    if _image_volumes_in_use(pod_spec):
        used.add(fg.IMAGE_VOLUME)
    on_exit = [_dict(r.get("onExitCodes")) for r in _policy_rules(spec)]
    if any("valueRanges" in e for e in [*_restart_exit_codes(pod_spec), *on_exit]):
        used.add(fg.EXIT_CODE_RANGES)
    if any("name" in r for r in _policy_rules(spec)):
        used.add(fg.POD_FAILURE_POLICY_RULE_NAME)
    if spec.get("podFailurePolicy") is not None and pod_spec.get("restartPolicy") == "OnFailure":
        used.add(fg.JOB_POD_FAILURE_POLICY_ON_FAILURE)
    return used


def features_for_update(features: FeatureGates, old_pod_spec: Obj, old_spec: Obj | None = None) -> FeatureGates:
    """`features` with every gate the stored object already uses turned on (Kubernetes' "…InUse(oldSpec)")."""
    used = {name for name in in_use(old_pod_spec, old_spec) if not features.enabled(name)}
    if not used:
        return features
    return FeatureGates(MappingProxyType({**features.overrides, **dict.fromkeys(used, True)}))


_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _nothing_gated(pod_spec: Obj) -> bool:
    """Whether `pod_spec` has none of the fields `drop_disabled_pod_spec` may remove, whatever the gates: no
    container's `restartPolicy` nor `restartPolicyRules` (where the exit-code ranges are), no
    `maxRestartTimes`, no volumes. Read in one pass, as a Job's pods have none of them."""
    if "maxRestartTimes" in pod_spec or pod_spec.get("volumes"):
        return False
    for key in _CONTAINER_LISTS:
        items = pod_spec.get(key)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and ("restartPolicy" in item or "restartPolicyRules" in item):
                return False
    return True


def drop_disabled_pod_spec(pod_spec: Obj, old_pod_spec: Obj | None, features: FeatureGates) -> None:
    """Remove, in place, the pod-spec fields of gates that are off and that `old_pod_spec` does not use."""
    if _nothing_gated(pod_spec):
        return
    if old_pod_spec:  # a create (or an empty stored spec) uses no gated field: the gates stay as they are
        features = features_for_update(features, old_pod_spec)
    if not features.enabled(fg.CONTAINER_RESTART_RULES):
        for c in _containers(pod_spec, "initContainers"):
            if c.get("restartPolicy") not in (None, "Always"):
                del c["restartPolicy"]
            c.pop("restartPolicyRules", None)
        for c in _containers(pod_spec, "containers", "ephemeralContainers"):
            c.pop("restartPolicy", None)
            c.pop("restartPolicyRules", None)
    if not features.enabled(fg.JOB_POD_RESTART_LIMIT):
        pod_spec.pop("maxRestartTimes", None)
    if not features.enabled(fg.EXIT_CODE_RANGES):
        for exit_codes in _restart_exit_codes(pod_spec):
            exit_codes.pop("valueRanges", None)
    if not pod_spec.get("volumes"):
        return
    if not features.enabled(fg.IMAGE_VOLUME):
        _drop_image_volumes(pod_spec)
    # ClusterTrustBundleProjection is off, as on Kubernetes 1.32, and kjobs serves no ClusterTrustBundles to
    # project: `dropDisabledClusterTrustBundleProjection` drops the field unless the stored spec has one.
    if not (old_pod_spec and _cluster_trust_bundles_in_use(old_pod_spec)):
        for source in _projections(pod_spec):
            source.pop("clusterTrustBundle", None)


def drop_disabled_job_fields(job: Obj, old: Obj | None, features: FeatureGates) -> None:
    """Remove, in place, a Job's fields of gates that are off (its pod template's included)."""
    spec = job_spec(job)
    features = features_for_update(features, {}, job_spec(old) if old else None)
    drop_disabled_pod_spec(job_pod_spec(job), job_pod_spec(old) if old else None, features)
    for rule in _policy_rules(spec):
        if not features.enabled(fg.POD_FAILURE_POLICY_RULE_NAME):
            rule.pop("name", None)
        if not features.enabled(fg.EXIT_CODE_RANGES) and isinstance(rule.get("onExitCodes"), dict):
            rule["onExitCodes"].pop("valueRanges", None)


def drop_disabled_pod_fields(pod: Obj, old: Obj | None, features: FeatureGates) -> None:
    """Remove, in place, a Pod's fields of gates that are off."""
    spec = pod.get("spec")
    if isinstance(spec, dict):
        old_spec = _dict(_dict(old).get("spec")) if old else None
        if spec is old_spec:  # the stored spec itself (a copy-on-write patch of metadata): it uses what it has
            return
        drop_disabled_pod_spec(spec, old_spec, features)
