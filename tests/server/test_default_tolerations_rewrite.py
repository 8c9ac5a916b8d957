"""Stop 46: DefaultTolerationSeconds reads a pod's tolerations once (`_uncovered`), and `admit_pod` builds the
defaulted list only when a toleration is missing.

The plain versions are kept here as they were. Hypothesis makes toleration lists (keys and effects of every kind
the plugin tells apart, empty or null ones, values of other JSON types, elements that are no map) and pods that
hold them or not, with the plugin on or off: `default_tolerations` and `admit_pod` give what the plain ones gave,
and an admitted pod that needs nothing is the very pod given.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server import admission as A
from kjobs.server.admission import AdmissionSettings, admit_pod, default_tolerations
from kjobs.server.podsecurity import PLUGIN as POD_SECURITY
from tests.hypothesis_budget import examples


def plain_covers(toleration: dict[str, Any], key: str) -> bool:
    return (toleration.get("key") or "") in ("", key) and (toleration.get("effect") or "") in ("", A.NO_EXECUTE)


def plain_default_tolerations(tolerations: list[Any], settings: AdmissionSettings) -> list[Any]:
    result = list(tolerations)
    for key, seconds in (
        (A.TAINT_NOT_READY, settings.default_not_ready_toleration_seconds),
        (A.TAINT_UNREACHABLE, settings.default_unreachable_toleration_seconds),
    ):
        if not any(plain_covers(t, key) for t in tolerations if isinstance(t, dict)):
            result.append({"key": key, "operator": "Exists", "effect": A.NO_EXECUTE, "tolerationSeconds": seconds})
    return result


def plain_admit_pod(pod: dict[str, Any], settings: AdmissionSettings, *, create: bool = True) -> dict[str, Any]:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod
    changes: dict[str, Any] = {}
    mirror = A.MIRROR_POD_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})
    account = A.service_account(spec, create=create and settings.enabled(A.SERVICE_ACCOUNT), mirror=mirror)
    if account is not None and (spec.get("serviceAccountName"), spec.get("serviceAccount")) != (account, account):
        changes["serviceAccountName"] = changes["serviceAccount"] = account
    tolerations = spec.get("tolerations")
    if tolerations is None:
        tolerations = []
    if isinstance(tolerations, list) and settings.enabled(A.DEFAULT_TOLERATION_SECONDS_PLUGIN):
        defaulted = plain_default_tolerations(tolerations, settings)
        if len(defaulted) != len(tolerations):
            changes["tolerations"] = defaulted
    if not changes:
        return pod
    return {**pod, "spec": {**spec, **changes}}


odd = st.one_of(st.none(), st.just(""), st.integers(0, 2), st.lists(st.just("x"), max_size=1), st.just({}))
keys = st.one_of(st.sampled_from([A.TAINT_NOT_READY, A.TAINT_UNREACHABLE, "other", ""]), odd)
effects = st.one_of(st.sampled_from([A.NO_EXECUTE, "NoSchedule", "PreferNoSchedule", ""]), odd)
toleration = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "key": keys,
            "effect": effects,
            "operator": st.sampled_from(["Exists", "Equal"]),
            "tolerationSeconds": st.integers(0, 600),
        },
    ),
    odd,
)
tolerations = st.lists(toleration, max_size=4)
plugin_settings = st.sampled_from(
    [
        AdmissionSettings(),
        AdmissionSettings(disabled_plugins=frozenset({A.DEFAULT_TOLERATION_SECONDS_PLUGIN})),
        AdmissionSettings(disabled_plugins=frozenset({A.SERVICE_ACCOUNT, POD_SECURITY})),
        AdmissionSettings(default_not_ready_toleration_seconds=30, default_unreachable_toleration_seconds=7),
    ]
)
pods = st.fixed_dictionaries(
    {
        "spec": st.fixed_dictionaries(
            {}, optional={"tolerations": st.one_of(tolerations, odd), "serviceAccountName": st.just("sa")}
        )
    },
    optional={"metadata": st.just({"annotations": {A.MIRROR_POD_ANNOTATION: "x"}})},
)


@settings(max_examples=examples(500), deadline=None)
@given(tolerations, plugin_settings)
def test_default_tolerations_adds_what_the_plain_plugin_added(given_list: list[Any], conf: AdmissionSettings) -> None:
    assert default_tolerations(given_list, conf) == plain_default_tolerations(given_list, conf)


@settings(max_examples=examples(500), deadline=None)
@given(pods, plugin_settings, st.booleans())
def test_admit_pod_admits_as_the_plain_plugin(pod: dict[str, Any], conf: AdmissionSettings, create: bool) -> None:
    admitted = admit_pod(pod, conf, create=create)
    plain = plain_admit_pod(pod, conf, create=create)
    assert admitted == plain
    assert (admitted is pod) == (plain is pod)
