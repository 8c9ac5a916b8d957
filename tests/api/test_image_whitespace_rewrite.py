"""Stop 50: `ValidatePodCreate`'s image check reads the containers in place (`_validate_image_whitespace`).

It went through `items_of` with a path built for each list and a throwaway error list. The old loop is kept here;
hypothesis makes specs whose containers and init containers are lists of maps (images with and without surrounding
whitespace, of other types) and of entries that are no map, or are no list: the same errors in the same order.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.api.errors import ErrorType, FieldError
from kjobs.api.validation_access import items_of
from kjobs.api.validation_pod import _validate_image_whitespace
from tests.hypothesis_budget import examples


def old_loop(spec: Any, errs: list[FieldError]) -> None:
    for key in ("containers", "initContainers"):
        for i, container in items_of(spec.get(key) if type(spec.get(key)) is list else None, f"spec.{key}", []):
            image = container.get("image")
            if type(image) is str and image != image.strip():
                errs.append(
                    FieldError(
                        f"spec.{key}[{i}].image",
                        ErrorType.FieldValueInvalid,
                        "must not have leading or trailing whitespace",
                        image,
                    )
                )


IMAGE = st.one_of(st.sampled_from(["busybox", " busybox", "busybox\n", "", " ", "\tx"]), st.none(), st.integers(0, 1))
ENTRY = st.one_of(st.fixed_dictionaries({}, optional={"image": IMAGE, "name": st.just("c")}), st.just("x"), st.none())
LIST = st.one_of(st.lists(ENTRY, max_size=3), st.none(), st.just("x"), st.just({}))


@settings(max_examples=examples(800), deadline=None)
@given(spec=st.fixed_dictionaries({}, optional={"containers": LIST, "initContainers": LIST}))
def test_image_errors_as_before(spec: dict[str, Any]) -> None:
    got: list[FieldError] = []
    old: list[FieldError] = []
    _validate_image_whitespace(spec, got)
    old_loop(spec, old)
    assert [(e, str(e)) for e in got] == [(e, str(e)) for e in old]
