"""The failure model of `kjobs simulate`: how long each simulated container runs and how it exits.

The format is documented in docs/simulate-model.md. Today a model has one section, `containers` (applied to
every container of every pod): `runTime` (`constant: DURATION`) and `exitCodes` (codes with weights). Parsing
is strict — an unknown or malformed field is a `ModelError` naming its path — so that later sections
(distributions, OOM kills, disruption processes) can be added without old files meaning something else.

Every attempt's fate is drawn from a generator seeded by (seed, namespace/pod name, container, attempt), so a
run is the same for the same seed whatever order the attempts start in.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kjobs.api.types import Obj
from kjobs.node.sim_runtime import Outcome, OutcomeFn


class ModelError(ValueError):
    """A model file that cannot be used; the message names the offending field."""


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)")


def parse_duration(value: Any, where: str) -> float:
    """Seconds from `5s`, `1m30s`, `250ms`, `2h` (Go's `time.ParseDuration` units ms/s/m/h) or a plain number."""
    if isinstance(value, bool):
        raise ModelError(f"{where}: expected a duration such as 5s, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and value and _DURATION_PART.sub("", value) == "":
        unit = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
        seconds = sum(float(n) * unit[u] for n, u in _DURATION_PART.findall(value))
    else:
        raise ModelError(f"{where}: expected a duration such as 5s, 1m30s or 250ms, got {value!r}")
    if seconds < 0:
        raise ModelError(f"{where}: must not be negative, got {value!r}")
    return seconds


def _mapping(value: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModelError(f"{where}: expected a mapping, got {type(value).__name__}")
    for key in value:
        if key not in allowed:
            expected = ", ".join(allowed)
            raise ModelError(f"{where}.{key}: unknown field (expected one of: {expected})")
    return value


@dataclass(frozen=True)
class ExitCode:
    """One exit code and its relative weight."""

    code: int
    weight: float


@dataclass(frozen=True)
class ContainerModel:
    """What every simulated container does: run `run_time` seconds, then exit with a code drawn by weight."""

    run_time: float = 0.0
    exit_codes: tuple[ExitCode, ...] = (ExitCode(0, 1.0),)

    def draw(self, rng: random.Random) -> Outcome:
        """One attempt's outcome."""
        total = sum(e.weight for e in self.exit_codes)
        pick = rng.random() * total
        code = self.exit_codes[-1].code
        for entry in self.exit_codes:
            if pick < entry.weight:
                code = entry.code
                break
            pick -= entry.weight
        return Outcome(duration=self.run_time, exit_code=code)


@dataclass(frozen=True)
class Model:
    """A parsed model file (the default model: every container succeeds at once)."""

    containers: ContainerModel = field(default_factory=ContainerModel)

    def outcome(self, seed: int) -> OutcomeFn:
        """The simulated runtime's outcome function for this model and seed."""

        def decide(pod: Obj, container: Obj, attempt: int) -> Outcome:
            meta = pod.get("metadata") or {}
            key = f"{seed}/{meta.get('namespace')}/{meta.get('name')}/{container.get('name')}/{attempt}"
            return self.containers.draw(random.Random(key))  # str seeds hash with SHA-512: stable everywhere

        return decide


def parse_model(doc: Any, where: str = "model") -> Model:
    """A `Model` from a decoded YAML document; `ModelError` names the first bad field."""
    if doc is None:
        return Model()
    top = _mapping(doc, where, ("containers",))
    if "containers" not in top:
        return Model()
    return Model(containers=_parse_containers(top["containers"], f"{where}.containers"))


def _parse_containers(value: Any, where: str) -> ContainerModel:
    spec = _mapping(value, where, ("runTime", "exitCodes"))
    run_time = 0.0
    if "runTime" in spec:
        run = _mapping(spec["runTime"], f"{where}.runTime", ("constant",))
        if "constant" not in run:
            raise ModelError(f"{where}.runTime.constant: required")
        run_time = parse_duration(run["constant"], f"{where}.runTime.constant")
    codes: tuple[ExitCode, ...] = (ExitCode(0, 1.0),)
    if "exitCodes" in spec:
        codes = _parse_exit_codes(spec["exitCodes"], f"{where}.exitCodes")
    return ContainerModel(run_time=run_time, exit_codes=codes)


def _parse_exit_codes(value: Any, where: str) -> tuple[ExitCode, ...]:
    if not isinstance(value, list) or not value:
        raise ModelError(f"{where}: expected a non-empty list of {{code, weight}}")
    entries = []
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        entry = _mapping(item, at, ("code", "weight"))
        code = entry.get("code")
        if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code <= 255:
            raise ModelError(f"{at}.code: expected an exit code from 0 to 255, got {code!r}")
        weight = entry.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
            raise ModelError(f"{at}.weight: expected a non-negative number, got {weight!r}")
        entries.append(ExitCode(code, float(weight)))
    if sum(e.weight for e in entries) <= 0:
        raise ModelError(f"{where}: the weights must not all be 0")
    return tuple(entries)


def load_model(path: str | Path) -> Model:
    """Read and parse a model file; `ModelError` for unreadable YAML or a bad field (named with the file)."""
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ModelError(f"{path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ModelError(f"{path}: not valid YAML: {exc}") from None
    try:
        return parse_model(doc)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None
