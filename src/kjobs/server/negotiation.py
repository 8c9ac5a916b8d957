"""Output negotiation: which `meta.k8s.io` transformation of its objects a client asked for in `Accept`.

Clients ask for a `Table` (kubectl get) or for metadata only, `PartialObjectMetadata` for a get or a watch and
`PartialObjectMetadataList` for a list (client-go's metadata client, used by the garbage collector, sends
`application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=...,
application/json`). As the apiserver does (apiserver `handlers/negotiation`, `RequestScope.AllowsMediaTypeTransform`),
the first media range the server can produce wins, ranges taken in order of their `q` (highest first, 1 when
absent; equal `q` keep the header's order), as `goautoneg.ParseAccept` sorts them: a JSON range with a known `as=`
transformation, or a plain JSON one; protobuf ranges and unknown transformations are passed over. With nothing
acceptable the server still answers plain JSON (kubectl's `application/vnd.kubernetes.protobuf,application/json`
reads as JSON anyway). A metadata transformation of the wrong arity is 406 NotAcceptable (apiserver
`handlers/response.go`, `asPartialObjectMetadata` / `asPartialObjectMetadataList`).

The serialization is chosen the same way (`NegotiateOutputMediaType`): the first range among JSON, YAML and
protobuf (or a wildcard) wins. YAML is answered as YAML (`application/yaml`, what `curl -H 'Accept:
application/yaml'` gets from a cluster), except for a watch, which has no YAML framing: 406. Protobuf is answered
as JSON, which every client that asks for it also accepts. An `Accept` naming none of them is 406 with the
apiserver's list of what it serves.
"""

from __future__ import annotations

from typing import NamedTuple

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj

TABLE = "Table"
PARTIAL = "PartialObjectMetadata"
PARTIAL_LIST = "PartialObjectMetadataList"

_KINDS = (TABLE, PARTIAL, PARTIAL_LIST)
_VERSIONS = ("v1", "v1beta1")
_JSON_RANGES = ("application/json", "application/*", "*/*")
YAML = "application/yaml"
_SERVED = ("application/json", YAML, "application/vnd.kubernetes.protobuf", "application/*", "*/*")
_STREAM_SERVED = (
    "application/json, application/vnd.kubernetes.protobuf, application/json;stream=watch, "
    "application/vnd.kubernetes.protobuf;stream=watch"
)


class Target(NamedTuple):
    """A requested transformation: the `meta.k8s.io` kind and version to answer with."""

    kind: str
    version: str

    @property
    def api_version(self) -> str:
        """`meta.k8s.io/v1` (or v1beta1)."""
        return f"meta.k8s.io/{self.version}"


def _ranges(accept: str) -> list[tuple[str, dict[str, str]]]:
    """`accept`'s media ranges (lower-cased) with their parameters, highest `q` first (a `q` that is not a number
    is 0, as `strconv.ParseFloat`'s error leaves it in goautoneg); the sort is stable."""
    ranges = []
    for entry in accept.split(","):
        media, *raw_params = (part.strip() for part in entry.split(";"))
        params = dict(p.partition("=")[::2] for p in raw_params)
        ranges.append((media.lower(), params))

    def quality(item: tuple[str, dict[str, str]]) -> float:
        try:
            return -float(item[1].get("q", "1"))
        except ValueError:
            return 0.0

    return sorted(ranges, key=quality)


def target(accept: str) -> Target | None:
    """The transformation `accept` asks for first among those this server can produce (None: the objects)."""
    for media, params in _ranges(accept):
        if media not in _JSON_RANGES:
            continue
        kind = params.get("as")
        if kind is None:
            return None
        if kind in _KINDS and params.get("g") == "meta.k8s.io" and params.get("v") in _VERSIONS:
            return Target(kind, params["v"])
    return None


def allows_without_table(accept: str) -> bool:
    """Whether `accept` names something an endpoint without a table convertor serves (a review: its REST storage
    is no `rest.TableConvertor`, so `RequestScope.AllowsMediaTypeTransform` refuses `as=Table`, and
    `NegotiateOutputMediaType` answers 406 when no other range is left; apiserver `handlers/rest.go`,
    `handlers/negotiation/negotiate.go`). An empty `accept` takes the default."""
    if not accept:
        return True
    for media, params in _ranges(accept):
        if media not in _SERVED:
            continue
        kind = params.get("as")
        if kind is None:
            return True
        if kind in (PARTIAL, PARTIAL_LIST) and params.get("g") == "meta.k8s.io" and params.get("v") in _VERSIONS:
            return True
    return False


def wants_yaml(accept: str, *, stream: bool = False) -> bool:
    """Whether the response is to be YAML (the first served range `accept` names is `application/yaml`). Raises
    406 for an `accept` that names nothing this server serves, and for YAML asked of a watch (`stream`)."""
    if not accept:
        return False
    for media, _ in _ranges(accept):
        if media in _SERVED:
            if media == YAML and stream:
                raise not_acceptable(f"only the following media types are accepted: {_STREAM_SERVED}")
            return media == YAML
    raise not_acceptable(
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"
    )


def not_acceptable(message: str) -> ApiError:
    """406 NotAcceptable, as the apiserver's `errNotAcceptable` renders it."""
    return ApiError(406, "NotAcceptable", message)


def _go_type(api_version: str, kind: str) -> str:
    """How the apiserver's message names the internal type (`%T`): `*core.PodList`, `*batch.Job`."""
    group = api_version.rpartition("/")[0] if "/" in api_version else "core"
    return f"*{group.split('.', 1)[0]}.{kind}"


def require(wanted: Target, *, list_kind: str | None, api_version: str, kind: str) -> None:
    """406 unless a `PartialObjectMetadata` target suits a single object and a `...List` one a list
    (`list_kind` given: the response is a list of that kind)."""
    if wanted.kind == PARTIAL and list_kind is not None:
        raise not_acceptable(
            "you requested PartialObjectMetadata, but the requested object is a list "
            f"({_go_type(api_version, list_kind)})"
        )
    if wanted.kind == PARTIAL_LIST and list_kind is None:
        raise not_acceptable(
            "you requested PartialObjectMetadataList, but the requested object is not a list "
            f"({_go_type(api_version, kind)})"
        )


def partial(obj: Obj, wanted: Target) -> Obj:
    """The object's `PartialObjectMetadata`: its whole `metadata` and nothing else."""
    return {"kind": PARTIAL, "apiVersion": wanted.api_version, "metadata": obj.get("metadata") or {}}


def partial_list(objs: list[Obj], list_meta: Obj, wanted: Target) -> Obj:
    """A `PartialObjectMetadataList` of the objects, with the list's own metadata (resourceVersion, continue)."""
    return {
        "kind": PARTIAL_LIST,
        "apiVersion": wanted.api_version,
        "metadata": list_meta,
        "items": [partial(obj, wanted) for obj in objs],
    }
