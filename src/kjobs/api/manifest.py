"""Reading manifests: YAML (multi-document) or JSON, from text or files, with errors a user can act on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import yaml

from kjobs.api.types import Obj


class ManifestError(Exception):
    """A manifest could not be read or parsed; the message names the source and the position."""


def _loader() -> type[yaml.SafeLoader]:
    # CSafeLoader is several times faster where libyaml is present.
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_manifests(text: str, *, source: str = "<input>") -> list[Obj]:
    """Parse every object in `text` (JSON, or YAML with `---` separators); `kind: List` is expanded."""
    stripped = text.lstrip()
    docs: list[Any]
    if stripped.startswith(("{", "[")):
        try:
            loaded = orjson.loads(text)
            docs = loaded if isinstance(loaded, list) else [loaded]
        except orjson.JSONDecodeError:
            docs = _parse_yaml(text, source)  # YAML is a superset of JSON; it also gives a position.
    else:
        docs = _parse_yaml(text, source)
    objects: list[Obj] = []
    for number, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise ManifestError(
                f"{source}: document {number}: expected a Kubernetes object (a mapping), got {type(doc).__name__}"
            )
        if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            objects.extend(item for item in doc["items"] if isinstance(item, dict))
        else:
            objects.append(doc)
    return objects


def _parse_yaml(text: str, source: str) -> list[Any]:
    try:
        return list(yaml.load_all(text, Loader=_loader()))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError(f"{source}: invalid YAML{where}: {problem}") from None


def load_manifests(path: str | Path) -> list[Obj]:
    """Read and parse a manifest file; `-` reads standard input."""
    if str(path) == "-":
        import sys

        return parse_manifests(sys.stdin.read(), source="<stdin>")
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(f'the path "{path}" does not exist') from None
    except IsADirectoryError:
        raise ManifestError(f'the path "{path}" is a directory') from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f'cannot read "{path}": {exc}') from None
    return parse_manifests(text, source=str(path))
