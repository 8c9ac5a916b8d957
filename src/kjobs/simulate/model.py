"""The failure model of `kjobs simulate`: how simulated containers run and exit, and what disrupts them.

The format is documented in docs/simulate-model.md: `containers` (run-time distribution, exit codes, OOM-kill
probability), `overrides` (the same per container name and/or completion index), `disruptions` (processes with a
rate per hour of virtual time or per pod-hour, applied by `kjobs.simulate.disruptions` through the real
components). Parsing is strict — an unknown or malformed field is a `ModelError` naming its path — so that later
sections can be added without old files meaning something else.

Every attempt's fate is drawn from a generator seeded by (seed, completion index — or the pod's creation ordinal
for a non-indexed Job —, the pod's attempt at that index, container, restart): the same seed gives the same draws
to two Jobs (`kjobs simulate --compare`), whatever their pod names.
"""

from __future__ import annotations

import _random
import hashlib
import math
import random
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from kjobs.api.names import CONTROLLER_UID_LABEL, JOB_COMPLETION_INDEX_ANNOTATION
from kjobs.api.types import Obj
from kjobs.node.sim_runtime import Outcome, OutcomeFn
from kjobs.testing.virtual import command_outcome


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
    if not math.isfinite(seconds):  # YAML's .inf and .nan are floats: no timer can fire at them
        raise ModelError(f"{where}: expected a finite duration, got {value!r}")
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


DISTRIBUTIONS = ("constant", "uniform", "exponential", "lognormal", "normal")
"""Run-time distributions; the normal is truncated at 0 (a negative draw runs 0 s)."""


@dataclass(frozen=True)
class RunTime:
    """A run-time distribution: `kind` and its parameters in seconds (`sigma` is unitless, lognormal only)."""

    kind: str = "constant"
    a: float = 0.0
    """constant: the value; uniform: min; exponential: mean; lognormal: median; normal: mean."""
    b: float = 0.0
    """uniform: max; lognormal: sigma; normal: standard deviation."""

    def draw(self, rng: random.Random) -> float:
        """One run time in seconds (≥ 0)."""
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        if self.kind == "exponential":
            return rng.expovariate(1.0 / self.a) if self.a > 0 else 0.0
        if self.kind == "lognormal":
            return rng.lognormvariate(math.log(self.a), self.b) if self.a > 0 else 0.0
        if self.kind == "normal":
            return max(0.0, rng.gauss(self.a, self.b))
        return self.a


SIGTERM_IGNORE, SIGTERM_EXIT = "Ignore", "Exit"
"""The values of a container model's `sigterm`."""


@dataclass(frozen=True)
class ContainerModel:
    """What a simulated container does: run a drawn time, then exit with a code drawn by weight — or be
    OOM-killed (exit 137, reason OOMKilled, as the kubelet reports it) with probability `oom`."""

    run_time: float | RunTime = 0.0
    exit_codes: tuple[ExitCode, ...] = (ExitCode(0, 1.0),)
    oom: float = 0.0
    sigterm: str = SIGTERM_IGNORE
    """`sigterm`: `Ignore`, as a container's first process with no handler for it (most commands: `sleep`, a
    shell script, a bare `python train.py`): a stopped container runs on until its grace period ends, then 137;
    `Exit`: it has one and exits 143 at once (docs/sigterm42.md)."""
    attempts: tuple[ContainerModel, ...] = ()
    """`attempts`: the model of a container's 1st, 2nd, ... run at a completion index (the last repeats); empty:
    this model for every run."""

    def for_run(self, run: int) -> ContainerModel:
        """The model of the container's `run`th run (from 0) at its index: its `attempts` entry, else itself."""
        if not self.attempts:
            return self
        return self.attempts[min(run, len(self.attempts) - 1)]

    @cached_property
    def _fixed(self) -> tuple[RunTime, float, int | None]:
        """What `draw` computes of the model alone, once a model rather than once an attempt: the run-time
        distribution, the exit codes' total weight (summed in their order, so the very same float) and the exit
        code SIGTERM gives. Kept beside the fields (a frozen dataclass's `__dict__`), not one of them."""
        run = self.run_time if isinstance(self.run_time, RunTime) else RunTime("constant", self.run_time)
        total = sum(e.weight for e in self.exit_codes)
        return run, total, None if self.sigterm == SIGTERM_IGNORE else 143

    def draw(self, rng: random.Random) -> Outcome:
        """One attempt's outcome (the draws in a fixed order: run time, OOM, exit code)."""
        run, total, term = self._fixed
        duration = run.draw(rng)
        killed = rng.random() < self.oom if self.oom > 0 else False
        pick = rng.random() * total
        code = self.exit_codes[-1].code
        for entry in self.exit_codes:
            if pick < entry.weight:
                code = entry.code
                break
            pick -= entry.weight
        if killed:
            return Outcome(duration=duration, exit_code=137, oom=True, term_exit_code=term)
        return Outcome(duration=duration, exit_code=code, term_exit_code=term)


@dataclass(frozen=True)
class Override:
    """A `ContainerModel` for the containers named `container` (None: any) at `indexes` (None: any)."""

    container: str | None
    indexes: frozenset[int] | None
    model: ContainerModel

    def matches(self, container: str, index: int | None) -> bool:
        """Whether this override applies to `container` of the pod at completion `index`."""
        if self.container is not None and self.container != container:
            return False
        return self.indexes is None or (index is not None and index in self.indexes)


DISRUPTION_KINDS = ("preempt", "drain", "evict", "taint", "node-loss", "node-pressure", "node-shutdown")
"""`kjobs run --disrupt`'s kinds (`kjobs.disrupt.KINDS`) and the two faults only a cluster itself causes."""


@dataclass(frozen=True)
class DisruptionProcess:
    """Disruptions of `kind` at `rate` events per hour of virtual time (`per="hour"`: cluster-wide, on a
    running pod drawn at random) or per pod-hour (`per="pod-hour"`: each running pod's own Poisson clock); or
    one (`per="at"`) `rate` virtual seconds after the Job's creation, on its first running pod, as `kjobs run
    --disrupt KIND@TIME` applies it."""

    kind: str
    rate: float
    per: str


@dataclass(frozen=True)
class Model:
    """A parsed model file (the default model: every container succeeds at once, nothing is disrupted)."""

    containers: ContainerModel = field(default_factory=ContainerModel)
    overrides: tuple[Override, ...] = ()
    disruptions: tuple[DisruptionProcess, ...] = ()

    def container_model(self, container: str, index: int | None) -> ContainerModel:
        """The first matching override's model, else `containers`."""
        for override in self.overrides:
            if override.matches(container, index):
                return override.model
        return self.containers

    def outcome(self, seed: int, slots: AttemptSlots | None = None) -> OutcomeFn:
        """The simulated runtime's outcome function for this model and seed. Pods that no Job owns (the
        preemptor of a `preempt` disruption) run as their command says (`sleep 1`)."""
        numbering = slots or AttemptSlots()
        runs: dict[tuple[int | None, str], int] = {}  # (index, container) -> runs started, for `attempts`
        # One generator, seeded afresh for every attempt: `seed_from_str` sets the whole state (and forgets `gauss`'s
        # spare), so each attempt draws as from a new `random.Random(key)`, without making one (about 5,000
        # instructions more than the seeding: the object, its C initialisation, `__init__`'s frame).
        rng = random.Random()

        def decide(pod: Obj, container: Obj, attempt: int) -> Outcome:
            slot = numbering.slot(pod)
            if slot is None:
                return command_outcome(pod, container, attempt)
            index, pod_attempt = slot
            name = str(container.get("name"))
            key = f"{seed}/{index if index is not None else 'pod'}/{pod_attempt}/{name}/{attempt}"
            seed_from_str(rng, key)
            model = self.container_model(name, index)
            if model.attempts:
                run = runs.get((index, name), 0)
                runs[(index, name)] = run + 1
                model = model.for_run(run)
            return model.draw(rng)

        return decide


def seed_from_str(rng: random.Random, key: str) -> None:
    """`rng.seed(key)`: the generator's state from the UTF-8 bytes of `key` followed by their SHA-512, read as one
    big-endian integer (`random.Random.seed`, version 2, for a str: stable across runs and platforms), and no
    `gauss` spare. Done here without `Random.seed`'s Python frame, its type checks and its `super()` call (about
    3,000 instructions of an attempt's 30,000: the rest is the Mersenne Twister's own initialisation, in C)."""
    data = key.encode()
    _random.Random.seed(rng, int.from_bytes(data + hashlib.sha512(data).digest(), "big"))
    rng.gauss_next = None  # type: ignore[attr-defined]  # `Random.seed` forgets the spare `gauss` draw too


class AttemptSlots:
    """Numbers a run's pods by what they stand for, not by their random names: (completion index, the pod's
    attempt at it) for an Indexed Job, (None, creation ordinal) otherwise. One per simulated run."""

    def __init__(self) -> None:
        self._slots: dict[str, tuple[int | None, int]] = {}
        self._next: dict[int | None, int] = {}

    def slot(self, pod: Obj) -> tuple[int | None, int] | None:
        """The pod's (index, attempt); None for a pod no Job owns."""
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        if uid in self._slots:
            return self._slots[uid]
        if CONTROLLER_UID_LABEL not in (meta.get("labels") or {}):
            return None
        raw = (meta.get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION)
        index = int(raw) if isinstance(raw, str) and raw.isdigit() else None
        number = self._next.get(index, 0)
        self._next[index] = number + 1
        self._slots[uid] = (index, number)
        return self._slots[uid]

    def attempts(self) -> dict[int, int]:
        """Pods created per completion index so far."""
        return {index: n for index, n in self._next.items() if index is not None}


def parse_model(doc: Any, where: str = "model") -> Model:
    """A `Model` from a decoded YAML document; `ModelError` names the first bad field."""
    if doc is None:
        return Model()
    top = _mapping(doc, where, ("containers", "overrides", "disruptions"))
    containers = ContainerModel()
    if "containers" in top:
        containers = _parse_containers(top["containers"], f"{where}.containers", ContainerModel())
    overrides = tuple(_parse_overrides(top.get("overrides"), f"{where}.overrides", containers))
    disruptions = tuple(_parse_disruptions(top.get("disruptions"), f"{where}.disruptions"))
    return Model(containers=containers, overrides=overrides, disruptions=disruptions)


_CONTAINER_FIELDS = ("runTime", "exitCodes", "oomKillProbability", "sigterm")


def _parse_containers(
    value: Any, where: str, base: ContainerModel, extra: tuple[str, ...] = (), *, attempts: bool = True
) -> ContainerModel:
    """`containers`, an override (`extra`: its `container`, `indexes`), or an `attempts` entry (`attempts` false:
    none of its own): the fields it omits come from `base`; its `attempts` (never `base`'s) from it."""
    spec = _mapping(value, where, (*extra, *_CONTAINER_FIELDS, *(("attempts",) if attempts else ())))
    run_time = base.run_time
    if "runTime" in spec:
        run_time = _parse_run_time(spec["runTime"], f"{where}.runTime")
    codes = base.exit_codes
    if "exitCodes" in spec:
        codes = _parse_exit_codes(spec["exitCodes"], f"{where}.exitCodes")
    oom = base.oom
    if "oomKillProbability" in spec:
        oom = _probability(spec["oomKillProbability"], f"{where}.oomKillProbability")
    sigterm = base.sigterm
    if "sigterm" in spec:
        sigterm = spec["sigterm"]
        if sigterm not in (SIGTERM_IGNORE, SIGTERM_EXIT):
            raise ModelError(f'{where}.sigterm: expected "{SIGTERM_IGNORE}" or "{SIGTERM_EXIT}", got {sigterm!r}')
    model = ContainerModel(run_time=run_time, exit_codes=codes, oom=oom, sigterm=str(sigterm))
    if "attempts" not in spec:
        return model
    entries = spec["attempts"]
    if not isinstance(entries, list) or not entries:
        raise ModelError(f"{where}.attempts: expected a non-empty list of container models (the 1st run's, ...)")
    runs = tuple(
        _parse_containers(entry, f"{where}.attempts[{i}]", model, attempts=False) for i, entry in enumerate(entries)
    )
    return ContainerModel(run_time=run_time, exit_codes=codes, oom=oom, sigterm=str(sigterm), attempts=runs)


def _parse_run_time(value: Any, where: str) -> float | RunTime:
    run = _mapping(value, where, DISTRIBUTIONS)
    if len(run) != 1:
        raise ModelError(f"{where}: expected exactly one of: {', '.join(DISTRIBUTIONS)}")
    kind, params = next(iter(run.items()))
    at = f"{where}.{kind}"
    if kind == "constant":
        return parse_duration(params, at)
    names = {
        "uniform": ("min", "max"),
        "exponential": ("mean",),
        "lognormal": ("median", "sigma"),
        "normal": ("mean", "stddev"),
    }[kind]
    spec = _mapping(params, at, names)
    for name in names:
        if name not in spec:
            raise ModelError(f"{at}.{name}: required")
    a = parse_duration(spec[names[0]], f"{at}.{names[0]}")
    b = 0.0
    if len(names) == 2:
        second, where = spec[names[1]], f"{at}.{names[1]}"
        b = _non_negative(second, where) if kind == "lognormal" else parse_duration(second, where)
    if kind == "uniform" and b < a:
        raise ModelError(f"{at}.max: must not be less than min")
    return RunTime(kind, a, b)


def _non_negative(value: Any, where: str) -> float:
    """A finite number ≥ 0 (YAML's `.inf` and `.nan` are floats, and would make every draw inf or nan)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise ModelError(f"{where}: expected a non-negative number, got {value!r}")
    return float(value)


def _probability(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ModelError(f"{where}: expected a probability from 0 to 1, got {value!r}")
    return float(value)


def _parse_overrides(value: Any, where: str, base: ContainerModel) -> list[Override]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ModelError(f"{where}: expected a list")
    overrides = []
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        spec = _mapping(item, at, ("container", "indexes", *_CONTAINER_FIELDS, "attempts"))
        container = spec.get("container")
        if container is not None and (not isinstance(container, str) or not container):
            raise ModelError(f"{at}.container: expected a container name, got {container!r}")
        indexes = _parse_indexes(spec["indexes"], f"{at}.indexes") if "indexes" in spec else None
        model = _parse_containers(spec, at, base, extra=("container", "indexes"))
        overrides.append(Override(container, indexes, model))
    return overrides


def _parse_indexes(value: Any, where: str) -> frozenset[int]:
    """`"0-3,7"` (the Job's completedIndexes notation), one index, or a list of indexes."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return frozenset((value,))
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return frozenset(value)
    if isinstance(value, str) and re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", value):
        found: set[int] = set()
        for part in value.split(","):
            first, _, last = part.partition("-")
            if last and int(last) < int(first):
                raise ModelError(f"{where}: interval {part} runs backwards")
            found.update(range(int(first), int(last or first) + 1))
        return frozenset(found)
    raise ModelError(f'{where}: expected indexes such as "0-3,7", an index or a list of indexes, got {value!r}')


def _parse_disruptions(value: Any, where: str) -> list[DisruptionProcess]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ModelError(f"{where}: expected a list")
    processes = []
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        spec = _mapping(item, at, ("kind", "ratePerHour", "ratePerPodHour", "at"))
        kind = spec.get("kind")
        if kind not in DISRUPTION_KINDS:
            raise ModelError(f"{at}.kind: expected one of: {', '.join(DISRUPTION_KINDS)}, got {kind!r}")
        rates = [key for key in ("ratePerHour", "ratePerPodHour", "at") if key in spec]
        if len(rates) != 1:
            raise ModelError(f"{at}: expected exactly one of: ratePerHour, ratePerPodHour, at")
        if rates[0] == "at":
            processes.append(DisruptionProcess(kind, parse_duration(spec["at"], f"{at}.at"), "at"))
            continue
        rate = _non_negative(spec[rates[0]], f"{at}.{rates[0]}")
        processes.append(DisruptionProcess(kind, rate, "hour" if rates[0] == "ratePerHour" else "pod-hour"))
    return processes


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
        entries.append(ExitCode(code, _non_negative(entry.get("weight", 1.0), f"{at}.weight")))
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
        # One line, as a manifest's YAML error reads, not PyYAML's multi-line dump naming "<unicode string>".
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ModelError(f"{path}: invalid YAML{where}: {problem}") from None
    try:
        return parse_model(doc)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None
