"""Loads the conformance corpus (`KJOBS_CONFORMANCE_DIR`, default the copy in `tests/conformance/corpus/`).

Each case becomes one pytest parameter whose id is the case name; a missing corpus is an error, never a skip.
The corpus is kept in the repository so that a fresh clone runs it; its origin is `../shared/conformance` beside
the checkout, and `test_shared_copies.py` fails when that origin exists and differs from the copy.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conformance.schema import check_file

REPO_ROOT = Path(__file__).resolve().parents[2]
IN_REPO = Path(__file__).resolve().parent / "corpus"
UPSTREAM_EXTRA = Path(__file__).resolve().parent / "corpus_upstream"
"""Rows of the same upstream tables that the shared corpus holds back, transcribed here (see its README)."""
SHARED = REPO_ROOT.parent / "shared"
"""`../shared` beside the checkout: where the corpus and the kubectl acceptance script are maintained."""


def corpus_dir() -> Path:
    """The corpus folder: `$KJOBS_CONFORMANCE_DIR`, else the copy kept in the repository."""
    configured = os.environ.get("KJOBS_CONFORMANCE_DIR")
    return Path(configured) if configured else IN_REPO


def load_cases(set_name: str, folder: Path | None = None) -> list[dict[str, Any]]:
    """All cases of one set (`policy`, `validation`, `scenarios`); raises if the file is missing."""
    path = (folder or corpus_dir()) / f"{set_name}.json"
    data = orjson.loads(path.read_bytes())
    check_file(data, set_name)  # an op, key, kind or option the harness does not know fails loudly here
    cases: list[dict[str, Any]] = data["cases"]
    return cases


def params(set_name: str, *, kinds: tuple[str, ...] | None = None) -> list[Any]:
    """pytest parameters for a set (the corpus, then the upstream-extra rows), optionally only the scenario kinds
    given; ids are unique case names, the extra rows' prefixed with `upstream-extra/`."""
    out = []
    seen: dict[str, int] = {}
    tagged = [("", case) for case in load_cases(set_name)]
    tagged += [("upstream-extra/", case) for case in load_cases(set_name, UPSTREAM_EXTRA)]
    for prefix, case in tagged:
        if kinds is not None and case.get("kind") not in kinds:
            continue
        name = prefix + case["name"]
        seen[name] = seen.get(name, 0) + 1
        case_id = name if seen[name] == 1 else f"{name} #{seen[name]}"
        out.append(pytest.param(case, id=case_id))
    return out
