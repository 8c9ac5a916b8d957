"""Cold records kept deflated against a dictionary their siblings share (issue #15: ≤ 6 KB per stored pod).

A stored pod is about 5 KB of JSON, nearly all of it the same in every pod of its Job: the template's spec, the
defaults, the ServiceAccount admission's `kube-api-access-XXXXX` volume, `managedFields`, the status of a
finished container. Only the name, uid, index, timestamps and container id differ. A record that has not been
rewritten for a while (`cold_after` writes of the store) and has no finalizers left is deflated with the JSON of
another record of its group as zlib's preset dictionary: a finished pod then takes about 160 bytes, not 5,100.

Nothing a client sees changes: `Record.raw` inflates the same bytes back on each read (3–14 µs a pod), and
records written recently, the ones controllers and watchers read, are never packed. A group is the objects of
one resource that name the same controller in their labels (the Job's uid on its pods), or the rest of the
resource; a group's dictionary is the JSON of the first record packed in it, or of a later one that shares too
little with it (a group whose objects differ), kept for as long as some record packed against it lives.
"""

from __future__ import annotations

import zlib
from collections import deque
from typing import TYPE_CHECKING
from weakref import WeakValueDictionary

if TYPE_CHECKING:
    from kjobs.store.events import Record

COLD_AFTER = 8192
"""`SqliteStore`'s default: a record is packed once the store has made this many writes since (`kjobs up` at issue
#15's 5,000 pods in flight writes that many in about 3 s)."""

PACK_ABOVE = 25_000
"""`SqliteStore`'s default: records of a resource are packed only while it holds at least this many objects. Twice
kube-controller-manager's `--terminated-pod-gc-threshold` (12,500): a store at Kubernetes' defaults holds fewer
pods, where unpacked records cost ~6.5 KB each (≤ 160 MB) and packing would cost `kjobs up` ~0.17 ms of CPU a pod
(~10 %; docs/performance.md, "Stop 36"); a larger store is where the memory goes."""

MARK = 0
"""The first byte of a packed record; a stored object's JSON starts with `{`."""

_LEVEL = 3  # measured on kjobs up's pods: 156 B in 13 µs; level 1 gives 271 B, level 6 139 B in 34 µs
_MEM_LEVEL = 6
_WBITS = -14  # raw deflate (no header), a 16 KB window: a pod and its dictionary fit; a smaller state to allocate

_GROUP_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")
"""Labels naming an object's controlling Job: its pods share most of their JSON (kjobs.job's pod labels)."""

_POOR = 4
"""A packed record larger than 1/_POOR of its JSON shares too little with its group's dictionary: it becomes the
group's new dictionary instead (it stays unpacked; the records packed after it share it)."""


_FINALIZERS = b'"finalizers":['
"""How `metadata.finalizers` starts in a stored object's JSON (inside a string every quote is escaped). An object
with finalizers waits for a controller to remove them (a Job's pod until the Job controller counts it), so it will
be written again: packing it would be undone at once, and cost an inflate at each of the reads that write makes
(its patch's decode, `_stamp_update`'s length check, the SQLite checksum of the row it replaces). A false match
(another field so named) only leaves a record unpacked."""


class Dictionary:
    """A preset dictionary for zlib: the JSON of one record, shared by the records packed against it."""

    __slots__ = ("__weakref__", "zdict")

    def __init__(self, zdict: bytes) -> None:
        self.zdict = zdict


def pack(raw: bytes, dictionary: Dictionary) -> bytes:
    """`raw` deflated against `dictionary`, marked as packed."""
    packer = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEM_LEVEL, zlib.Z_DEFAULT_STRATEGY, dictionary.zdict)
    return b"\0" + packer.compress(raw) + packer.flush()


def unpack(data: bytes, dictionary: Dictionary) -> bytes:
    """The JSON `pack` was given."""
    return zlib.decompressobj(_WBITS, dictionary.zdict).decompress(memoryview(data)[1:])


def group_of(labels: dict[str, str]) -> str:
    """Which dictionary an object's record shares: its controlling Job's uid, or "" (the resource's)."""
    for label in _GROUP_LABELS:
        value = labels.get(label)
        if value:
            return value
    return ""


class Packer:
    """The store's `cold_after` most recent writes, and the packing of each one that is still the stored object
    when it leaves them (caller holds the store's lock)."""

    __slots__ = ("_dictionaries", "_recent", "cold_after", "pack_above", "packed")

    def __init__(self, cold_after: int, pack_above: int = 0) -> None:
        self.cold_after = cold_after
        self.pack_above = pack_above
        self._recent: deque[tuple[dict[str, Record], str, str, Record]] = deque()
        self._dictionaries: WeakValueDictionary[tuple[str, str], Dictionary] = WeakValueDictionary()
        self.packed = 0

    def written(self, records: dict[str, Record], resource: str, path: str, record: Record) -> None:
        """Note a record just stored at `records[path]`; pack the write that this one makes cold, if still stored."""
        recent = self._recent
        recent.append((records, resource, path, record))
        if len(recent) > self.cold_after:
            records, resource, path, old = recent.popleft()
            if len(records) >= self.pack_above and records.get(path) is old and _FINALIZERS not in old.data:
                self.pack(resource, old)

    def pack(self, resource: str, record: Record) -> None:
        """Pack `record` in place, or make it its group's dictionary (then it stays as it is)."""
        raw = record.data
        if raw[0] == MARK:
            return
        key = (resource, group_of(record.labels))
        dictionary = self._dictionaries.get(key)
        if dictionary is not None:
            data = pack(raw, dictionary)
            if len(data) * _POOR <= len(raw):
                # The dictionary first: a reader that sees the packed bytes must find the dictionary set (a reader
                # reads `data`, then `dictionary`, and holds no lock).
                record.dictionary = dictionary
                record.data = data
                self.packed += 1
                return
        dictionary = self._dictionaries[key] = Dictionary(raw)
        record.dictionary = dictionary  # the JSON itself is the dictionary: unpacked, and no copy made
