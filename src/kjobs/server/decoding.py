"""Strict field validation of a request body: what the apiserver's decoder does with fields its schema lacks.

`fieldValidation=Strict` rejects them (400, `strict decoding error: unknown field "spec.backofLimit"`), `Warn`
drops them and returns one warning each (kubectl prints `Warning: unknown field ...`), `Ignore` drops them
silently. The API service and `kjobs validate`/`kjobs run` share this one check, so their messages are the
same bytes (Kubernetes: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go reads `fieldValidation`;
staging/src/k8s.io/apimachinery/pkg/runtime/error.go, `strictDecodingError`, joins the findings with ", ").
Duplicate fields are not detected: bodies are parsed by orjson/PyYAML, which keep the last value.
"""

from __future__ import annotations

from typing import Any

from kjobs.api.errors import bad_request
from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.types import Obj
from kjobs.server import schema

MODES = ("Strict", "Warn", "Ignore")


def check_unknown_fields(
    body: Obj,
    schema_name: str | None,
    kind: str,
    version: str,
    mode: str,
    features: FeatureGates = DEFAULT,
    *,
    patch: Obj | None = None,
) -> list[str]:
    """Apply `mode` (empty: `Warn`, the server's default) to the fields of `body` that `schema_name` does not
    declare with `features`' gates: raise the 400 in Strict mode, else drop them from `body` and return the
    warnings (none for Ignore). `patch`: the merge patch `body` is the result of (`schema.unknown_fields`'s
    `within`)."""
    unknown = schema.unknown_fields(body, schema_name, features, within=patch)
    if not unknown:
        return []
    texts = [f'unknown field "{schema.format_path(u)}"' for u in unknown]
    mode = (mode or "Warn").capitalize()
    if mode == "Strict":
        raise bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: {", ".join(texts)}'
        )
    prune(body, unknown)
    return [] if mode == "Ignore" else texts


def prune(obj: Obj, paths: list[schema.FieldPath2]) -> None:
    """Drop unknown fields (as `schema.unknown_fields` reports them) from `obj`."""
    for path in paths:
        node: Any = obj
        for token in path[:-1]:
            node = node[token]
        node.pop(path[-1], None)


def check_listed_unknown_fields(unknown: list[str], kind: str, version: str, mode: str) -> list[str]:
    """`check_unknown_fields` for fields already found (a custom resource's, by its CRD's schema): 400 in
    Strict mode, else the warnings (none for Ignore); pruning drops them afterwards."""
    if not unknown:
        return []
    texts = [f'unknown field "{u}"' for u in unknown]
    mode = (mode or "Warn").capitalize()
    if mode == "Strict":
        raise bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: {", ".join(texts)}'
        )
    return [] if mode == "Ignore" else texts
