"""A seeded chaos driver for "a failure is counted once, for what it was, whatever crashes" (docs/chaos.md).

One run: `kjobs up --nodes 0` (HTTPS, its own process, a SQLite data directory) and a node agent `kjobs node join`
(another process, whose pods are local processes started by its process shims), three Jobs whose pods fail
deterministically, and a seeded list of disruptions at seeded moments: SIGKILL of the API server, of the node
agent, of one of the agent's process shims, of the server and the agent at once (each restarted after a seeded
pause), an eviction through the Eviction API and a `kubectl drain` + `uncordon` of the node.

The truth is kept outside kjobs: a pod's script numbers its attempt by the files its index already wrote, writes
`<job>.<index>.<attempt>` (its pod name and the exit code a seeded table gives that attempt) before it sleeps, and
`<...>.end` just before it exits with that code. So for every pod the driver knows whether its container ran to
its end (then the API must report that exit code) or was cut short (then only a shim kill, reported as a
containerd shim's death is, exit 137, or an eviction, a DisruptionTarget condition, may explain it — never a
crash of `kjobs up` or of the agent, which a cluster's pods survive). From those outcomes and each Job's
podFailurePolicy the driver derives what the Job controller must have counted, and compares it with the Job's
status: its condition and reason, succeeded, failed, completedIndexes, failedIndexes, uncountedTerminatedPods,
tracking finalizers, and no container process left on the machine (found by a per-run environment marker).

With `--nodes 2` or `3` (`chaos_run(..., nodes=3)`) the run has that many agents and the disruptions of a cluster of
several nodes too: a node lost for good (its machine dies; the node lifecycle controller taints it, the taint manager
evicts its pods, the driver deletes its Node or taints it out-of-service, the pod GC collects its pods), a node back
after it was marked NotReady, the API server killed while a node is NotReady, a cordon; the node lifecycle's timing is
shortened with `kjobs up`'s and `kjobs node join`'s own flags (`GRACE`).

Run many seeds with `python -m tests.e2e.chaos --seeds 0-49 [--nodes 3]` from the worktree (PYTHONPATH=src).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import itertools
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kjobs.api.names import CONTROLLER_UID_LABEL
from kjobs.api.taints import TAINT_NOT_READY, TAINT_UNREACHABLE, taints_of
from kjobs.api.timeutil import parse_time
from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.informer import Informer
from kjobs.client.kubeconfig import load
from kjobs.client.resources import JOBS, NODES, PODS
from kjobs.node import leftovers
from kjobs.store.integrity import read_back
from tests.e2e.support import condition, eventually, job_manifest, phase, terminal_condition, terminated
from tests.e2e.test_crash_safety import NODE, Processes, _answers, _node_ready

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
KINDS = ("server", "agent", "shim", "both", "node", "evict", "drain")
NODE_KINDS = ("lose", "return", "outage", "cordon")
"""Disruptions only a cluster of several nodes has (docs/chaos.md, "Several nodes"): a node lost for good, a node
back after it was marked NotReady, the API server killed while a node is NotReady, a cordon."""
MULTI_KINDS = KINDS + NODE_KINDS
NODE_NAMES = ("node-a", "node-b", "node-c")
GRACE = "5s"
"""`kjobs up --node-monitor-grace-period` of a several-node run (Kubernetes: 50 s), with heartbeats every second
(`kjobs node join --node-status-update-frequency 1s`; Kubernetes: 10 s), pods tolerating an unreachable or
not-ready node for 1 s (`--default-*-toleration-seconds`; Kubernetes: 300 s) and a node tainted a second
(`--node-eviction-rate 1`; Kubernetes: 0.1): a lost node's pods are evicted within ~7 s. Five heartbeats may be
missed before a live node is called unhealthy; if a loaded machine delays more, its pods are evicted, which the
checks accept as any eviction."""
POD_GC_PERIOD = "0.5"
"""`kjobs up --pod-gc-period` (testing only; Kubernetes: 20 s, a deleted node quarantined 40 s)."""
AGENT_START = 60.0
"""How long a `kjobs node join` may take, from its spawn, to register: a Python start, which a machine running four
test workers on two cores (docs/ci-time.md) stretched past 20 s (docs/chaos55.md)."""
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
DISRUPTION = {"type": "DisruptionTarget", "status": "True"}
SHIM_KILLED = 137
DISRUPTED_BY = ("EvictionByEvictionAPI", "DeletionByTaintManager", "DeletionByPodGC")
"""The DisruptionTarget reasons these disruptions give: the Eviction API (evict, drain), the taint manager (a node
NotReady or out-of-service), the pod GC (a deleted Node's pods)."""
BACKOFF = 0.02
"""`kjobs up --backoff`: the pod-failure back-off doubles with every failure since the Job's last success (all of
them, ignored ones too: pkg/controller/job/backoff_utils.go), and a drain fails every running pod at once, so a
base of 0.1 s reached 51 s after two drains and one node crash (seed 5)."""
"""What containerd reports for the containers of a shim that died (128 + SIGKILL), as kjobs does."""


@dataclass(frozen=True)
class JobPlan:
    """One Job of a run: its spec, the exit code and duration of each (index, attempt), its rules."""

    name: str
    completions: int
    parallelism: int
    spec: Obj
    rules: list[Obj]
    codes: dict[tuple[int, int], int]
    pauses: dict[tuple[int, int], float]


def _pause(rng: random.Random) -> float:
    return round(rng.uniform(0.3, 1.2), 2)


def plans(seed: int, *, long_pods: bool = False) -> list[JobPlan]:
    """Three Jobs: `count` (Ignore/Count on exit codes, Ignore on DisruptionTarget, a global backoffLimit),
    `perindex` (backoffLimitPerIndex 1, maxFailedIndexes, FailIndex/Ignore/Count, podReplacementPolicy Failed)
    and `failjob` (one pod at a time; FailJob on exit 42 for some seeds, Ignore on DisruptionTarget).
    `long_pods` (several nodes): the first attempt of two indexes of `count` and `perindex` sleeps 10-16 s, so that
    a node lost or away still runs pods when its taints evict them (~7 s after the loss)."""
    result = _plans(seed)
    if long_pods:
        rng = random.Random(seed * 13 + 5)
        for plan in result[:2]:
            for index in rng.sample(range(plan.completions), 2):
                plan.pauses[index, 0] = round(rng.uniform(10.0, 16.0), 2)
    return result


def _plans(seed: int) -> list[JobPlan]:
    rng = random.Random(seed)
    result = []
    codes: dict[tuple[int, int], int] = {}
    for index in range(6):
        for attempt in range(4):
            codes[index, attempt] = rng.choice((0, 1, 2)) if attempt < 3 else 0
    count_rules: list[Obj] = [
        {"action": "Ignore", "onPodConditions": [DISRUPTION]},
        {"action": "Ignore", "onExitCodes": {"containerName": "main", "operator": "In", "values": [2]}},
        {"action": "Count", "onExitCodes": {"containerName": "main", "operator": "In", "values": [1]}},
    ]
    spec = {"backoffLimit": 40, "podFailurePolicy": {"rules": count_rules}}
    pauses = {key: _pause(rng) for key in codes}
    result.append(JobPlan("count", 6, 3, spec, count_rules, codes, pauses))
    codes = {}
    for index in range(6):
        for attempt in range(4):
            codes[index, attempt] = rng.choice((0, 0, 1, 2, 3)) if attempt < 3 else 0
    per_rules: list[Obj] = [
        {"action": "FailIndex", "onExitCodes": {"containerName": "main", "operator": "In", "values": [3]}},
        {"action": "Ignore", "onPodConditions": [DISRUPTION]},
        {"action": "Ignore", "onExitCodes": {"containerName": "main", "operator": "In", "values": [2]}},
    ]
    spec = {
        "backoffLimitPerIndex": 1,
        "maxFailedIndexes": 6,
        "podReplacementPolicy": "Failed",
        "podFailurePolicy": {"rules": per_rules},
    }
    pauses = {key: _pause(rng) for key in codes}
    result.append(JobPlan("perindex", 6, 3, spec, per_rules, codes, pauses))
    codes = {}
    fail_at = rng.choice((None, (2, 0), (3, 1)))
    for index in range(4):
        for attempt in range(3):
            codes[index, attempt] = rng.choice((0, 1)) if attempt < 2 else 0
    if fail_at is not None:
        codes[fail_at] = 42
    fail_rules: list[Obj] = [
        {"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [DISRUPTION]},
    ]
    spec = {"backoffLimit": 30, "podFailurePolicy": {"rules": fail_rules}}
    pauses = {key: _pause(rng) for key in codes}
    result.append(JobPlan("failjob", 4, 1, spec, fail_rules, codes, pauses))
    return result


def command(truth: Path, plan: JobPlan) -> str:
    """The pod's script; `$$` is a literal `$` in a container's command (Kubernetes expands `$(VAR)`)."""
    cases = " ".join(f"{i}.{n}) c={code}; s={plan.pauses[i, n]};;" for (i, n), code in sorted(plan.codes.items()))
    base = f"{truth}/{plan.name}.$$i"
    return (
        f"i=$$JOB_COMPLETION_INDEX; n=0; while [ -e {base}.$$n ]; do n=$$((n+1)); done; "
        f"case $$i.$$n in {cases} *) c=0; s=0.3;; esac; "
        f'echo "$$POD_NAME $$c" > {base}.$$n.tmp; mv {base}.$$n.tmp {base}.$$n; '
        f"sleep $$s; touch {base}.$$n.end; exit $$c"
    )


def manifest(truth: Path, plan: JobPlan, marker: str) -> Obj:
    env = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "KJOBS_CHAOS_RUN", "value": marker},
    ]
    obj = job_manifest(
        plan.name,
        command(truth, plan),
        completionMode="Indexed",
        completions=plan.completions,
        parallelism=plan.parallelism,
        **plan.spec,
    )
    obj["spec"]["template"]["spec"]["containers"][0]["env"] = env
    return obj


@dataclass(frozen=True)
class Event:
    at: float
    kind: str
    down: float


def schedule(seed: int, kinds: tuple[str, ...] = KINDS, events: int = 5) -> list[Event]:
    """Seeded disruptions in the first 9 s; a node is lost for good at most once a run (so two of three are left
    to take its pods), and a later `lose` becomes another node kind."""
    rng = random.Random(seed * 7919 + 1)
    times = sorted(rng.uniform(0.5, 9.0) for _ in range(events))
    result = [Event(round(t, 2), rng.choice(kinds), round(rng.uniform(0.0, 1.5), 2)) for t in times]
    lost = False
    for i, event in enumerate(result):
        if event.kind == "lose":
            if lost:
                others = [k for k in kinds if k != "lose"] or ["server"]
                result[i] = Event(event.at, others[i % len(others)], event.down)
            lost = True
    return result


# --- processes -------------------------------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def _pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def shims_of(agent: int) -> list[int]:
    """The agent's live process shims (its children running kjobs/node/shim.py)."""
    found = []
    for pid in _pids():
        fields = _stat(pid)
        if fields is None or fields[1] != str(agent) or fields[0] in ("Z", "X"):
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"shim.py" in cmdline:
            found.append(pid)
    return found


def marked_pods(marker: str) -> dict[int, str]:
    """Live processes of the run's containers, with the pod each belongs to (its POD_NAME)."""
    found = {}
    for pid in marked(marker):
        with contextlib.suppress(OSError):
            for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                if entry.startswith(b"POD_NAME="):
                    found[pid] = entry[9:].decode()
    return found


def marked(marker: str) -> list[int]:
    """Live processes whose environment carries the run's marker: its pods' containers."""
    needle = f"KJOBS_CHAOS_RUN={marker}".encode()
    found = []
    for pid in _pids():
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        fields = _stat(pid)
        if needle in environ.split(b"\0") and fields is not None and fields[0] not in ("Z", "X"):
            found.append(pid)
    return found


# --- the expected outcome --------------------------------------------------------------------------------------


def _action(rules: list[Obj], pod: Obj, code: int) -> str:
    """The first rule matching a failed pod (Kubernetes' pkg/controller/job/pod_failure_policy.go), else Count."""
    for rule in rules:
        exits = rule.get("onExitCodes")
        if exits is not None and code != 0 and code in exits["values"]:
            return str(rule["action"])
        for want in rule.get("onPodConditions") or []:
            if condition(pod, want["type"]).get("status") == want["status"]:
                return str(rule["action"])
    return "Count"


def _disrupted(pod: Obj) -> Obj:
    """The pod as it was just before its deletion by an eviction: with a DisruptionTarget condition."""
    status = dict(pod.get("status") or {})
    status["conditions"] = [*(status.get("conditions") or []), dict(DISRUPTION, reason="EvictionByEvictionAPI")]
    return {**pod, "status": status}


def _intervals(indexes: list[int]) -> str:
    """Kubernetes' compressed index list ("0-2,5"; two adjacent indexes as "2,3")."""
    parts: list[str] = []
    i = 0
    while i < len(indexes):
        j = i
        while j + 1 < len(indexes) and indexes[j + 1] == indexes[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{indexes[i]}-{indexes[j]}")
        else:
            parts.extend(str(x) for x in indexes[i : j + 1])
        i = j + 1
    return ",".join(parts)


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    """How many pods ended how: `ran` (to their end), `evicted`, `shim-killed`, `lost` (ContainerStatusUnknown),
    `node-lost` (failed by the controllers for a node lost for good, without a word from its agent); and, besides,
    `end-unseen`: removed while this driver's watch was down, last seen being deleted but not terminal (`_verify`)."""
    shim_kills: list[float] = field(default_factory=list)
    """When a shim was killed (wall clock)."""
    lost_nodes: set[str] = field(default_factory=set)
    """Nodes lost for good (agent, shims and containers killed, never back)."""
    out_of_service: set[str] = field(default_factory=set)
    """Lost nodes tainted out-of-service (not deleted): the pod GC fails their terminating pods with no condition of
    its own (`gcTerminating` → `markFailedAndDeletePod`, pkg/controller/podgc/gc_controller.go)."""
    drained_after_loss: set[str] = field(default_factory=set)
    """Lost nodes drained after they came back (rebooted): the drain evicts the pods the pod GC failed but the Job
    controller had not yet released (their tracking finalizer), and the Eviction API replaces their
    `DisruptionTarget` reason with its own (pkg/registry/core/pod/storage/eviction.go `addConditionAndDeletePod`
    updates the condition of a terminal pod too)."""
    unschedulable: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    """Node -> wall-clock windows in which it was cordoned or tainted NoSchedule: no pod created then may run there."""

    def saw(self, what: str) -> None:
        self.seen[what] = self.seen.get(what, 0) + 1

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.problems.append(what)


def truth_of(truth: Path, job: str) -> dict[str, tuple[int, float | None]]:
    """Pod name -> (its planned exit code, when its container reached its end: None if it did not)."""
    found: dict[str, tuple[int, float | None]] = {}
    for path in truth.glob(f"{job}.*"):
        if path.name.count(".") == 2 and not path.name.endswith((".end", ".tmp")):
            name, code = path.read_text().split()
            end = truth / f"{path.name}.end"
            found[name] = (int(code), end.stat().st_mtime if end.exists() else None)
    return found


def verify(
    plan: JobPlan,
    job: Obj,
    pods: list[Obj],
    existing: set[str],
    first_terminal: dict[str, Obj],
    terminal_at: dict[str, float],
    truth: Path,
    kills: dict[str, int],
    verdict: Verdict,
    removals: dict[str, str] | None = None,
) -> None:
    """Compare one finished Job with what its pods' real outcomes and its policy make of them. `removals`: uid ->
    how the driver learned of a pod's removal, `watch` (its watch's DELETED event, which the pod's every version
    before it preceded) or `relist` (the pod missing from the list its informer made after the watch broke, as a
    server restart breaks it: its versions in between were never seen)."""
    name = plan.name
    files = truth_of(truth, name)
    before = len(verdict.problems)
    removals = removals or {}
    try:
        _verify(plan, job, pods, existing, first_terminal, terminal_at, files, kills, verdict, removals)
    finally:
        if len(verdict.problems) > before:
            for pod in pods:
                state = terminated(pod)
                verdict.problems.append(
                    f"      {pod['metadata']['name']} {phase(pod)} exit={state.get('exitCode')} "
                    f"{state.get('reason')} disrupted={condition(pod, 'DisruptionTarget').get('reason')} "
                    f"file={files.get(pod['metadata']['name'])} deleted={pod['metadata']['uid'] not in existing} "
                    f"node={pod['spec'].get('nodeName') or '-'} "
                    f"grace={pod['metadata'].get('deletionGracePeriodSeconds')} "
                    f"removal={removals.get(pod['metadata']['uid'], '-')} rv={pod['metadata'].get('resourceVersion')}"
                )


def _check_placement(pod: Obj, node: str, verdict: Verdict) -> None:
    """No pod created while its node was cordoned or tainted NoSchedule runs there (the scheduler's
    NodeUnschedulable and TaintToleration filters). `creationTimestamp` has whole seconds and the scheduler's cache
    lags its informer: a pod counts only when created a second after the window opened and 5 s before it closed."""
    created = parse_time(str(pod["metadata"].get("creationTimestamp") or "")) if node else 0.0
    for since, until in verdict.unschedulable.get(node, []):
        verdict.check(
            not (since + 1 <= created and created + 6 <= until),
            f"{pod['metadata']['name']}: created at {created:.0f} on {node}, unschedulable {since:.1f}..{until:.1f}",
        )


def _verify(
    plan: JobPlan,
    job: Obj,
    pods: list[Obj],
    existing: set[str],
    first_terminal: dict[str, Obj],
    terminal_at: dict[str, float],
    files: dict[str, tuple[int, float | None]],
    kills: dict[str, int],
    verdict: Verdict,
    removals: dict[str, str],
) -> None:
    name = plan.name
    per_index: dict[int, list[tuple[str, frozenset[str]]]] = {}  # index -> [(outcome, its possible actions)]
    for pod in pods:
        pname = pod["metadata"]["name"]
        index = int(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"])
        state = terminated(pod)
        terminal = phase(pod) in ("Succeeded", "Failed")
        # A pod being deleted whose removal only a relist showed may have ended while this driver's watch was down:
        # its node agent (pkg/kubelet/status/status_manager.go `canBeDeleted` deletes a pod only once its phase is
        # terminal) or, unscheduled, the pod GC (`gcUnscheduledTerminating`, pkg/controller/podgc/gc_controller.go)
        # made it Failed and the Job controller, counting it, released it (its tracking finalizer): a deletion of
        # grace 0 then removes it in the same write. With the API server restarted, the restarted controllers do
        # both in their first passes, before this driver's watch is back (docs/chaos55.md). Its last version is
        # unknown; one whose removal the watch delivered was seen to its end.
        unseen_end = not terminal and removals.get(pod["metadata"]["uid"]) == "relist"
        unseen_end &= bool(pod["metadata"].get("deletionTimestamp"))
        verdict.check(terminal or unseen_end, f"{pname}: not terminal ({phase(pod)})")
        if unseen_end:
            verdict.saw("end-unseen")
        code = state.get("exitCode")
        planned, end = files.get(pname, (None, None))
        ended = end is not None
        node = str(pod["spec"].get("nodeName") or "")
        _check_placement(pod, node, verdict)
        evicted = condition(pod, "DisruptionTarget").get("status") == "True"
        why = condition(pod, "DisruptionTarget").get("reason")
        verdict.check(not evicted or why in DISRUPTED_BY, f"{pname}: DisruptionTarget {why}")
        # A lost node's agent never reports: the pod GC fails such a pod with no container state, after the taint
        # manager's eviction (DeletionByTaintManager) or for the Node's deletion (DeletionByPodGC), pkg/controller/
        # podgc/gc_controller.go; a container that ended just before the machine died is not reported either.
        node_lost = node in verdict.lost_nodes and not state and phase(pod) == "Failed"
        if node_lost:
            reason = condition(pod, "DisruptionTarget").get("reason")
            # A drain of a lost node tainted out-of-service marks its pods EvictionByEvictionAPI (the Eviction API
            # replaces the taint manager's reason, pkg/registry/core/pod/storage/eviction.go
            # `addConditionAndDeletePod`), and the pod GC fails such a terminating pod with no condition of its own.
            # So does a drain of the node once it came back (`drained_after_loss`).
            evicted_after = node in verdict.out_of_service or node in verdict.drained_after_loss
            earlier = evicted_after and reason == "EvictionByEvictionAPI"
            verdict.check(
                reason in ("DeletionByTaintManager", "DeletionByPodGC") or earlier,
                f"{pname}: on lost node {node}, {reason}",
            )
            verdict.saw("node-lost")
        reported = terminal_at.get(pod["metadata"]["uid"])
        verdict.check(
            end is None or reported is None or end < reported + 0.5,
            f"{pname}: its container ran on after the pod was reported {phase(pod)} {state}",
        )
        verdict.saw(
            "node-lost"
            if node_lost
            else "lost"
            if state.get("reason") == "ContainerStatusUnknown"
            else "ran"
            if ended
            else "evicted"
            if evicted
            else "shim-killed"
        )
        if state.get("reason") == "ContainerStatusUnknown":
            # only a runtime that lost its containers (the node's shims died with its agent) may not know, or a
            # pod deleted before its container ran (a kubelet's convertToAPIContainerStatuses, kubelet_pods.go)
            never_ran = evicted and planned is None
            verdict.check(kills.get("node", 0) > 0 or never_ran, f"{pname}: ContainerStatusUnknown {state}")
        elif ended:
            # A shim killed between its container's exit and its report: containerd's clean-up after a dead shim
            # reports 137 whatever the exit was (containerd-shim-runc-v2's delete: 128 + SIGKILL), and so does kjobs.
            assert end is not None
            # An eviction's SIGTERM between the `.end` file and the `exit`: the shell dies of it (143).
            raced = code == SHIM_KILLED and any(abs(end - t) < 1.0 for t in verdict.shim_kills)
            raced |= code == 128 + signal.SIGTERM and evicted
            verdict.check(
                code == planned or raced or node_lost, f"{pname}: ran to its end with {planned}, reported {code}"
            )
        else:
            shim = code == SHIM_KILLED and kills.get("shim", 0) > 0
            verdict.check(
                evicted or shim, f"{pname}: cut short (file {planned}) without a shim kill or eviction: {state}"
            )
        if phase(pod) == "Succeeded":
            per_index.setdefault(index, []).append(("succeeded", frozenset()))
        else:
            # a pod evicted after it failed (`kubectl drain` evicts finished pods too) gains DisruptionTarget after
            # the fact: the controller counts the version it saw first, which depends on timing, so either is right
            seen: tuple[Obj, ...] = (first_terminal.get(pod["metadata"]["uid"], pod), pod)
            if pod["metadata"]["uid"] not in existing and not evicted:
                # Deleted, and no version seen with DisruptionTarget: every deletion here adds it first (the
                # Eviction API to a finished pod too, pkg/registry/core/pod/storage/eviction.go
                # `addConditionAndDeletePod`; the taint manager; the pod GC), and a finished pod without finalizers
                # is gone at once, so a driver whose watch was down then (a server restart) never sees that
                # version, while the Job controller may have counted it (chaos seed 20 on three nodes).
                seen += (_disrupted(pod),)
            actions = frozenset(_action(plan.rules, p, int(terminated(p).get("exitCode") or 0)) for p in seen)
            per_index.setdefault(index, []).append(("failed", actions))
    status = job.get("status") or {}
    cond = terminal_condition(job)
    succeeded = sum(1 for v in per_index.values() for o, _ in v if o == "succeeded")
    least = sum(1 for v in per_index.values() for o, a in v if o == "failed" and "Ignore" not in a)
    most = sum(1 for v in per_index.values() for o, a in v if o == "failed" and a != {"Ignore"})
    verdict.check(
        status.get("succeeded", 0) == succeeded, f"{name}: succeeded {status.get('succeeded')} != {succeeded}"
    )
    verdict.check(
        least <= status.get("failed", 0) <= most, f"{name}: failed {status.get('failed')}, counted {least}..{most}"
    )
    verdict.check(status.get("active", 0) == 0, f"{name}: active {status.get('active')}")
    uncounted = status.get("uncountedTerminatedPods") or {}
    verdict.check(not any(uncounted.values()), f"{name}: uncounted {uncounted}")
    done = sorted(i for i, v in per_index.items() if any(o == "succeeded" for o, _ in v))
    for index, outcomes in per_index.items():
        verdict.check(sum(o == "succeeded" for o, _ in outcomes) <= 1, f"{name}: index {index} succeeded twice")
    if name == "perindex":
        failed_indexes = []
        for index in range(plan.completions):
            outcomes = per_index.get(index, [])
            ok = sum(o == "succeeded" for o, _ in outcomes)
            if not ok:
                failed_indexes.append(index)
            possible = False
            for chosen in itertools.product(*(sorted(a) for o, a in outcomes if o == "failed")):
                fi, cnt = chosen.count("FailIndex"), chosen.count("Count")
                possible |= (fi == 0 and cnt <= 1) if ok else ((fi == 1 and cnt <= 1) or (fi == 0 and cnt == 2))
            verdict.check(possible, f"{name}: index {index} (succeeded {ok}): {outcomes}")
        verdict.check(status.get("completedIndexes", "") == _intervals(done), f"{name}: completedIndexes {status}")
        verdict.check(status.get("failedIndexes", "") == _intervals(failed_indexes), f"{name}: failedIndexes {status}")
        want = ("Failed", "FailedIndexes") if failed_indexes else ("Complete", "CompletionsReached")
    elif name == "failjob":
        failjob = sum("FailJob" in a for v in per_index.values() for _, a in v)
        verdict.check(failjob <= 1, f"{name}: {failjob} pods failed the Job")
        want = ("Failed", "PodFailurePolicy") if failjob else ("Complete", "CompletionsReached")
        verdict.check(status.get("completedIndexes", "") == _intervals(done), f"{name}: completedIndexes {status}")
    else:
        want = ("Complete", "CompletionsReached")
        verdict.check(done == list(range(plan.completions)), f"{name}: completed {done}")
        verdict.check(status.get("completedIndexes", "") == _intervals(done), f"{name}: completedIndexes {status}")
    verdict.check((cond.get("type"), cond.get("reason")) == want, f"{name}: condition {cond}, expected {want}")
    for pod in pods:
        if pod["metadata"]["uid"] not in existing:
            continue  # deleted (evicted): its finalizers were removed first
        verdict.check(
            TRACKING_FINALIZER not in (pod["metadata"].get("finalizers") or []),
            f"{pod['metadata']['name']}: tracking finalizer left",
        )


# --- the run ---------------------------------------------------------------------------------------------------


class RecordingInformer(Informer):
    """An informer that says whether its handlers are being called from a relist (`relisting`): a removal found
    there, after a broken watch, hides the versions the pod had in between; one from the watch does not."""

    relisting = False

    async def _relist(self) -> None:
        self.relisting = True
        try:
            await super()._relist()
        finally:
            self.relisting = False


@dataclass
class Outcome:
    seed: int
    events: list[Event]
    kills: dict[str, int]
    problems: list[str]
    seconds: float
    pods: dict[str, int]
    marks: dict[str, float] = field(default_factory=dict)
    """Seconds since the run's start at which each event began (`<n>.<kind>@<node>`), the disruptions were over
    (`events`) and every Job was finished (`finished`): where a slow run spends its time."""


async def _evict(client: HttpClient, victims: list[Obj], rng: random.Random) -> int:
    running = [p for p in victims if phase(p) in ("Pending", "Running") and not p["metadata"].get("deletionTimestamp")]
    if not running:
        return 0
    pod = rng.choice(running)
    meta = {"name": pod["metadata"]["name"], "namespace": "default"}
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": meta}
    try:
        await client.post_subresource(PODS, "default", meta["name"], "eviction", body)
    except Exception:  # gone meanwhile, or refused: nothing evicted
        return 0
    return 1


async def _kubectl(processes: Processes, *args: str, timeout: float = 30) -> int:
    proc = await asyncio.create_subprocess_exec(
        "kubectl", *args, env=processes.env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        return await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return -1


class Cluster(Processes):
    """The run's processes: `kjobs up` and one `kjobs node join` per node. A run of several nodes shortens the
    node lifecycle's timing (`GRACE`) so that a lost node's pods are evicted and collected within seconds."""

    def __init__(self, root: Path, names: tuple[str, ...]) -> None:
        super().__init__(root)
        self.names = names
        self.several = len(names) > 1

    def start_server(self, *, nodes: int = 0, backoff: float = BACKOFF) -> None:
        timing = [
            *("--node-monitor-grace-period", GRACE, "--node-monitor-period", "500ms", "--node-eviction-rate", "1"),
            *("--default-not-ready-toleration-seconds", "1", "--default-unreachable-toleration-seconds", "1"),
            *("--pod-gc-period", POD_GC_PERIOD),
        ]
        self.server = self.spawn(
            "up",
            *("up", "--nodes", str(nodes), "--backoff", str(backoff), "--port", str(self.port)),
            *("--data-dir", str(self.root / "data"), "--kubeconfig", str(self.kubeconfig)),
            *(timing if self.several else []),
        )

    def join_node(self, name: str = NODE) -> subprocess.Popen[bytes]:
        root = self.root / (name if self.several else "node")
        return self.spawn(
            "node",
            *("node", "join", "--name", name, "--kubeconfig", str(self.kubeconfig), "--root-dir", str(root)),
            *("--shutdown-grace-period", "2"),
            *(("--node-status-update-frequency", "1s") if self.several else ()),
        )


async def join(
    processes: Cluster, name: str = NODE, started: tuple[subprocess.Popen[bytes], Path] | None = None
) -> subprocess.Popen[bytes]:
    """Start a node agent (or take one `started` with its log) and wait until it has registered (a stale Ready
    node says nothing of it)."""
    agent, log = started or spawn_agent(processes, name)

    def joined() -> bool:
        assert agent.poll() is None, f"the node agent exited: {log.read_text(errors='replace')}"
        return log.exists() and "joined" in log.read_text(errors="replace")

    await eventually(joined, timeout=AGENT_START, what="the node agent registered")
    return agent


def spawn_agent(processes: Cluster, name: str) -> tuple[subprocess.Popen[bytes], Path]:
    """Start a node agent; returns it and its log."""
    agent = processes.join_node(name)
    return agent, processes.root / f"node-{len(processes.started) - 1}.log"


def node_shims(root: Path) -> list[int]:
    """The live process shims of every agent that ran on the node whose root directory is `root`, by their journals'
    names (`<root>/journal/<agent>.<shim pid>-<start time>.jsonl`, kjobs.node.shim): an agent killed and started
    again adopts what its predecessor's shims still run, and those are not its children."""
    found = []
    for path in (root / "journal").glob("*.jsonl"):
        shim = path.name.removesuffix(".jsonl").partition(".")[2]
        if leftovers.alive(shim):
            found.append(int(shim.partition("-")[0]))
    return found


def crash_machine(agent: subprocess.Popen[bytes], root: Path) -> None:
    """A node's machine dies: its agent, its shims (those of the agents before it on the node too) and every
    container they started, at once (stopped first, so that nothing reports or starts in between; each container
    leads its own process group)."""
    agent.send_signal(signal.SIGSTOP)
    shims = sorted(set(shims_of(agent.pid)) | set(node_shims(root)))
    for pid in shims:
        with contextlib.suppress(ProcessLookupError):  # an earlier agent's shim may end by itself meanwhile
            os.kill(pid, signal.SIGSTOP)
    parents = {str(pid) for pid in shims}
    for pid in list(_pids()):
        fields = _stat(pid)
        if fields is not None and fields[1] in parents:
            with contextlib.suppress(OSError):
                group = os.getpgid(pid)
                if group != os.getpgrp():
                    os.killpg(group, signal.SIGKILL)
    for pid in shims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    agent.send_signal(signal.SIGKILL)
    agent.wait(10)


async def _node(client: HttpClient, name: str) -> Obj | None:
    try:
        return await client.get(NODES, None, name)
    except Exception:
        return None


async def _tainted(client: HttpClient, name: str) -> bool:
    """The node lifecycle controller has called the node unhealthy: an unreachable or not-ready NoSchedule taint
    (the scheduler's TaintToleration filter then keeps new pods off it)."""
    node = await _node(client, name)
    keys = {(t.get("key"), t.get("effect")) for t in taints_of(node)}
    return bool(keys & {(TAINT_UNREACHABLE, "NoSchedule"), (TAINT_NOT_READY, "NoSchedule")})


async def _healthy(client: HttpClient, names: list[str]) -> bool:
    """Every node Ready and without the taints of an unhealthy one."""
    for name in names:
        node = await _node(client, name)
        if node is None or condition(node, "Ready").get("status") != "True":
            return False
        if any(t.get("key") in (TAINT_UNREACHABLE, TAINT_NOT_READY) for t in taints_of(node)):
            return False
    return True


async def _evicted_from(client: HttpClient, name: str) -> bool:
    """Every pod bound to the node that has not ended is being deleted, by the taint manager."""
    try:
        pods, _ = await client.list(PODS, "default")
    except Exception:
        return False
    on_node = [p for p in pods if p["spec"].get("nodeName") == name and phase(p) not in ("Succeeded", "Failed")]
    return all(p["metadata"].get("deletionTimestamp") for p in on_node)


async def _collected(client: HttpClient, name: str) -> bool:
    """No pod bound to the node is left unfinished: the pod GC force-deleted them (a deleted Node's, or the
    terminating pods of an out-of-service one)."""
    try:
        pods, _ = await client.list(PODS, "default")
    except Exception:
        return False
    return not any(p["spec"].get("nodeName") == name and phase(p) not in ("Succeeded", "Failed") for p in pods)


async def chaos_run(
    root: Path, seed: int, *, kinds: tuple[str, ...] = KINDS, events: int = 5, nodes: int = 1
) -> Outcome:
    """One seeded run in `root` on `nodes` nodes; returns what went wrong (nothing, when kjobs keeps its promise)."""
    started = time.monotonic()
    truth = root / "truth"
    truth.mkdir()
    marker = f"{os.getpid()}-{seed}-{root.name}"
    job_plans = plans(seed, long_pods=nodes > 1)
    plan_of = {p.name: p for p in job_plans}
    timeline = schedule(seed, kinds, events)
    rng = random.Random(seed * 31 + 7)
    kills: dict[str, int] = {}
    names = NODE_NAMES[:nodes] if nodes > 1 else (NODE,)
    processes = Cluster(root, names)
    verdict = Verdict()
    agents: dict[str, subprocess.Popen[bytes]] = {}
    marks: dict[str, float] = {}
    try:
        processes.start_server(backoff=BACKOFF)
        await eventually(lambda: processes.kubeconfig.exists(), what="kubeconfig written")
        client = HttpClient(load(processes.kubeconfig))
        try:
            await eventually(lambda: _answers(client), what="API up")
            agents.update(zip(names, await asyncio.gather(*(join(processes, name) for name in names)), strict=True))
            for name in names:
                await eventually(functools.partial(_node_ready, client, name), what=f"node {name} Ready")
            history: dict[str, Obj] = {}  # uid -> the latest version seen (evicted pods are deleted)
            first_terminal: dict[str, Obj] = {}
            terminal_at: dict[str, float] = {}  # when this driver first saw each pod terminal (wall clock)

            removals: dict[str, str] = {}  # uid -> how its removal was learned (`verify`)

            def seen(old: Obj | None, new: Obj | None) -> None:
                pod = new if new is not None else old
                if pod is None:
                    return
                uid = str(pod["metadata"]["uid"])
                if new is None:
                    removals[uid] = "relist" if informer.relisting else "watch"
                if phase(pod) in ("Succeeded", "Failed"):
                    first_terminal.setdefault(uid, pod)
                    terminal_at.setdefault(uid, time.time())
                before = history.get(uid)
                if before is None or int(pod["metadata"]["resourceVersion"]) >= int(
                    before["metadata"]["resourceVersion"]
                ):
                    history[uid] = pod

            orphans: dict[int, float] = {}  # container pid -> when its pod was first seen terminal

            async def poll() -> None:  # the watch misses what happens between a crash and its relist
                while True:
                    with contextlib.suppress(Exception):
                        for pod in (await client.list(PODS, "default"))[0]:
                            seen(None, pod)
                    by_name = {p["metadata"]["name"]: p for p in history.values()}
                    now = time.monotonic()
                    for pid, pod_name in marked_pods(marker).items():
                        ended = by_name.get(pod_name)
                        if ended is None or phase(ended) not in ("Succeeded", "Failed"):
                            continue
                        problem = f"{pod_name}: reported {phase(ended)} {terminated(ended)} while it still runs"
                        if now - orphans.setdefault(pid, now) > 2.0 and problem not in verdict.problems:
                            verdict.problems.append(problem)
                    await asyncio.sleep(0.1)

            poller = asyncio.create_task(poll())

            informer = RecordingInformer(client, PODS, "default")
            informer.add_handler(seen)
            informer.start()
            await informer.synced.wait()
            for plan in job_plans:
                await client.create(JOBS, "default", manifest(truth, plan, marker))

            async def restart_server() -> None:
                processes.start_server(backoff=BACKOFF)
                await eventually(lambda: _answers(client), what="API back")

            async def unhealthy(name: str, kind: str) -> float:
                """Wait for the node to be tainted unhealthy, then for its pods' eviction; returns when the taint
                was seen (a problem, not an exception, when either does not come)."""
                try:
                    await eventually(lambda: _tainted(client, name), timeout=45, what=f"{kind}: {name} tainted")
                    since = time.time()
                    await eventually(
                        lambda: _evicted_from(client, name), timeout=30, what=f"{kind}: {name}'s pods evicted"
                    )
                except AssertionError as exc:
                    verdict.problems.append(str(exc))
                    return time.time()
                return since

            begin = time.monotonic()
            for number, event in enumerate(timeline):
                await asyncio.sleep(max(0.0, begin + event.at - time.monotonic()))
                kind = event.kind
                alive = sorted(agents)
                # a node running pods, if any (a lost or absent node then has pods to evict); one node: the draws
                # of stop 37
                running = {
                    str(p["spec"].get("nodeName"))
                    for p in list(history.values())
                    if phase(p) == "Running" and not p["metadata"].get("deletionTimestamp")
                }
                busy = [name for name in alive if name in running] or alive
                target = rng.choice(busy) if len(alive) > 1 else alive[0]
                marks[f"{number}.{kind}@{target}"] = round(time.monotonic() - started, 1)
                agent = agents[target]
                if kind == "lose":
                    if len(alive) < 2:
                        continue
                    crash_machine(agents.pop(target), processes.root / target)
                    verdict.lost_nodes.add(target)
                    since = await unhealthy(target, kind)
                    # what an admin (or a cloud's node controller) does for a machine that will not come back:
                    # delete its Node (the pod GC collects its pods) or taint it out-of-service (non-graceful node
                    # shutdown: the pod GC force-deletes its terminating pods)
                    deleted = rng.random() < 0.5
                    if deleted:
                        await _kubectl(processes, "delete", "node", target, "--wait=false")
                    else:
                        verdict.out_of_service.add(target)
                        await _kubectl(processes, "taint", "node", target, OUT_OF_SERVICE)
                    kills[kind] = kills.get(kind, 0) + 1
                    then = "node-deleted" if deleted else "out-of-service"
                    kills[then] = kills.get(then, 0) + 1
                    if rng.random() < 0.5:  # the machine stays dead
                        verdict.unschedulable.setdefault(target, []).append((since, float("inf")))
                        continue
                    # the machine is repaired and boots: once the pod GC has collected its pods, its agent starts on
                    # its old directories (dead shims' journals, no container left) and registers the node again
                    try:
                        collected = functools.partial(_collected, client, target)
                        await eventually(collected, timeout=30, what=f"lose: {target}'s pods collected")
                    except AssertionError as exc:
                        verdict.problems.append(str(exc))
                    if not deleted:
                        await _kubectl(processes, "taint", "node", target, OUT_OF_SERVICE.split("=")[0] + "-")
                    verdict.unschedulable.setdefault(target, []).append((since, time.time()))
                    agents[target] = await join(processes, target)
                    kills["reboot"] = kills.get("reboot", 0) + 1
                    continue
                if kind in ("return", "outage"):
                    agents.pop(target)
                    agent.send_signal(signal.SIGKILL)
                    agent.wait(10)
                    since = await unhealthy(target, kind)
                    early = None
                    if kind == "outage":  # the API server (and its node lifecycle controller) killed meanwhile
                        processes.kill_server()
                        if rng.random() < 0.5:  # the agent comes back while the API is down: it retries
                            early = spawn_agent(processes, target)
                            kills["back-in-outage"] = kills.get("back-in-outage", 0) + 1
                        await asyncio.sleep(event.down)
                        await restart_server()
                        if early is None:
                            await asyncio.sleep(1.5)  # three monitor periods of the new controller
                            verdict.check(
                                await _tainted(client, target), f"outage: {target} untainted after a restart while away"
                            )
                    if early is None:
                        await asyncio.sleep(event.down)
                    verdict.unschedulable.setdefault(target, []).append((since, time.time()))
                    agents[target] = await join(processes, target, early)
                    kills[kind] = kills.get(kind, 0) + 1
                    continue
                if kind == "cordon":
                    await _kubectl(processes, "cordon", target)
                    since = time.time()
                    await asyncio.sleep(event.down * 3)
                    verdict.unschedulable.setdefault(target, []).append((since, time.time()))
                    await _kubectl(processes, "uncordon", target)
                    kills[kind] = kills.get(kind, 0) + 1
                    continue
                if kind in ("server", "both"):
                    processes.kill_server()
                if kind == "node":  # the agent and its shims at once, as a crash of kubelet and containerd
                    # stopped first: an agent that outlives its shims a moment reports their containers killed
                    # (137, what a shim's death is), which a busy machine let happen between two kills (seed 303)
                    agent.send_signal(signal.SIGSTOP)
                    for pid in shims_of(agent.pid):
                        os.kill(pid, signal.SIGKILL)
                if kind in ("agent", "both", "node"):
                    agent.send_signal(signal.SIGKILL)
                    agent.wait(10)
                if kind == "shim":
                    shims = shims_of(agent.pid)
                    if not shims:
                        continue
                    os.kill(rng.choice(shims), signal.SIGKILL)
                    verdict.shim_kills.append(time.time())
                if kind in ("evict", "drain"):
                    pods, _ = await client.list(PODS, "default")
                    if kind == "evict":
                        if not await _evict(client, list(pods), rng):
                            continue
                    else:
                        if target in verdict.lost_nodes:
                            verdict.drained_after_loss.add(target)
                        await _kubectl(processes, "drain", target, "--ignore-daemonsets", "--timeout=20s")
                        since = time.time()
                        await asyncio.sleep(event.down)
                        verdict.unschedulable.setdefault(target, []).append((since, time.time()))
                        await _kubectl(processes, "uncordon", target)
                kills[kind] = kills.get(kind, 0) + 1
                if kind in ("server", "agent", "both", "node"):
                    await asyncio.sleep(event.down)
                if kind in ("server", "both"):
                    await restart_server()
                if kind in ("agent", "both", "node"):
                    agents[target] = await join(processes, target)

            marks["events"] = round(time.monotonic() - started, 1)

            async def finished() -> list[Obj] | None:
                jobs = [await client.get(JOBS, "default", p.name) for p in job_plans]
                if not all(terminal_condition(j) and not (j.get("status") or {}).get("active") for j in jobs):
                    return None
                if any(any((j["status"].get("uncountedTerminatedPods") or {}).values()) for j in jobs):
                    return None
                pods, _ = await client.list(PODS, "default")
                if any(TRACKING_FINALIZER in (p["metadata"].get("finalizers") or []) for p in pods):
                    return None
                if any(phase(p) not in ("Succeeded", "Failed") for p in pods):
                    return None
                return jobs

            try:
                jobs = await eventually(finished, timeout=60, what="every Job finished and its pods accounted")
                marks["finished"] = round(time.monotonic() - started, 1)
            except Exception as exc:  # report the state it stopped in as a problem, not a crash of the driver
                verdict.problems.append(f"not finished: {exc}")
                jobs = [await client.get(JOBS, "default", p.name) for p in job_plans]
            if len(names) > 1:  # a node back from NotReady is Ready again and loses the unhealthy node's taints
                try:
                    await eventually(lambda: _healthy(client, sorted(agents)), timeout=20, what="nodes healthy")
                except AssertionError as exc:
                    verdict.problems.append(str(exc))
            await asyncio.sleep(0.5)  # the watch's last events
            await informer.stop()
            poller.cancel()
            existing = {p["metadata"]["uid"] for p in (await client.list(PODS, "default"))[0]}
            for job in jobs:
                uid = job["metadata"]["uid"]
                pods = [p for p in history.values() if p["metadata"]["labels"].get(CONTROLLER_UID_LABEL) == uid]
                verify(
                    plan_of[job["metadata"]["name"]],
                    job,
                    pods,
                    existing,
                    first_terminal,
                    terminal_at,
                    truth,
                    kills,
                    verdict,
                    removals,
                )
        finally:
            await client.close()
    finally:
        processes.stop_all(grace=10)
    deadline = time.monotonic() + 5
    while (left := marked(marker)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    verdict.check(not left, f"container processes left running: {left}")
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    data = root / "data" / "kjobs.db"
    try:
        conn = sqlite3.connect(data)
        try:
            read_back(conn, str(data))
        finally:
            conn.close()
    except Exception as exc:
        verdict.problems.append(f"store unreadable: {exc}")
    seconds = round(time.monotonic() - started, 1)
    return Outcome(seed, timeline, kills, verdict.problems, seconds, verdict.seen, marks)


def _seeds(text: str) -> list[int]:
    result: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        result.extend(range(int(low), int(high or low) + 1))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--events", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=1, help="node agents (2 or 3: the node kinds too)")
    parser.add_argument("--kinds", default=None, help="comma-separated kinds [default: every kind the nodes allow]")
    parser.add_argument("--keep", action="store_true", help="keep each run's directory")
    args = parser.parse_args(argv)
    failures = 0
    totals: dict[str, int] = {}
    ended: dict[str, int] = {}
    for seed in _seeds(args.seeds):
        root = Path(tempfile.mkdtemp(prefix=f"chaos{seed}-"))
        kinds = tuple(args.kinds.split(",")) if args.kinds else MULTI_KINDS if args.nodes > 1 else KINDS
        outcome = asyncio.run(chaos_run(root, seed, kinds=kinds, events=args.events, nodes=args.nodes))
        for kind, n in outcome.kills.items():
            totals[kind] = totals.get(kind, 0) + n
        for how, n in outcome.pods.items():
            ended[how] = ended.get(how, 0) + n
        status = "FAIL" if outcome.problems else "ok"
        print(f"seed {seed}: {status} in {outcome.seconds}s kills={outcome.kills} pods={outcome.pods}", flush=True)
        print(f"    at {outcome.marks}", flush=True)
        for problem in outcome.problems:
            print(f"    {problem}", flush=True)
        if outcome.problems:
            print(f"    kept in {root}; schedule {outcome.events}", flush=True)
        if outcome.problems:
            failures += 1
        elif not args.keep:
            subprocess.run(["rm", "-rf", str(root)], check=False)
    print(f"{failures} failing seeds; disruptions: {totals}; pods: {ended}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
