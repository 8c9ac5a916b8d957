"""Object UIDs are version 4 UUIDs, all distinct."""

from __future__ import annotations

import uuid

from kjobs.api.uids import random_uuid


def test_random_uuids_are_distinct_version_4_rfc_4122_uuids() -> None:
    made = [random_uuid() for _ in range(2000)]  # more than one 4 KiB pool of random bytes
    assert len(set(made)) == len(made)
    for text in made:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
