"""One simulated run of a Job: the embedded cluster on virtual time, the simulated runtime, and a trace.

`simulate` builds the same `LocalCluster` as `kjobs run` (memory store, every controller, node agents) but with
`runtime="sim"` and a `FakeClock`, runs it on a `kjobs.virtualtime.VirtualTimeLoop`, creates the Job and waits
— in virtual time — until the Job has a terminal condition. Timings are Kubernetes' defaults (the Job
controller's 1 s batch period, 10 s pod-failure back-off), since nothing of them costs wall time here.

Determinism: pod names come from `generateName`'s random suffix, so the global `random` generator is seeded from
`seed` for the run (and restored afterwards); container outcomes are drawn per attempt (`kjobs.simulate.model`).
The same Job, model and seed give the same `trace`.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections import Counter
from collections.abc import AsyncIterator, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from kjobs.api.features import DEFAULT, FeatureGates
from kjobs.api.names import CONTROLLER_UID_LABEL, JOB_COMPLETION_INDEX_ANNOTATION
from kjobs.api.types import Obj
from kjobs.client.local import LocalClient
from kjobs.client.resources import JOBS, NODES, PODS
from kjobs.clock import FakeClock
from kjobs.cluster import SPARSE_GC_THRESHOLD, ClusterSettings, LocalCluster, create_configs, sparse_gc
from kjobs.job import pods as P
from kjobs.job.context import external_controller
from kjobs.node.nodestatus import MAX_PODS
from kjobs.policy import terminated_state
from kjobs.progress import RunView
from kjobs.server.admission import AdmissionSettings
from kjobs.server.service import ApiService
from kjobs.server.storage import Storage
from kjobs.simulate.disruptions import DisruptionDriver, check
from kjobs.simulate.model import AttemptSlots, Model
from kjobs.store import MemoryStore
from kjobs.virtualtime import VirtualTimeLoop, run

SIMULATION_GC_THRESHOLD = SPARSE_GC_THRESHOLD
"""Net allocations between the cyclic GC's young-generation passes while a simulation runs (`sparse_gc`)."""

DEFAULT_TIME_LIMIT = 30 * 24 * 3600.0
"""Virtual seconds after which a simulation gives up (the Job is then reported Unfinished)."""


@dataclass(frozen=True)
class SimulationOptions:
    """How to simulate: model, seed, node count (None: enough for the Job's parallelism), virtual time limit."""

    model: Model = field(default_factory=Model)
    seed: int = 0
    nodes: int | None = None
    time_limit: float = DEFAULT_TIME_LIMIT
    pod_failure_backoff: float = 10.0
    job_batch_period: float = 1.0
    features: FeatureGates = DEFAULT
    """The `--feature-gates` of the simulated cluster's API and components."""
    field_managers: bool = False
    events: bool = False
    """`ClusterSettings.field_managers` / `.events`: off by default, since no decision reads them
    (tests/simulate/test_shortcuts.py); on, a simulation does all a cluster's bookkeeping."""
    configs: tuple[Obj, ...] = ()
    """ConfigMaps and Secrets created before the Job, as `kjobs run` creates them (its pods read them)."""


@dataclass
class SimulationResult:
    """What a simulated run came to.

    The Job, trace and view are left out of the repr: `asyncio.Runner` reprs the main task (and so its result)
    when it restores the SIGINT handler, which cost ~1 s of CPU with a 10,000-pod trace."""

    job: Obj = field(repr=False)
    outcome: str
    """`Complete`, `Failed`, or `Unfinished` (the virtual time limit passed first)."""
    reason: str
    message: str
    virtual_seconds: float
    """From the Job's creation to its terminal condition (or to the time limit)."""
    wall_seconds: float
    pods_created: int
    failures_by_action: dict[str, int]
    """Failed pods per policy action: FailJob, FailIndex, Ignore, or Count (no rule matched, or Count)."""
    failures_by_reason: dict[str, int]
    """Failed pods per cause: the DisruptionTarget reason, else the container's reason and exit code."""
    wasted_pod_seconds: float
    """Virtual seconds failed pods ran (from Running to Failed)."""
    retries_per_index: dict[int, int]
    """Pods created beyond the first, per completion index (Indexed Jobs; indexes without retries left out)."""
    disruptions: dict[str, int]
    """Disruption events applied, by kind."""
    container_restarts: int
    """In-place restarts of the Job's containers, as the pods' restartCounts count them: no pod failure. Under
    restartPolicy OnFailure they count toward its backoffLimit unless the pod has `maxRestartTimes`
    (`pastBackoffLimitOnFailure`); a Never pod's (restartPolicyRules, sidecars) never do (`restart_policy`)."""
    trace: list[tuple[float, str, str, str]] = field(repr=False)
    """(virtual seconds since the Job's creation, what, name, detail), in order: pod created (detail: its
    completion index, empty for a NonIndexed Job) / phase / deleted, and Job conditions."""
    view: RunView = field(repr=False)
    settled_after: float | None = None
    """Unfinished only: the virtual time after which nothing could change any more (`settled_reason`,
    `never_starts`), where the run stopped instead of going on to `--time-limit`; `settled` says why."""
    settled: str = ""
    restart_policy: str = "Never"
    """The Job's pod template's restartPolicy: whether `container_restarts` count toward backoffLimit."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (`kjobs simulate -o json`); the trace is left out (it grows with the Job)."""
        status = self.job.get("status") or {}
        return {
            "job": f"{self.job['metadata']['namespace']}/{self.job['metadata']['name']}",
            "outcome": self.outcome,
            "reason": self.reason,
            "message": self.message,
            "virtualSeconds": self.virtual_seconds,
            "wallSeconds": round(self.wall_seconds, 3),
            "podsCreated": self.pods_created,
            "succeeded": status.get("succeeded", 0),
            "failed": status.get("failed", 0),
            "completedIndexes": status.get("completedIndexes", ""),
            "failedIndexes": status.get("failedIndexes", ""),
            "failuresByAction": dict(self.failures_by_action),
            "failuresByReason": dict(self.failures_by_reason),
            "wastedPodSeconds": round(self.wasted_pod_seconds, 3),
            "retriesPerIndex": {str(i): n for i, n in self.retries_per_index.items()},
            "disruptions": dict(self.disruptions),
            "containerRestarts": self.container_restarts,
            "restartPolicy": self.restart_policy,
            **({"settledAfter": self.settled_after, "settled": self.settled} if self.settled_after is not None else {}),
        }


def default_nodes(job: Obj) -> int:
    """Enough simulated nodes for every pod of the Job's parallelism (`MAX_PODS` = 110 pods a node)."""
    parallelism = int((job.get("spec") or {}).get("parallelism") or 1)
    return max(1, math.ceil(parallelism / MAX_PODS))


def simulate(job: Obj, options: SimulationOptions | None = None) -> SimulationResult:
    """Run `job` to its end on a fresh virtual-time cluster (its own event loop; call it from sync code)."""
    opts = options or SimulationOptions()
    check(opts.model, job)
    state = random.getstate()
    random.seed(opts.seed)
    try:
        with sparse_gc():
            return run(simulate_on_loop(job, opts), FakeClock())
    finally:
        random.setstate(state)


ENDED_BY_JOB = {"failed": "EndedByJobFailure", "succeeded": "EndedByJobSuccess", "scaled-down": "EndedByScaleDown"}
"""How a pod the Job itself ended is reported: no rule was weighed for it (Kubernetes
pkg/controller/job/job_controller.go, trackJobStatusAndRemoveFinalizers once the Job is finished). After a
failure it is counted in status.failed; after success criteria are met (a successPolicy) it counts nowhere."""


def never_starts(job: Obj) -> str | None:
    """Whether a Job the controller has synced will never create a pod nor change: suspended (`Suspended=True`;
    nothing in a simulation resumes it, and its activeDeadlineSeconds does not run while suspended), or
    `parallelism: 0` without an activeDeadlineSeconds (Kubernetes pkg/controller/job/job_controller.go). Its run
    then ends as it would at `--time-limit`, without minutes of wall time spent on heartbeats. So does a Job whose
    `spec.managedBy` names another controller, which the built-in one never syncs (`syncJob` skips it) and
    nothing in a simulation runs. Returns why (None: it may start)."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    manager = external_controller(job)
    if manager is not None:
        return f"spec.managedBy is {manager}: the Job controller does not sync the Job"
    if spec.get("suspend") is True:
        conditions = status.get("conditions") or ()
        suspended = any(c.get("type") == "Suspended" and c.get("status") == "True" for c in conditions)
        return "the Job is suspended (spec.suspend), and nothing resumes it" if suspended else None
    if spec.get("parallelism") == 0 and spec.get("activeDeadlineSeconds") is None and "startTime" in status:
        return "spec.parallelism is 0: the Job creates no pod"
    return None


SCHEDULING_WAITS = ("Unschedulable", "SchedulingGated")
"""`PodScheduled=False` reasons of a pod that stays unbound while nothing else changes."""


def settled_reason(pods: Iterable[Obj], nodes: Iterable[Obj], agents: Collection[str]) -> str | None:
    """Why nothing in a simulated cluster can change any more, or None when something may.

    Asked only when nothing but periodic loops wait (`VirtualTimeLoop.settle`): no container's run, grace
    period, back-off, activeDeadlineSeconds, toleration or other timed decision is due, and no controller has
    work queued. Then the periodic loops (heartbeats, the node monitor, pod GC, the scheduler's 5-minute retry
    of unschedulable pods, the kubelet's memory check) decide nothing new as long as every node is Ready with its
    agent running, none is cordoned, tainted or under pressure (whose 5 min transition is such a decision), every
    pod has ended — not being deleted, not bound to a node that is gone (pod GC would delete it) — except pods the
    scheduler found no node for or that wait for their schedulingGates: against the same nodes, they stay so."""
    names: set[str] = set()
    for node in nodes:
        name = str(node["metadata"]["name"])
        names.add(name)
        spec = node.get("spec") or {}
        conditions = (node.get("status") or {}).get("conditions") or ()
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        pressure = any(c.get("type") != "Ready" and c.get("status") == "True" for c in conditions)
        if name not in agents or spec.get("unschedulable") or spec.get("taints") or not ready or pressure:
            return None
    waiting: Obj | None = None
    for pod in pods:
        bound = str((pod.get("spec") or {}).get("nodeName") or "")
        if pod["metadata"].get("deletionTimestamp"):
            return None
        if P.phase(pod) in ("Succeeded", "Failed"):
            if bound and bound not in names:
                return None
            continue
        scheduled = P.condition(pod, "PodScheduled") or {}
        if bound or scheduled.get("status") != "False" or scheduled.get("reason") not in SCHEDULING_WAITS:
            return None
        waiting = waiting or pod
    if waiting is None:
        return None
    name, scheduled = waiting["metadata"]["name"], P.condition(waiting, "PodScheduled") or {}
    if scheduled.get("reason") == "SchedulingGated":
        return f"pod {name} waits for its spec.schedulingGates to be removed"
    return f"no node for pod {name}: {scheduled.get('message') or scheduled.get('reason')}"


def action_of(view: RunView, index: int) -> str:
    """The policy action of `view.decisions[index]`: the matched rule's, else Count; for a pod the finished Job
    ended, `ENDED_BY_JOB`'s label (not Count, which would say it counted toward a backoff limit)."""
    decision = view.decisions[index]
    if decision.ended_by_job:
        return ENDED_BY_JOB[decision.ended_by_job]
    return decision.explanation.action or "Count"


async def simulate_on_loop(job: Obj, options: SimulationOptions) -> SimulationResult:
    """`simulate`, inside a running `VirtualTimeLoop`."""
    loop = asyncio.get_running_loop()
    if not isinstance(loop, VirtualTimeLoop):
        raise RuntimeError("simulate_on_loop needs a kjobs.virtualtime.VirtualTimeLoop")
    wall = time.perf_counter()
    slots = AttemptSlots()
    settings = ClusterSettings(
        nodes=options.nodes or default_nodes(job),
        runtime="sim",
        sim_outcome=options.model.outcome(options.seed, slots),
        pod_failure_backoff=options.pod_failure_backoff,
        job_batch_period=options.job_batch_period,
        features=options.features,
        field_managers=options.field_managers,
        events=options.events,
    )
    async with virtual_cluster(settings) as cluster:
        return await _follow(cluster, job, options, loop.clock, wall, slots)


@contextlib.asynccontextmanager
async def virtual_cluster(settings: ClusterSettings) -> AsyncIterator[LocalCluster]:
    """A started `LocalCluster` on the running `VirtualTimeLoop`'s clock, over a memory store (no threads);
    `settings.runtime` should be `sim`. Stopped on exit."""
    loop = asyncio.get_running_loop()
    if not isinstance(loop, VirtualTimeLoop):
        raise RuntimeError("a virtual cluster needs a kjobs.virtualtime.VirtualTimeLoop")
    store = MemoryStore()
    service = ApiService(
        Storage(store),
        clock=loop.clock.now,
        # the ServiceAccount plugin checks accounts, as in every cluster kjobs assembles
        admission=AdmissionSettings(service_account_lookup=True),
        features=settings.features,
        field_managers=settings.field_managers,
        record_events=settings.events,
        token_volumes=settings.field_managers,  # read by nobody, used by no pod: no API is served to them
    )
    cluster = LocalCluster(service, settings=settings, clock=loop.clock)
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()
        store.close()


async def _follow(
    cluster: LocalCluster, job: Obj, options: SimulationOptions, clock: FakeClock, wall: float, slots: AttemptSlots
) -> SimulationResult:
    user = LocalClient(cluster.service, manager="kjobs-simulate", typed=False)
    namespace = str((job.get("metadata") or {}).get("namespace") or "default")
    jobs, pods = cluster.informers.informer(JOBS), cluster.informers.informer(PODS)
    nodes = cluster.informers.informer(NODES)
    trace: list[tuple[float, str, str, str]] = []
    phases: dict[str, str] = {}  # uid -> the last phase traced ("" before the first): one entry a pod created
    done = asyncio.Event()
    settled: list[tuple[float, str]] = []  # (when, why) once nothing can change any more
    start = clock.now()
    created_namespaces = await create_configs(user, namespace, options.configs)
    await cluster.ensure_service_accounts([namespace, *created_namespaces])
    created_job = await user.create(JOBS, namespace, job)
    meta = created_job["metadata"]
    view = RunView(created_job, pod_lines=False)  # the trace is the follower's own
    job_uid = meta["uid"]
    running: dict[str, Obj] = {}
    started: dict[str, float] = {}
    wasted = 0.0
    reasons: Counter[str] = Counter()
    judged_running: dict[str, str] = {}  # uid -> failure_reason of a running pod a FailJob rule matched
    # Pods the Job counts as failed that may never reach phase Failed (`count_unfailed`): deleted ones by name,
    # those counted before they ended (uid -> name), and those that ended first (uid -> end, reason).
    deleting: dict[str, str] = {}
    counted_unended: dict[str, str] = {}
    ended_uncounted: dict[str, tuple[float, str]] = {}

    # restartPolicy OnFailure: containers restart in their pod. uid -> restarts seen, and when the last began
    # (None once the pod's time is counted), kept until the pod is gone.
    pod_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    restart_policy = str(pod_spec.get("restartPolicy") or "Never")
    on_failure = restart_policy == "OnFailure"
    restarted: dict[str, tuple[int, float | None]] = {}
    restarts = 0
    # restartPolicy Never: containers with restartPolicyRules and sidecars restart in place too, and are in the
    # restartCounts, though they count toward no backoffLimit (nor is their time wasted): uid -> restarts seen.
    other_restarts: dict[str, int] | None = {} if not on_failure and P.restarts_in_place(pod_spec) else None

    def count_other_restarts(uid: str, pod: Obj, seen: dict[str, int]) -> None:
        nonlocal restarts
        now = P.total_restarts(pod)
        if now > seen.get(uid, 0):
            restarts += now - seen.get(uid, 0)
            seen[uid] = now

    def count_failure(uid: str, end: float, reason: str) -> None:
        nonlocal wasted
        if uid in restarted:  # its whole run is wasted, restarts and all
            restarted[uid] = (restarted[uid][0], None)
        wasted += end - started.get(uid, end)
        reasons[reason] += 1

    def count_restarted_success(uid: str) -> None:
        """A pod that succeeded after restarts: its runs before the last one failed (and waited out back-off)."""
        nonlocal wasted
        seen, last = restarted.get(uid, (0, None))
        if last is not None:
            restarted[uid] = (seen, None)
            wasted += last - started.get(uid, last)

    def count_restarts(uid: str, pod: Obj) -> None:
        nonlocal restarts
        seen, last = restarted.get(uid, (0, None))
        now = P.total_restarts(pod)
        if now > seen:
            restarts += now - seen
            restarted[uid] = (now, at() if last is not None or seen == 0 else None)

    def count_unfailed(decided: int) -> None:
        """Put the pods of `view.decisions[decided:]` not (yet) Failed into `reasons` and `wasted` once they
        have ended: the Job counts a deleted pod as failed as it is deleted, and it stays counted if it then
        exits 0 in its grace period or its object goes before it ended (tests/simulate/test_counted_failures.py)."""
        for decision in view.decisions[decided:]:
            uid = deleting.pop(decision.pod, None)
            if uid is None:
                continue  # decided as it failed: counted there
            if uid in ended_uncounted:
                count_failure(uid, *ended_uncounted.pop(uid))
            else:
                counted_unended[uid] = decision.pod

    driver = DisruptionDriver(cluster, options.model, options.seed, slots, lambda: list(running.values()), clock)

    instant = [math.nan, 0.0]  # the clock's last reading and `at`'s answer for it: many events share an instant

    def at() -> float:
        now = clock.now()
        if now != instant[0]:
            instant[0], instant[1] = now, round(now - start, 6)
        return instant[1]

    def on_job(_old: Obj | None, new: Obj | None) -> None:
        if new is None or new["metadata"].get("uid") != meta["uid"]:
            return
        decided = len(view.decisions)
        for line in view.update_job(new):
            trace.append((at(), "job", str(meta["name"]), line.removeprefix("job condition ")))
        if deleting and len(view.decisions) > decided:
            count_unfailed(decided)
        if view.finished() is not None:
            done.set()
        elif not phases and (why := never_starts(new)):
            settled.append((at(), why))
            done.set()

    def settle() -> bool:
        """`VirtualTimeLoop.settle`: end the run when nothing can change any more (`settled_reason`)."""
        if done.is_set() or view.finished() is not None:
            return False
        why = settled_reason(pods.list(), nodes.list(), {agent.name for agent in cluster.agents})
        if why is None:
            return False
        settled.append((at(), why))
        done.set()
        return True

    def ended_unfailed(uid: str, name: str, pod: Obj) -> None:
        """A pod ended other than Failed (exited 0, or its object went first): counted if the Job counted it."""
        if uid in counted_unended:
            del counted_unended[uid]
            count_failure(uid, at(), counted_reason(pod))
        elif name in deleting:
            ended_uncounted[uid] = (at(), counted_reason(pod))

    def on_pod(old: Obj | None, new: Obj | None) -> None:
        # Runs for every event of every pod: each field and table entry is read once.
        pod = new if new is not None else old or {}
        pod_meta = pod.get("metadata") or {}
        if (pod_meta.get("labels") or {}).get(CONTROLLER_UID_LABEL) != job_uid:
            return
        name, uid = str(pod_meta["name"]), str(pod_meta.get("uid") or "")
        before = phases.get(uid)
        if before is None:
            phases[uid] = ""
            index = (pod_meta.get("annotations") or {}).get(JOB_COMPLETION_INDEX_ANNOTATION, "")
            trace.append((at(), "pod-created", name, str(index)))
        if new is None:
            running.pop(uid, None)
            trace.append((at(), "pod-deleted", name, ""))
            restarted.pop(uid, None)
            if other_restarts is not None:
                other_restarts.pop(uid, None)
            if before not in ("Succeeded", "Failed"):
                ended_unfailed(uid, name, pod)
            view.update_pod(None, deleted=old)  # a pod gone adds no decision
            return
        if on_failure:
            count_restarts(uid, new)
        elif other_restarts is not None:
            count_other_restarts(uid, new, other_restarts)
        phase = (new.get("status") or {}).get("phase")  # `P.phase`, inline
        phase = (phase if type(phase) is str else str(phase or "")) or "Pending"
        being_deleted = bool(pod_meta.get("deletionTimestamp"))
        if phase == "Running" and not being_deleted:
            running[uid] = new
        else:
            running.pop(uid, None)
            if being_deleted and before not in ("Succeeded", "Failed"):
                deleting[name] = uid
        if before != phase:
            phases[uid] = phase
            trace.append((at(), "pod-phase", name, phase if phase != "Failed" else _failure(new)))
            if phase == "Running":
                started[uid] = at()
                driver.pod_running(new)
            elif phase == "Failed":
                counted_unended.pop(uid, None)
                deleting.pop(name, None)
                count_failure(uid, at(), judged_running.pop(uid, "") or failure_reason(new))
            elif phase == "Succeeded":
                if deleting or counted_unended:  # most runs delete no pod: no call a pod
                    ended_unfailed(uid, name, new)
                if restarted and name not in deleting:
                    count_restarted_success(uid)
        decided = len(view.decisions)
        view.pod_changed(new, uid, name, phase, being_deleted)  # "" and Pending are one state to the view
        if len(view.decisions) > decided:
            if deleting:
                count_unfailed(decided)
            if phase != "Failed":
                # A FailJob rule matched a running pod's last termination (restart-limit mode): the pod fails
                # later, killed for the Job's failure, and its 143 is not why it failed
                # (docs/onfailure-pod-failure-policy.md).
                judged_running[uid] = failure_reason(new, last_termination=True)

    jobs.add_handler(on_job)
    pods.add_handler(on_pod)
    jobs.start()
    pods.start()
    nodes.start()
    driver.start()
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeLoop)
    # The time limit waits as a periodic loop does (`tick`), so that it is no event keeping the run going.
    waits = [asyncio.ensure_future(done.wait()), asyncio.ensure_future(clock.tick(options.time_limit))]
    loop.settle = settle
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        loop.settle = None
        for wait in waits:
            wait.cancel()
        await driver.stop()
        await nodes.stop()
        jobs.remove_handler(on_job)
        pods.remove_handler(on_pod)
    for uid in counted_unended:  # counted as failed, and still terminating when the run ended
        count_failure(uid, at(), counted_reason(view.pods.get(uid) or {}))
    outcome = view.finished() or "Unfinished"
    cond: Obj = next(
        (c for c in (view.job.get("status") or {}).get("conditions") or () if c.get("type") == outcome),
        {},
    )
    actions = Counter(action_of(view, i) for i in range(len(view.decisions)))
    return SimulationResult(
        job=view.job,
        outcome=outcome,
        reason=str(cond.get("reason") or ""),
        message=str(cond.get("message") or ""),
        virtual_seconds=options.time_limit if settled else at(),
        wall_seconds=time.perf_counter() - wall,
        pods_created=len(phases),
        failures_by_action=dict(sorted(actions.items())),
        failures_by_reason=dict(sorted(reasons.items())),
        wasted_pod_seconds=wasted,
        retries_per_index={i: n - 1 for i, n in sorted(slots.attempts().items()) if n > 1},
        disruptions=dict(sorted(driver.applied.items())),
        container_restarts=restarts,
        trace=trace,
        view=view,
        settled_after=settled[0][0] if settled else None,
        settled=settled[0][1] if settled else "",
        restart_policy=restart_policy,
    )


def _failure(pod: Obj) -> str:
    codes = [
        str(((cs.get("state") or {}).get("terminated") or {}).get("exitCode"))
        for cs in P.status(pod).get("containerStatuses") or ()
    ]
    return f"Failed exit={','.join(codes)}" if codes else f"Failed {P.status(pod).get('reason') or ''}".strip()


def counted_reason(pod: Obj) -> str:
    """`failure_reason` of a pod the Job counted as failed that did not reach phase Failed: its DisruptionTarget
    reason if it has one, else `Completed 0` for one that exited 0 in its grace period, else the exit it showed, or
    `Deleted` for one whose object went while it ran (as the Job controller counts it: `isPodFailed`)."""
    target = P.condition(pod, "DisruptionTarget")
    if P.phase(pod) == "Succeeded" and (target is None or target.get("status") != "True"):
        return "Completed 0"
    reason = failure_reason(pod)  # the DisruptionTarget reason first
    return "Deleted" if reason == "Failed" and not P.status(pod).get("reason") else reason


def reason_label(reason: str) -> str:
    """A `failure_reason` key for the text reports: `Error 1` reads `Error (exit 1)`, so that its count after it
    (`Error (exit 1) 3`) is not taken for a second number of the reason."""
    name, _, code = reason.rpartition(" ")
    return f"{name} (exit {code})" if name and code.lstrip("-").isdigit() else reason


def failure_reason(pod: Obj, *, last_termination: bool = False) -> str:
    """Why a pod failed, for counting: its DisruptionTarget reason (as Kubernetes sets it), else the termination
    reason and exit code of the container that failed it (`OOMKilled 137`, `Error 1`; with `last_termination`, a
    restarted container's `lastState` too), else the pod's reason.

    The container that failed the pod is looked for as `kjobs run` names it: an init container first (the
    regular containers never ran), then the regular containers, then the sidecars (`restartPolicy: Always`); and
    a container that ended on its own before one the node stopped with a signal when the pod failed (the 143 of
    the main container after its sidecar used up `maxRestartTimes` is not why the pod failed)."""
    target = P.condition(pod, "DisruptionTarget")
    if target is not None and target.get("status") == "True":
        return str(target.get("reason") or "DisruptionTarget")
    status = P.status(pod)
    init_specs = (pod.get("spec") or {}).get("initContainers") or ()
    sidecars = {c.get("name") for c in init_specs if isinstance(c, dict) and c.get("restartPolicy") == "Always"}
    inits = [cs for cs in status.get("initContainerStatuses") or () if isinstance(cs, dict)]
    ordered = [
        *(cs for cs in inits if cs.get("name") not in sidecars),
        *(cs for cs in status.get("containerStatuses") or () if isinstance(cs, dict)),
        *(cs for cs in inits if cs.get("name") in sidecars),
    ]
    stopped: str | None = None
    for cs in ordered:
        term = terminated_state(cs, last_termination) or {}
        if term.get("exitCode"):
            reason = f"{term.get('reason') or 'Error'} {term['exitCode']}"
            if not term.get("signal") or term.get("reason") == "OOMKilled":
                return reason
            stopped = stopped or reason
    return stopped or str(status.get("reason") or "Failed")
