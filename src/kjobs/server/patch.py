"""The three PATCH flavours Kubernetes accepts, as pure functions over JSON dicts.

* JSON merge patch (RFC 7386): `null` deletes, objects merge, everything else (lists included) replaces.
* JSON patch (RFC 6902): a list of `add/remove/replace/move/copy/test` operations addressed by JSON pointers.
* Strategic merge patch (apimachinery `strategicpatch`): like a merge patch, but lists follow the per-field
  strategy Kubernetes' Go types declare (`patchStrategy:"merge"` + `patchMergeKey`), and the `$patch`,
  `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…` directives are honoured.

The strategies are not hard-coded here: `strategic_merge` takes a `strategies` lookup from a field path
(field names only, list levels are transparent) to `(patch_strategy, merge_key)`, which the schema module
answers from Kubernetes' own OpenAPI extensions. Inputs are never mutated; results share untouched subtrees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kjobs.api.errors import ApiError
from kjobs.server import limits

Path = tuple[str, ...]
StrategyLookup = Callable[[Path], tuple[str, str]]
"""Maps a field path such as `("spec", "template", "spec", "containers")` to `(strategy, merge_key)`;
strategy is `""` (replace), `"merge"`, `"retainKeys"` or `"merge,retainKeys"`."""


class PatchError(ValueError):
    """The patch cannot be applied to the object (the server answers 422)."""


class MalformedPatch(PatchError):
    """The patch document does not even decode as its type's JSON (the server answers 400 BadRequest, as the
    apiserver does when `jsonpatch.DecodePatch` or the unmarshal of a strategic merge patch fails)."""


_GO_JSON_TYPES = ((bool, "bool"), (dict, "object"), (list, "array"), (str, "string"), ((int, float), "number"))


def _cannot_unmarshal(value: Any, go_type: str) -> MalformedPatch:
    """encoding/json's error for a JSON value of the wrong type."""
    found = next((name for kind, name in _GO_JSON_TYPES if isinstance(value, kind)), "null")
    return MalformedPatch(f"json: cannot unmarshal {found} into Go value of type {go_type}")


def no_strategies(path: Path) -> tuple[str, str]:
    """A lookup for objects without schema: every list is replaced, as in a JSON merge patch."""
    return "", ""


# ---------------------------------------------------------------------------------------------- merge patch


def _decoding(error: MalformedPatch) -> MalformedPatch:
    return MalformedPatch(f"error decoding patch: {error}")


def json_merge(original: Any, patch: Any) -> Any:
    """Apply an RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    result = dict(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge(result.get(key), value)
    return result


# ---------------------------------------------------------------------------------------------- JSON patch
#
# As json-patch v4 (gopkg.in/evanphx/json-patch.v4, v4.12.0 in Kubernetes v1.32, vendor/.../patch.go) applies it,
# which is laxer than RFC 6902 in ways clients come to rely on: a pointer's first segment is dropped unread
# (`findObject`), a missing object member reads as null, so `replace` of one adds it and `test` of one against
# null passes, `copy` of one copies null, `add` without a value adds null, and array indexes may be negative
# (counting from the end, `SupportNegativeIndices`) or carry a sign or leading zeros (`strconv.Atoi`).

_INT64 = 2**63


def _atoi(token: str) -> int:
    """strconv.Atoi: an optional sign and ASCII digits, within int64."""
    digits = token[1:] if token[:1] in ("+", "-") else token
    if not digits or not all("0" <= ch <= "9" for ch in digits):
        raise PatchError(f'strconv.Atoi: parsing "{token}": invalid syntax')
    value = int(token)
    if not -_INT64 <= value < _INT64:
        raise PatchError(f'strconv.Atoi: parsing "{token}": value out of range')
    return value


def _invalid_index(i: int) -> PatchError:
    return PatchError(f"Unable to access invalid index: {i}: invalid index referenced")


def _element(array: list[Any], token: str) -> int:
    """The index `token` names in `array` for a read, replace or remove (`partialArray.get`/`remove`)."""
    i = _atoi(token)
    if i < 0:
        if i < -len(array):
            raise _invalid_index(i)
        i += len(array)
    if i >= len(array):
        raise _invalid_index(i)
    return i


def _get(container: Any, key: str) -> Any:
    """`container.get(key)`: an object's missing member is None (null), an array's bad index an error."""
    if isinstance(container, dict):
        return container.get(key)
    return container[_element(container, key)]


def _set(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    else:
        container[_element(container, key)] = value


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    i, size = _atoi(key), len(container) + 1
    if i >= size or i < -size:
        raise _invalid_index(i)
    container.insert(i + size if i < 0 else i, value)


def _remove(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise PatchError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
    else:
        del container[_element(container, key)]


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _find(root: Any, path: str) -> tuple[Any, Any, str] | None:
    """`findObject`: the (copied) root, the container the pointer's last segment is in, and that segment; None
    when a container on the way is missing, null, a scalar or a bad index. The containers on the way are copied
    so the caller may change the one it gets without touching the original document."""
    parts = path.split("/")
    if len(parts) < 2 or not isinstance(root, (dict, list)):
        return None
    root = _shallow(root)
    node = root
    for part in parts[1:-1]:
        key = _unescape(part)
        try:
            child = _get(node, key)
        except PatchError:
            return None
        if not isinstance(child, (dict, list)):
            return None
        child = _shallow(child)
        if isinstance(node, dict):
            node[key] = child
        else:
            node[_element(node, key)] = child
        node = child
    return root, node, _unescape(parts[-1])


def _shallow(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _string(op: dict[str, Any], key: str) -> str:
    """An operation's `path` or `from` (`Operation.Path`/`From`)."""
    value = op.get(key)
    if value is None:
        raise PatchError(f"operation missing {key} field: missing value")
    if not isinstance(value, str):
        raise PatchError(f"json: cannot unmarshal {type(value).__name__} into Go value of type string")
    return value


def _located(doc: Any, path: str, kind: str, what: str = "path") -> tuple[Any, Any, str]:
    found = _find(doc, path)
    if found is None:
        raise PatchError(f"{kind} operation does not apply: doc is missing {what}: {path}: missing value")
    return found


def json_patch(original: Any, operations: Any) -> Any:
    """Apply a JSON patch (a list of operations) as json-patch v4 does, and return the new document.

    At most `limits.MAX_JSON_PATCH_OPERATIONS` operations (413), whose copies add at most `limits.MAX_COPY_BYTES`
    (json-patch's `AccumulatedCopySizeError`): copies share what they copy here, but the result is written out
    whole, so a patch that doubles a map sixteen times would otherwise freeze the server. A `PatchError` is
    json-patch's error text; the apiserver answers every such failure with the same generic 422
    (`NewGenericServerResponse`, see `apply_patch`)."""
    if operations is None:  # `null` decodes as a patch of no operations
        return original
    if not isinstance(operations, list):
        raise _cannot_unmarshal(operations, "jsonpatch.Patch")
    for op in operations:
        if op is not None and not isinstance(op, dict):
            raise _cannot_unmarshal(op, "jsonpatch.Operation")
    if len(operations) > limits.MAX_JSON_PATCH_OPERATIONS:
        raise limits.too_large(
            f"The allowed maximum operations in a JSON patch is {limits.MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(operations)}"
        )
    if not isinstance(original, (dict, list)):
        raise PatchError("json: cannot unmarshal the document")
    doc = original
    copied = 0  # bytes added by `copy` operations so far (json-patch's accumulatedCopySize)
    for op in operations:
        kind = op.get("op") if isinstance(op, dict) else None
        if not isinstance(op, dict) or kind not in ("add", "remove", "replace", "move", "test", "copy"):
            raise PatchError(f"Unexpected kind: {kind if isinstance(kind, str) else 'unknown'}")
        value = op.get("value")  # absent or null: null
        if kind == "add":
            doc, container, key = _located(doc, _string(op, "path"), kind)
            _add(container, key, value)
        elif kind == "remove":
            doc, container, key = _located(doc, _string(op, "path"), kind)
            _remove(container, key)
        elif kind == "replace":
            path = _string(op, "path")
            if path == "":
                if not isinstance(value, (dict, list)):
                    raise PatchError("replace operation value must be object or array")
                doc = value
                continue
            doc, container, key = _located(doc, path, kind)
            _get(container, key)  # an array's index must exist; an object's member need not
            _set(container, key, value)
        elif kind == "test":
            path = _string(op, "path")
            current = doc if path == "" else _get(*_located(doc, path, kind)[1:])
            if current is None and path != "":
                if value is not None:
                    raise PatchError(f"testing value {path} failed: test failed")
            elif "value" not in op or not _equal(current, value):
                raise PatchError(f"testing value {path} failed: test failed")
        else:  # move, copy
            doc, container, key = _located(doc, _string(op, "from"), kind, "from path")
            moved = _get(container, key)
            if kind == "move":
                _remove(container, key)
            else:
                try:
                    copied += len(orjson.dumps(moved))
                except orjson.JSONEncodeError:
                    raise PatchError(f"exceeded max depth of {limits.MAX_DEPTH}") from None
                if copied > limits.MAX_COPY_BYTES:
                    raise PatchError(
                        "Unable to complete the copy, the accumulated size increase of copy is "
                        f"{copied}, exceeding the limit {limits.MAX_COPY_BYTES}"
                    )
            doc, container, key = _located(doc, _string(op, "path"), kind, "destination path")
            _add(container, key, moved)
    return doc


def _equal(a: Any, b: Any) -> bool:
    """`lazyNode.equal`: JSON values alike in kind and content (`true` is not `1`, `1` not `1.0`); nesting too
    deep for the comparison is a failed patch rather than a crash."""
    try:
        return _same(a, b)
    except RecursionError:
        raise PatchError(f"exceeded max depth of {limits.MAX_DEPTH}") from None


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# ---------------------------------------------------------------------------------------------- strategic merge

_DIRECTIVE = "$patch"
_RETAIN = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"


_GENERAL, _NO_DIRECTIVES, _PLAIN = 0, 1, 2
"""How much of the merge a patch needs: directives anywhere (`$patch`, `$retainKeys`, ...); only nulls (deletions,
as the kubelet's status patches send `lastProbeTime: null`) and `$setElementOrder/…`; or neither, so values go in
as they are."""


def strategic_merge(original: Any, patch: Any, *, strategies: StrategyLookup = no_strategies) -> Any:
    """Apply a strategic merge patch to `original`, using `strategies` for per-field list behaviour."""
    if not isinstance(patch, dict):
        raise _cannot_unmarshal(patch, "map[string]interface {}")
    base = original if isinstance(original, dict) else {}
    # The patch's JSON is looked at once, in C, for directives and nulls (most controller writes have neither):
    # what a patch does not have is then never looked for in the walk.
    result = _merge_map(base, patch, (), strategies, _mode(patch))
    return {} if result is None else result


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], path: Path, lookup: StrategyLookup, mode: int = _GENERAL
) -> Any:
    if mode != _GENERAL:
        result = dict(original)
        orders = None
        for key, value in patch.items():
            if key[:1] == "$":  # in this mode, only `$setElementOrder/…` (see `_mode`): applied once merged
                orders = [*(orders or ()), key]
            elif value is None:
                result.pop(key, None)
            else:
                kind = type(value)  # asked once a key
                if kind is dict:
                    current = result.get(key)
                    if lookup((*path, key))[0] == "replace":  # `patchStrategy:"replace"` on a struct field
                        current = None
                    child = (*path, key)
                    result[key] = _merge_map(current if type(current) is dict else {}, value, child, lookup, mode)
                elif kind is list:
                    current = result.get(key)
                    child = (*path, key)
                    result[key] = _merge_list(current if type(current) is list else [], value, child, lookup, mode)
                else:
                    result[key] = value
        for key in orders or ():
            _set_order(original, result, patch, key, patch[key], path, lookup)
        return result
    directive = patch.get(_DIRECTIVE)
    if directive is not None:
        if directive == "replace":
            return _strip({k: v for k, v in patch.items() if k != _DIRECTIVE}, path, lookup)
        if directive == "delete":
            return None
        raise PatchError(f"Unknown patch type: {directive}")
    result = dict(original)
    retain = patch.get(_RETAIN)
    deletions: dict[str, list[Any]] = {}
    ordering: list[str] = []  # the `$setElementOrder/…` keys, in the patch's order: applied once merged
    for key, value in patch.items():
        # Only a key that starts with `$` can be a directive: only it is tested for one (and a key that is no
        # string, on which the tests fail as they did), two method calls fewer for every other key.
        if type(key) is not str or key[:1] == "$":
            if key == _RETAIN:
                continue
            if key.startswith(_ORDER):
                ordering.append(key)
                continue
            if key.startswith(_DELETE_PRIMITIVE):
                if not isinstance(value, list):  # ErrBadPatchFormatForPrimitiveList (400)
                    raise MalformedPatch("invalid patch format of primitive list")
                deletions[key[len(_DELETE_PRIMITIVE) :]] = value
                continue
        child = (*path, key)
        if value is None:
            result.pop(key, None)
            continue
        current = result.get(key)
        if isinstance(value, dict):
            if lookup(child)[0] == "replace":
                current = None  # mergeMapHandler: a field whose patchStrategy is replace takes the patch's map
            merged = _merge_map(current if isinstance(current, dict) else {}, value, child, lookup)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(current if isinstance(current, list) else [], value, child, lookup)
        else:
            result[key] = value
    for key, values in deletions.items():
        if isinstance(result.get(key), list):
            result[key] = [v for v in result[key] if v not in values]
    for key in ordering:
        _set_order(original, result, patch, key, patch[key], path, lookup)
    if retain is not None:
        # apimachinery's applyRetainKeysDirective: a list of keys, else ErrBadPatchFormatForRetainKeys (400). Its
        # keys go into a Go map, where a map or list element panics (a 500); kjobs answers that as a non-list.
        if not isinstance(retain, list) or any(isinstance(k, (dict, list)) for k in retain):
            raise MalformedPatch("invalid patch format of retainKeys")
        keep = set(retain)
        for key, value in patch.items():  # every key the patch sets must be one it retains
            is_directive = key == _RETAIN or key.startswith((_ORDER, _DELETE_PRIMITIVE))
            if value is not None and not is_directive and key not in keep:
                raise MalformedPatch("invalid patch format of retainKeys")
        result = {k: v for k, v in result.items() if k in keep or k in patch}
    return result


def _merge_list(
    original: list[Any], patch: list[Any], path: Path, lookup: StrategyLookup, mode: int = _GENERAL
) -> list[Any]:
    strategy, merge_key = lookup(path)
    general = mode == _GENERAL
    if general and any(isinstance(e, dict) and e.get(_DIRECTIVE) == "replace" and len(e) == 1 for e in patch):
        return [_strip(e, path, lookup) for e in patch if not (isinstance(e, dict) and _DIRECTIVE in e)]
    if strategy != "merge" and "merge" not in strategy.split(","):
        # A list whose JSON holds no directive and no null (a kubelet's `containerStatuses`) strips to itself:
        # each element's JSON is a part of the list's, so `_strip` would hand back each as it is (a flat map as an
        # equal copy; here the patch's own, shared as `_PLAIN` shares it). One scan of the list in C instead of a
        # call or two an element.
        if mode == _PLAIN or _mode(patch) == _PLAIN:
            return list(patch)
        return [_strip(e, path, lookup, mode) for e in patch]
    maps = bool(merge_key)
    if maps:  # `_all_maps` of both lists, in this loop: two calls fewer a merged list
        for element in original:
            if not isinstance(element, dict):
                maps = False
                break
        else:
            for element in patch:
                if not isinstance(element, dict):
                    maps = False
                    break
    if not maps:
        # merge of primitives: a set union that keeps the original order
        merged = list(original)
        for element in patch:
            if general and isinstance(element, dict) and element.get(_DIRECTIVE) == "delete":
                continue
            if element not in merged:
                merged.append(element)
        return merged
    if not general:
        return _merge_keyed(original, patch, path, lookup, mode, merge_key)
    result = list(original)
    for element in patch:
        if merge_key not in element:
            raise PatchError(f"map: {element} does not contain declared merge key: {merge_key}")
        key_value = element[merge_key]
        if element.get(_DIRECTIVE) == "delete":
            result = [e for e in result if e.get(merge_key) != key_value]
            continue
        at = _position(result, merge_key, key_value)
        if at is None:
            stripped = _strip(element, path, lookup, mode)
            if stripped is not None:
                result.append(stripped)
        else:
            # not `merged`, a list above: mypyc holds a name to the type it was first given (docs/mypyc.md)
            merged_element = _merge_map(result[at], element, path, lookup, mode)
            if merged_element is None:
                del result[at]
            else:
                result[at] = merged_element
    return result


def _merge_keyed(
    original: list[dict[str, Any]], patch: list[dict[str, Any]], path: Path, lookup: StrategyLookup, mode: int, key: str
) -> list[Any]:
    """`_merge_list`'s merge of maps by their merge key `key` outside the general walk, where no element is deleted
    (no `$patch`, and `_merge_map` returns a map there): each patch element merges into the first element of the
    same key, found by a scan in this loop, or is added — as it is (`_PLAIN`), or, holding nulls to drop, copied
    without them in one pass when it is flat (the kubelet's conditions, its IPs), else through the merge."""
    result = list(original)
    for element in patch:
        if key not in element:
            raise PatchError(f"map: {element} does not contain declared merge key: {key}")
        key_value = element[key]
        for at, existing in enumerate(result):
            if existing.get(key) == key_value:
                result[at] = _merge_map(existing, element, path, lookup, mode)
                break
        else:
            if mode == _PLAIN:
                result.append(element)
                continue
            # `_stripped_flat`, in this loop (a call an added element): its copy without nulls, unless it nests
            flat: dict[str, Any] = {}
            for name, value in element.items():
                kind = type(value)
                if kind is dict or kind is list:
                    break
                if value is not None:
                    flat[name] = value
            else:
                result.append(flat)
                continue
            # `_strip` of a map that nests, outside the general walk
            result.append(element if _mode(element) == _PLAIN else _merge_map({}, element, path, lookup, mode))
    return result


def _set_order(
    original: dict[str, Any],
    result: dict[str, Any],
    patch: dict[str, Any],
    key: str,
    order: Any,
    path: Path,
    lookup: StrategyLookup,
) -> None:
    """`$setElementOrder/<field>`: the merged list's elements that the order names come in its order, and the
    others (the server's only) keep theirs, interleaved by where they stood in the original list
    (apimachinery's `mergePatchIntoOriginal` and `normalizeElementOrder`)."""
    if not isinstance(order, list):
        raise PatchError(f"{key} must be a list")
    field = key[len(_ORDER) :]
    merged = result.get(field)
    if not isinstance(merged, list):
        return
    merge_key = lookup((*path, field))[1]
    patch_list = patch.get(field)
    # The order's names and their places, read in this loop (`_idents` and a `dict` of pairs cost two calls and a
    # list more, about 2 µs of a kubelet status patch's 20): each name's last place, as a `dict` of pairs keeps it.
    table: dict[Any, int] = {}
    try:
        if merge_key:
            for at, element in enumerate(order):
                table[element.get(merge_key) if isinstance(element, dict) else element] = at
        else:
            for at, element in enumerate(order):
                table[element] = at
        unique = len(table) == len(order)
    except TypeError:  # a name that does not hash (a map, a list)
        unique = False
    if not unique:  # or a name the order repeats: the scans
        wanted = _idents(order, merge_key)
        if isinstance(patch_list, list):
            _check_order(patch_list, order, wanted, merge_key)
        idents = _idents(merged, merge_key)
        ranks = _ranks(wanted, idents)
    else:
        # Each name once in the order (the kubelet's conditions by type): one table gives every place. The patch's
        # own elements are in the order's relative order when their places rise (the scan's subsequence), and a
        # name that does not hash is in no place (it equals none of the order's, which all hash).
        if isinstance(patch_list, list):
            last = -1
            for element in patch_list:
                if isinstance(element, dict):
                    if _DIRECTIVE in element:
                        continue
                    if merge_key:
                        element = element.get(merge_key)
                try:
                    at = table.get(element, -1)
                except TypeError:
                    at = -1
                if at <= last:
                    raise PatchError(
                        f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n"
                    )
                last = at
        # each merged element by its place, read in this loop as `_idents` would name it
        by_place: dict[Any, Any] = {}
        try:
            if merge_key:
                for element in merged:
                    by_place[table.get(element.get(merge_key) if isinstance(element, dict) else element)] = element
            else:
                for element in merged:
                    by_place[table.get(element)] = element
        except TypeError:  # a merged element named by a map or a list: `_first_positions`' answers
            idents = _idents(merged, merge_key)
            ranks = _ranks(_idents(order, merge_key), idents)
        else:
            if None not in by_place and len(by_place) == len(merged):
                # each merged element in a place of its own (the kubelet's conditions): placed by its place, in C
                result[field] = list(map(by_place.__getitem__, sorted(by_place)))
                return
            idents = _idents(merged, merge_key)
            ranks = [table.get(ident, -1) for ident in idents]
    if -1 not in ranks:
        # Every merged element is named by the order (a kubelet's status patch, which moves `PodScheduled` last):
        # no element of the server's own to interleave, so the order alone places them, stably: the pairs
        # (rank, index) sort in C with no key function (a keyword argument to a builtin is parsed the slow way).
        result[field] = [merged[at] for _, at in sorted(zip(ranks, range(len(merged))))]  # noqa: B905 (equal lengths)
        return
    before = original.get(field)
    rank_server = _first_positions(_idents(before, merge_key) if isinstance(before, list) else [])
    # each merged element's place in the order and in the original list, looked up once
    placed = [(rank, rank_server(i), e) for rank, i, e in zip(ranks, idents, merged, strict=True)]
    ordered = sorted((p for p in placed if p[0] >= 0), key=lambda p: p[0])
    server_only = sorted((p for p in placed if p[0] < 0), key=lambda p: p[1])
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(ordered):
        if j >= len(ordered) or (i < len(server_only) and 0 <= server_only[i][1] < ordered[j][1]):
            out.append(server_only[i][2])
            i += 1
        else:
            out.append(ordered[j][2])
            j += 1
    result[field] = out


def _check_order(patch_list: list[Any], order: list[Any], wanted: list[Any], merge_key: str) -> None:
    """The patch's own elements must come in the `$setElementOrder` list's relative order (apimachinery's
    `validatePatchWithSetOrderList`): each named at or after where the previous one was found."""
    at = 0
    for value in _named(patch_list, merge_key):
        while at < len(wanted) and wanted[at] != value:
            at += 1
        if at == len(wanted):
            raise PatchError(
                f"The order in patch list:\n{patch_list}\n doesn't match $setElementOrder list:\n{order}\n"
            )
        at += 1


def _ranks(wanted: list[Any], idents: list[Any]) -> list[int]:
    """Where each of `idents` first stands in `wanted` (-1 if absent), as `_first_positions` finds it: when every
    name hashes (a merge key's strings), through a table of first positions built in C (the reversed pairs leave
    each value its first index) and one lookup an element."""
    try:
        table = dict(zip(reversed(wanted), range(len(wanted) - 1, -1, -1)))  # noqa: B905 (equal lengths)
        return [table.get(ident, -1) for ident in idents]
    except TypeError:  # a name that does not hash (a map, a list): `_first_positions`' scan and its answers
        rank = _first_positions(wanted)
        return [rank(ident) for ident in idents]


def _idents(elements: list[Any], merge_key: str) -> list[Any]:
    """What names each element in a `$setElementOrder` comparison: its merge key's value if it is a map and the
    list has a merge key, else the element itself (one call a list, not one an element)."""
    if not merge_key:
        return list(elements)
    return [e.get(merge_key) if isinstance(e, dict) else e for e in elements]


def _named(elements: list[Any], merge_key: str) -> list[Any]:
    """`_idents` of the elements that are not a `$patch` directive, in one comprehension."""
    if not merge_key:
        return [e for e in elements if not (isinstance(e, dict) and _DIRECTIVE in e)]
    return [
        e.get(merge_key) if isinstance(e, dict) else e
        for e in elements
        if not (isinstance(e, dict) and _DIRECTIVE in e)
    ]


def _all_maps(elements: list[Any]) -> bool:
    # a loop, not `all(...)` over a generator (SIM110): a generator costs a frame a call
    for element in elements:  # noqa: SIM110
        if not isinstance(element, dict):
            return False
    return True


def _first_positions(values: list[Any]) -> Callable[[Any], int]:
    """Where a value first stands in `values` (-1 if absent): a table when every value hashes, else a scan (a
    list's elements without a merge key are compared whole, and a map is not hashable)."""
    table: dict[Any, int] = {}
    try:
        for at, value in enumerate(values):
            table.setdefault(value, at)
    except TypeError:
        return lambda value: next((at for at, v in enumerate(values) if v == value), -1)

    def find(value: Any) -> int:
        try:
            return table.get(value, -1)
        except TypeError:  # an unhashable value equals none of the hashable ones
            return -1

    return find


def _position(elements: list[dict[str, Any]], merge_key: str, value: Any) -> int | None:
    """Where the element whose `merge_key` is `value` is, if any (the first, as apimachinery finds it)."""
    for i, element in enumerate(elements):
        if element.get(merge_key) == value:
            return i
    return None


def _strip(value: Any, path: Path, lookup: StrategyLookup, mode: int = _GENERAL) -> Any:
    """Remove directives (and nulls) from a value that is added wholesale (nothing to merge with)."""
    if mode != _GENERAL and type(value) is dict and _scalars_only(value):
        return {k: v for k, v in value.items() if v is not None}  # a condition with `lastProbeTime: null`
    if isinstance(value, (dict, list)) and _mode(value) == _PLAIN:
        return value
    if isinstance(value, dict):
        if mode != _GENERAL:
            return _merge_map({}, value, path, lookup, mode)
        if value.get(_DIRECTIVE) == "delete":
            return None
        return _merge_map({}, {k: v for k, v in value.items() if k != _DIRECTIVE}, path, lookup)
    if isinstance(value, list):
        return [s for s in (_strip(v, path, lookup, mode) for v in value) if s is not None]
    return value


def _stripped_flat(element: dict[str, Any]) -> dict[str, Any] | None:
    """What `_strip` gives a map that holds no map or list (a condition, an IP) outside `_GENERAL` (its copy
    without nulls), in one pass: the test and the copy at once, no call a key; None for a map that nests."""
    flat: dict[str, Any] = {}
    for key, value in element.items():
        kind = type(value)
        if kind is dict or kind is list:
            return None
        if value is not None:
            flat[key] = value
    return flat


def _scalars_only(value: dict[str, Any]) -> bool:
    # a loop, not `any(...)` over a generator: called for every element a status patch adds
    for v in value.values():
        kind = type(v)
        if kind is dict or kind is list:
            return False
    return True


def _mode(value: dict[str, Any] | list[Any]) -> int:
    """`_PLAIN`, `_NO_DIRECTIVES` or `_GENERAL` for `value` (see `_GENERAL`).

    Read from its JSON, in C: a `"$` or `null` inside a string only sends the value a slower way."""
    try:
        raw = orjson.dumps(value)
    except TypeError:
        return _GENERAL
    # Each `"$` is found through its `$` (a one-byte search is a `memchr`, several times cheaper than a search
    # for two bytes), and `find` rather than `in`: `bytes in bytes` first tries the needle as an integer, which
    # raises and clears a TypeError every call. The kubelet's status patches order conditions with
    # `$setElementOrder/conditions`, and nothing else: that one directive does not need the general walk (compared
    # as a slice: `startswith` at an offset parses its arguments the slow way).
    at = raw.find(b"$")
    ordering = False
    while at >= 0:
        if at and raw[at - 1] == _QUOTE:
            if raw[at + 1 : at + _ORDER_END] != _ORDER_TAIL:
                return _GENERAL
            ordering = True
        at = raw.find(b"$", at + 1)
    if ordering:
        return _NO_DIRECTIVES
    return _NO_DIRECTIVES if raw.find(b"null") >= 0 else _PLAIN


_QUOTE = ord('"')
_ORDER_TAIL = _ORDER[1:].encode()
_ORDER_END = 1 + len(_ORDER_TAIL)
"""`setElementOrder/`: what follows the `$` of the one directive `_NO_DIRECTIVES` allows; where it ends."""


def apply_patch(
    content_type: str,
    original: Any,
    patch: Any,
    *,
    strategies: StrategyLookup = no_strategies,
    strict_decode: bool = False,
) -> Any:
    """Dispatch on the request's patch content type; unknown types are a 415 like the apiserver's.

    `strict_decode`: the request's field validation is Warn (the default) or Strict, under which the apiserver
    first decodes a JSON or merge patch strictly into its Go type, so a document of the wrong shape is a 400
    `error decoding patch: ...` (handlers/patch.go `applyJSPatch`) before json-patch sees it."""
    base = content_type if content_type in PATCH_MEDIA else media_base(content_type)
    try:
        if base == "application/strategic-merge-patch+json":
            return strategic_merge(original, patch, strategies=strategies)
        if base == "application/merge-patch+json":
            if strict_decode and patch is not None and not isinstance(patch, dict):
                raise _decoding(_cannot_unmarshal(patch, "map[string]interface {}"))
            if isinstance(patch, list):  # json-patch merges it into an array, which then does not decode
                raise PatchError("a merge patch must be a JSON object")
            if not isinstance(patch, dict):
                raise MalformedPatch("Invalid JSON Patch")  # json-patch's ErrBadJSONPatch
            return json_merge(original, patch)
        if base == "application/json-patch+json":
            if strict_decode and patch is not None:
                if not isinstance(patch, list):
                    raise _decoding(_cannot_unmarshal(patch, "[]handlers.jsonPatchOp"))
                for op in patch:
                    if op is not None and not isinstance(op, dict):
                        raise _decoding(_cannot_unmarshal(op, "handlers.jsonPatchOp"))
            try:
                return json_patch(original, patch)
            except MalformedPatch:
                raise
            except PatchError as failed:
                raise json_patch_failed() from failed
    except MalformedPatch as malformed:  # a name per exception type: mypyc gives `exc` the first clause's type
        raise ApiError(400, "BadRequest", str(malformed)) from malformed
    except PatchError as exc:
        raise ApiError(422, "Invalid", str(exc)) from exc
    raise unsupported_patch_type()


def json_patch_failed() -> ApiError:
    """422 for a JSON patch json-patch could not apply: handlers/patch.go `applyJSPatch` answers it with
    `NewGenericServerResponse(422, ...)`, whose message is the generic one and whose details are empty, whatever
    failed (a `test`, a missing member, a bad index); json-patch's own text is not sent."""
    return ApiError(422, "Invalid", "the server rejected our request due to an error in our request", details={})


PATCH_MEDIA = frozenset(
    {
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    }
)
"""The patch content types the apiserver accepts (staging/src/k8s.io/apiserver/pkg/endpoints/installer.go)."""


def media_base(content_type: str) -> str:
    """A request's media type without its parameters, lower case. Each of `PATCH_MEDIA` is its own (the form
    every kjobs client sends, and the one `ApiService.patch` hands on): callers look it up there first."""
    return content_type.split(";", 1)[0].strip().lower()


def unsupported_patch_type() -> ApiError:
    """415 for a PATCH whose content type is not a patch type (handlers/patch.go)."""
    return ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
        "application/strategic-merge-patch+json",
    )
