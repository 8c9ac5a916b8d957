"""Stop 50: `drop_disabled_pod_spec` returns at once for a spec that has none of the fields it may remove.

One pass (`_nothing_gated`) finds that no container has `restartPolicy` or `restartPolicyRules`, that there is no
`maxRestartTimes` and no volume, as for a Job's pods; the gates are then not read. The plain version (every drop
under its gate) is kept here; hypothesis makes specs with and without each gated field (in init, regular and
ephemeral containers, exit-code ranges, image volumes, trust-bundle projections, values of other types), stored
specs that use them or not, and gate sets: the same spec afterwards.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api import disabled_fields as D
from kjobs.api import features as fg
from kjobs.api.features import FeatureGates
from tests.hypothesis_budget import examples


def plain_drop(pod_spec: Any, old_pod_spec: Any, features: FeatureGates) -> None:
    if old_pod_spec:
        features = D.features_for_update(features, old_pod_spec)
    if not features.enabled(fg.CONTAINER_RESTART_RULES):
        for c in D._containers(pod_spec, "initContainers"):
            if c.get("restartPolicy") not in (None, "Always"):
                del c["restartPolicy"]
            c.pop("restartPolicyRules", None)
        for c in D._containers(pod_spec, "containers", "ephemeralContainers"):
            c.pop("restartPolicy", None)
            c.pop("restartPolicyRules", None)
    if not features.enabled(fg.JOB_POD_RESTART_LIMIT):
        pod_spec.pop("maxRestartTimes", None)
    if not features.enabled(fg.EXIT_CODE_RANGES):
        for exit_codes in D._restart_exit_codes(pod_spec):
            exit_codes.pop("valueRanges", None)
    if not pod_spec.get("volumes"):
        return
    if not features.enabled(fg.IMAGE_VOLUME):
        D._drop_image_volumes(pod_spec)
    if not (old_pod_spec and D._cluster_trust_bundles_in_use(old_pod_spec)):
        for source in D._projections(pod_spec):
            source.pop("clusterTrustBundle", None)


RULE = st.fixed_dictionaries(
    {"action": st.just("Restart")},
    optional={
        "exitCodes": st.fixed_dictionaries(
            {"operator": st.just("In")}, optional={"valueRanges": st.just([{"from": 1}])}
        )
    },
)
CONTAINER = st.one_of(
    st.fixed_dictionaries(
        {"name": st.just("c")},
        optional={
            "restartPolicy": st.sampled_from(["Always", "Never", None]),
            "restartPolicyRules": st.one_of(st.lists(RULE, max_size=2), st.none()),
            "volumeMounts": st.just([{"name": "img"}, {"name": "v"}]),
            "image": st.just("busybox"),
        },
    ),
    st.just("not a container"),
)
VOLUME = st.sampled_from(
    [
        {"name": "img", "image": {"reference": "busybox"}},
        {"name": "v", "emptyDir": {}},
        {"name": "p", "projected": {"sources": [{"clusterTrustBundle": {"path": "b"}}, {"configMap": {"name": "c"}}]}},
    ]
)
SPEC = st.fixed_dictionaries(
    {},
    optional={
        "initContainers": st.one_of(st.lists(CONTAINER, max_size=2), st.just("x")),
        "containers": st.lists(CONTAINER, max_size=2),
        "ephemeralContainers": st.lists(CONTAINER, max_size=1),
        "maxRestartTimes": st.sampled_from([3, None]),
        "volumes": st.one_of(st.lists(VOLUME, max_size=3), st.just([]), st.none()),
        "hostname": st.just("job-0"),
    },
)
GATES = st.dictionaries(
    st.sampled_from([fg.CONTAINER_RESTART_RULES, fg.JOB_POD_RESTART_LIMIT, fg.EXIT_CODE_RANGES, fg.IMAGE_VOLUME]),
    st.booleans(),
)


@settings(max_examples=examples(1000), deadline=None)
@given(spec=SPEC, old=st.one_of(st.none(), st.just({}), SPEC), gates=GATES)
def test_drop_disabled_pod_spec_as_before(spec: dict[str, Any], old: Any, gates: dict[str, bool]) -> None:
    features = FeatureGates.from_map(gates)
    plain = copy.deepcopy(spec)
    plain_drop(plain, copy.deepcopy(old), features)
    D.drop_disabled_pod_spec(spec, old, features)
    assert spec == plain


def test_a_job_pod_spec_has_nothing_gated() -> None:
    spec = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "env": []}], "hostname": "x"}
    assert D._nothing_gated(spec)
    for extra in ({"maxRestartTimes": 1}, {"volumes": [{"name": "v"}]}):
        assert not D._nothing_gated({**spec, **extra})
    assert not D._nothing_gated({"containers": [{"name": "c", "restartPolicy": None}]})
    assert not D._nothing_gated({"initContainers": [{"name": "c", "restartPolicyRules": []}]})
