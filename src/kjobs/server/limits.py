"""How much work one request may cause: the bounds kube-apiserver puts on a request, in one place.

* `MAX_BODY`: a request body beyond 3 MiB is 413 RequestEntityTooLarge (apiserver `server/config.go`,
  `MaxRequestBodyBytes`; `handlers/rest.go`, `limitedReadBody`).
* `MAX_HEADER_BYTES`: a request line and headers beyond 1 MiB are refused as Go's `net/http` refuses them
  (`DefaultMaxHeaderBytes`, answered `431 Request Header Fields Too Large` and closed; see `protocol.py`).
* `MAX_JSON_PATCH_OPERATIONS` and `MAX_COPY_BYTES`: a JSON patch of more than 10000 operations is 413, and its
  `copy` operations may add at most 3 MiB in all (`handlers/patch.go`, `maxJSONPatchOperations`; `server/config.go`
  `JSONPatchMaxCopyBytes` arms json-patch's `AccumulatedCopySizeLimit`), so a few bytes of patch cannot double a
  document into gigabytes.
* `MAX_DEPTH`: how deeply a body or a stored object may nest. Kubernetes' decoders stop at 10000 levels
  (sigs.k8s.io/json, `maxNestingDepth`; go-yaml, "exceeded max depth of 10000"); Python walks nested values with
  its own stack (1000 frames), and orjson refuses to write beyond 254 levels, so this server stops at 100, far
  deeper than any built-in kind nests (a Job's deepest field is about 20 levels down) and shallow enough for every
  recursive walk (schema checks, field sets, patches, `managedFields`) to finish.
* `WATCH_BUFFER`: how many events a watcher may fall behind while its client does not read before it is dropped
  (the cacher's `cacheWatcher.add` terminates a blocked watcher; client-go then lists and watches again).
* `MIN_REQUEST_TIMEOUT`: a watch that names no `timeoutSeconds` ends after a random time between one and two times
  1,800 s (kube-apiserver's `--min-request-timeout` default; `handlers/get.go` `ListResource` spreads the ends so
  that clients do not all come back at once); the client watches again from its last resourceVersion.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import ApiError, bad_request

MAX_BODY = 3 * 1024 * 1024
MAX_HEADER_BYTES = 1024 * 1024
MAX_JSON_PATCH_OPERATIONS = 10_000
MAX_COPY_BYTES = 3 * 1024 * 1024
MAX_DEPTH = 100
WATCH_BUFFER = 1000
MIN_REQUEST_TIMEOUT = 1800.0


def too_large(message: str) -> ApiError:
    """413 RequestEntityTooLarge, as apimachinery's `NewRequestEntityTooLargeError` renders it."""
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def body_too_large() -> ApiError:
    """The 413 for a body beyond `MAX_BODY` (`limitedReadBody`)."""
    return too_large(f"limit is {MAX_BODY}")


def depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """How deeply `value` nests (a scalar: 0, `{}`: 1), counted without recursion and only up to `limit` + 1."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def too_deep(value: Any, raw: bytes | None = None) -> bool:
    """Whether `value` nests deeper than `MAX_DEPTH`; `raw`, its JSON, lets most bodies skip the walk (nesting
    that deep needs more than `MAX_DEPTH` brackets, which bytes count in C)."""
    if raw is not None and raw.count(b"{") + raw.count(b"[") <= MAX_DEPTH:
        return False
    return depth(value) > MAX_DEPTH


def check_depth(value: Any, what: str = "object") -> None:
    """400 BadRequest when `value` nests deeper than `MAX_DEPTH` (the decoders' "exceeded max depth")."""
    if too_deep(value):
        raise bad_request(f"{what} exceeded max depth of {MAX_DEPTH}")
