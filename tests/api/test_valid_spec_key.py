"""Stop 50: the remembered pod-spec validation's key is the key it was.

`_valid_spec_key` now reads the gates' text once per `FeatureGates` (`text`, made once, where `str()` joined the
overrides for every pod) and looks for a token volume's name with a plain search before the regex. The old version
is kept here; hypothesis makes specs with and without such names (one, two alike, two different, a blank one, a
near miss) and gate sets, and the keys are compared byte for byte.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.features import KNOWN, FeatureGates
from kjobs.api.validation_formats import is_dns1123_label
from kjobs.api.validation_pod import _RATCHETED, _TOKEN_VOLUME_NAME, _valid_spec_key
from tests.hypothesis_budget import examples


def old_key(spec: Any, path: str, is_pod: bool, features: FeatureGates, hugepages: bool = False) -> bytes | None:
    if type(spec) is not dict:
        return None
    hostname = spec.get("hostname")
    if type(hostname) is str and hostname and not is_dns1123_label(hostname):
        spec = {**spec, "hostname": ""}
    try:
        key = orjson.dumps([path, is_pod, str(features), _RATCHETED.get(), hugepages, spec])
    except TypeError:
        return None
    names = set(_TOKEN_VOLUME_NAME.findall(key))
    if len(names) == 1:
        return b"T" + key.replace(names.pop(), b'"kube-api-access-"')
    return key


def old_text(features: FeatureGates) -> str:
    return ",".join(f"{k}={str(v).lower()}" for k, v in features.overrides.items())


VOLUME = st.sampled_from(
    ["kube-api-access-abcde", "kube-api-access-x2z4q", "kube-api-access-", "kube-api-access-ABCDE", "data", "kube-api"]
)
SPEC = st.fixed_dictionaries(
    {},
    optional={
        "hostname": st.one_of(
            st.sampled_from(["bench-0", "", "Bad_Host", "x" * 70, "x" * 63, "x" * 64, "a.b", "a-", "a\n"]),
            st.text(alphabet="ab0-.A\n\u00e9", max_size=66),  # matched in place since stop 52
        ),
        "volumes": st.lists(st.fixed_dictionaries({"name": VOLUME}), max_size=2),
        "containers": st.lists(
            st.fixed_dictionaries(
                {"name": st.just("main")},
                optional={"volumeMounts": st.lists(st.fixed_dictionaries({"name": VOLUME}), max_size=2)},
            ),
            max_size=1,
        ),
    },
)
GATES = st.dictionaries(st.sampled_from(sorted(name for name, spec in KNOWN.items() if not spec.locked)), st.booleans())


@settings(max_examples=examples(400), deadline=None)
@given(spec=st.one_of(SPEC, st.none()), gates=GATES, is_pod=st.booleans(), hugepages=st.booleans())
def test_the_key_is_the_key_it_was(spec: Any, gates: dict[str, bool], is_pod: bool, hugepages: bool) -> None:
    features = FeatureGates.from_map(gates)
    assert features.text == old_text(features) == str(features)
    assert _valid_spec_key(spec, "spec", is_pod, features, hugepages) == old_key(
        spec, "spec", is_pod, features, hugepages
    )
