"""Hash every stored byte of seeded simulations, in commit order, to compare two source trees after a speed change.

A speed change must change no decision and no stored object (issue #15). This runs `kjobs simulate` on seeded
cases — Indexed Jobs with failing containers, one with every Event and managedFields recorded, one on unreliable
nodes, and each example Job under each example model — and prints, a line a case, the outcome, the pods created,
the number of store writes and a hash of every write's stored bytes in the order the store committed them. The
values a simulation draws outside its seed (object UIDs, container IDs, token volume names) are drawn from the
case's seed here, so two runs of one tree print the same lines.

Run: PYTHONPATH=TREE/src python bench/stored_bytes.py > OUT ; then diff two OUTs (docs/performance.md, stop 50).
"""

from __future__ import annotations

import hashlib
import random
import sys
import types
import uuid
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_jobs import indexed_job

from kjobs.api import token_requests, uids
from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.node import sim_runtime
from kjobs.simulate import SimulationOptions, simulate
from kjobs.simulate.model import ModelError, parse_model
from kjobs.store import base

ROOT = Path(__file__).resolve().parent.parent
FAILING = {"containers": {"exitCodes": [{"code": 0, "weight": 0.9}, {"code": 1, "weight": 0.1}]}}

_writes: list[bytes] = []
_draws = random.Random(0)


def _record_writes() -> None:
    """Wrap the store's publication of a committed batch so that each change's stored bytes are kept."""
    publish = base.Store._publish

    def recorded(store: base.Store, final: Any, changes: Any, revision: int) -> None:
        for resource, change, _ in changes:
            head = f"{resource} {change.type} {change.namespace}/{change.name} ".encode()
            _writes.append(head + bytes(change.record.raw))
        publish(store, final, changes, revision)

    base.Store._publish = recorded  # type: ignore[method-assign]


def _seed_outside_draws() -> None:
    """UIDs (`kjobs.api.uids` reads `os.urandom`), container IDs (`uuid.uuid4`) and token volume names from
    `_draws`, which each case seeds."""
    uids.os = types.SimpleNamespace(urandom=_draws.randbytes)  # type: ignore[attr-defined]
    sim_runtime.uuid = types.SimpleNamespace(  # type: ignore[attr-defined]
        uuid4=lambda: uuid.UUID(bytes=_draws.randbytes(16))
    )


def case(label: str, job: Obj, model: Obj, seed: int, **options: Any) -> None:
    """Simulate `job` under `model` from `seed` and print its line."""
    _writes.clear()
    _draws.seed(seed)
    uids._pool = bytearray()
    token_requests._NAMES.seed(seed)
    try:
        result = simulate(job, SimulationOptions(model=parse_model(model), seed=seed, **options))
    except (ModelError, ApiError) as err:  # a model needing what the Job lacks; a Job needing a feature gate
        print(f"{label}: refused: {type(err).__name__}")
        return
    digest = hashlib.sha256(b"\n".join(_writes)).hexdigest()[:16]
    print(f"{label}: {result.outcome} pods={result.pods_created} writes={len(_writes)} sha256={digest}")


def main() -> None:
    _record_writes()
    _seed_outside_draws()
    case("indexed 600/60, seed 1", indexed_job(600, 60, backoff_limit_per_index=3), FAILING, 1)
    case("indexed 600/60, seed 2", indexed_job(600, 60, backoff_limit_per_index=3), FAILING, 2)
    case(
        "indexed 300/50, events and managedFields",
        indexed_job(300, 50, backoff_limit_per_index=3),
        FAILING,
        3,
        events=True,
        field_managers=True,
    )
    unreliable = yaml.safe_load((ROOT / "examples/models/unreliable-nodes.yaml").read_text())
    case("indexed 300/30, unreliable nodes", indexed_job(300, 30, backoff_limit_per_index=3), unreliable, 4)
    models = sorted((ROOT / "examples/models").glob("*.yaml"))
    for example in sorted((ROOT / "examples").glob("*.yaml")):
        jobs = [doc for doc in yaml.safe_load_all(example.read_text()) if doc and doc.get("kind") == "Job"]
        if not jobs or example.name.startswith("settings-from"):
            continue  # that Job waits for a ConfigMap no simulation creates: it would run to the time limit
        for model in models:
            case(f"{example.name} under {model.name}", jobs[0], yaml.safe_load(model.read_text()), 7)


if __name__ == "__main__":
    main()
