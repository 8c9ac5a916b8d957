"""Stop 53: `ApiService.patch` and `apply_patch` take a content type of `PATCH_MEDIA` as its own base type
instead of parsing it. The oracle is stop 52's parse (`split`, `strip`, `lower`), kept here: every member is its
own parse, and hypothesis content types (members with parameters, capitals, spaces, other types) get the base
stop 52 gave them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kjobs.server.patch import PATCH_MEDIA, media_base
from tests.hypothesis_budget import examples


def base52(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def test_each_patch_type_is_its_own_base() -> None:
    for media in PATCH_MEDIA:
        assert base52(media) == media


CONTENT_TYPES = st.builds(
    lambda media, upper, pad, params: (media.upper() if upper else media) + pad + params,
    st.sampled_from([*sorted(PATCH_MEDIA), "application/json", "text/plain", ""]),
    st.booleans(),
    st.sampled_from(["", " ", "\t"]),
    st.sampled_from(["", "; charset=utf-8", ";", ";x=1;y=2"]),
)


@settings(max_examples=examples(300), deadline=None)
@given(content_type=st.one_of(CONTENT_TYPES, st.text(max_size=40)))
def test_the_base_stop_52_gave(content_type: str) -> None:
    base = content_type if content_type in PATCH_MEDIA else media_base(content_type)
    assert base == base52(content_type)
