"""Shared decoded watch objects, and the detector that catches a consumer changing one.

Design note: every in-process watcher of a resource used to decode each change's JSON for itself, so a
pod write watched by three informers cost three decodes. Now one change is decoded once and the same dict
goes to every in-process watcher, as client-go's shared informers hand one object to every handler. The
rule is Kubernetes' too: objects from a watch or an informer cache are read-only; copy before changing.
Kubernetes checks that rule with `KUBE_CACHE_MUTATION_DETECTOR`; kjobs has the same switch
(`KJOBS_CACHE_MUTATION_DETECTOR=1`, on in the test suite): each shared object is remembered with its JSON,
and `check()` raises naming every object that no longer encodes to the bytes it was decoded from.
"""

from __future__ import annotations

import os
from collections import deque

import orjson

from kjobs.api.types import Obj

ENV = "KJOBS_CACHE_MUTATION_DETECTOR"
_KEEP = 50_000


class SharedDecode:
    """One committed change's JSON, decoded at most once for all the watchers it is delivered to."""

    __slots__ = ("obj", "raw")

    def __init__(self, raw: bytes, obj: Obj | None = None) -> None:
        """`obj`, when given, is the object `raw` was encoded from, handed over by its writer: it is shared as is
        (no decode at all), under the same read-only rule."""
        self.raw = raw
        self.obj = obj
        if obj is not None and _remembered is not None:
            _remembered.append((obj, raw))

    def get(self) -> Obj:
        """The decoded object (the same dict for every caller: read-only)."""
        obj = self.obj
        if obj is None:
            obj = self.obj = orjson.loads(self.raw)
            if _remembered is not None:
                _remembered.append((obj, self.raw))
        return obj


class CacheMutationError(AssertionError):
    """A shared watch object was changed in place by whoever received it."""


_remembered: deque[tuple[Obj, bytes]] | None = deque(maxlen=_KEEP) if os.environ.get(ENV) else None


def enable(on: bool = True) -> None:
    """Turn detection on (or off) for this process, as the environment variable does at start."""
    global _remembered
    _remembered = deque(maxlen=_KEEP) if on else None


def check() -> None:
    """Raise `CacheMutationError` if a shared object decoded since the last check was changed; then forget them."""
    remembered = _remembered
    if remembered is None:
        return
    # Taken one by one, not iterated: a cluster running on another thread may be remembering objects meanwhile
    # (those are left for the next check).
    changed = []
    for _ in range(len(remembered)):
        try:
            obj, raw = remembered.popleft()
        except IndexError:  # emptied by a check on another thread
            break
        if orjson.dumps(obj) != raw:
            changed.append(obj)
    if changed:
        names = ", ".join(
            f"{o.get('kind', '?')} {(o.get('metadata') or {}).get('namespace', '')}/"
            f"{(o.get('metadata') or {}).get('name', '')}@{(o.get('metadata') or {}).get('resourceVersion', '')}"
            for o in changed[:10]
        )
        raise CacheMutationError(f"{len(changed)} shared watch object(s) changed in place: {names}")
