"""Crash-exact failure accounting (issue #13): a Job counts each pod once, for what it really was, when `kjobs up`
or its node agent is killed with SIGKILL while pods run and restarted after their processes have ended.

An Indexed Job of 20 (parallelism 5) runs pods that look up their attempt number, write the exit code a seeded
table gives for (index, attempt) to a ground-truth file, sleep 0.5 s and exit with it; the pod failure policy
ignores exit 2 and counts exit 1. The killed process's shim keeps the running containers and their exits
(`kjobs.node.shim`), the restarted agent adopts them (`kjobs.node.adoption`): the Job's succeeded and failed
counts and every index's attempts must equal the ground truth, and no index may succeed twice.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from pathlib import Path

import pytest

from kjobs.api.types import Obj
from kjobs.client.http import HttpClient
from kjobs.client.kubeconfig import load
from kjobs.client.resources import JOBS
from tests.e2e.support import eventually, job_manifest, terminal_condition, terminated
from tests.e2e.test_crash_safety import Processes, _answers, _index, _node_ready, _pods, processes

__all__ = ["processes"]  # the fixture, imported for the tests below

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SEED = 13
COMPLETIONS, PARALLELISM = 20, 5


def exit_codes(seed: int) -> dict[tuple[int, int], int]:
    """The seeded table: first attempts exit 0, 1 (counted) or 2 (ignored); a second attempt that follows an
    ignored failure may fail once more; every later attempt succeeds."""
    rng = random.Random(seed)
    table = {}
    for index in range(COMPLETIONS):
        table[index, 0] = rng.choice((0, 0, 1, 2))
        table[index, 1] = rng.choice((0, 0, 0, 1))
    return table


def command(truth: Path, table: dict[tuple[int, int], int]) -> str:
    """The pod's script (`$$` is a literal `$` in a container command): its attempt is the number of ground-truth
    files of its index (an index runs one pod at a time), its exit code the table's."""
    cases = " ".join(f"{i}.{n}) c={code};;" for (i, n), code in sorted(table.items()))
    return (
        f"i=$$JOB_COMPLETION_INDEX; n=0; while [ -e {truth}/$$i.$$n ]; do n=$$((n+1)); done; "
        f"case $$i.$$n in {cases} *) c=0;; esac; "
        f"echo $$c > {truth}/$$i.$$n.tmp; mv {truth}/$$i.$$n.tmp {truth}/$$i.$$n; "
        f"sleep 0.5; touch {truth}/$$i.$$n.end; exit $$c"
    )


def manifest(truth: Path) -> Obj:
    return job_manifest(
        "exact",
        command(truth, exit_codes(SEED)),
        completionMode="Indexed",
        completions=COMPLETIONS,
        parallelism=PARALLELISM,
        backoffLimit=100,
        podFailurePolicy={
            "rules": [
                {"action": "Ignore", "onExitCodes": {"containerName": "main", "operator": "In", "values": [2]}},
                {"action": "Count", "onExitCodes": {"containerName": "main", "operator": "In", "values": [1]}},
            ]
        },
    )


def ground_truth(truth: Path) -> dict[int, list[int]]:
    """Per index, the exit code of each attempt, in order."""
    result: dict[int, list[int]] = {}
    for path in truth.iterdir():
        parts = path.name.split(".")
        if len(parts) == 2:
            result.setdefault(int(parts[0]), []).append(int(parts[1]))
    return {i: [int((truth / f"{i}.{n}").read_text()) for n in sorted(ns)] for i, ns in result.items()}


def running_attempts(truth: Path) -> list[str]:
    """Attempts that started and have not ended."""
    names = {p.name for p in truth.iterdir()}
    return [name for name in names if name.count(".") == 1 and f"{name}.end" not in names]


@pytest.mark.parametrize("victim", ["kjobs up", "kjobs node join"])
def test_a_job_counts_exactly_across_a_sigkill(tmp_path: Path, processes: Processes, victim: str) -> None:
    truth = tmp_path / "truth"
    truth.mkdir()
    embedded = victim == "kjobs up"
    node = "kjobs-node" if embedded else "crash-node"

    async def scenario() -> None:
        processes.start_server(nodes=1 if embedded else 0, backoff=0.1)
        await eventually(lambda: processes.kubeconfig.exists(), what="kubeconfig written")
        client = HttpClient(load(processes.kubeconfig))
        try:
            await eventually(lambda: _answers(client), what="API up")
            agent = None if embedded else processes.join_node()
            await eventually(lambda: _node_ready(client, node), what="node Ready")
            job = await client.create(JOBS, "default", manifest(truth))
            await eventually(
                lambda: len(list(truth.iterdir())) >= 2 * PARALLELISM and len(running_attempts(truth)) >= 2,
                timeout=30,
                what="pods running, some ended",
            )
            if agent is None:
                processes.kill_server()
            else:
                agent.send_signal(signal.SIGKILL)
                agent.wait(10)
            assert running_attempts(truth), "pods run when the process is killed"
            deadline = time.monotonic() + 10
            while running_attempts(truth):  # the pods end while nothing watches them
                assert time.monotonic() < deadline, "the pods never ended"
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)  # from the .end file to the process's exit
            if agent is None:
                processes.start_server(nodes=1, backoff=0.1)
                await eventually(lambda: _answers(client), what="API back")
            else:
                processes.join_node()

            async def finished() -> Obj | None:
                current: Obj = await client.get(JOBS, "default", "exact")
                return current if terminal_condition(current) else None

            done: Obj = await eventually(finished, timeout=40, what="job finished")
            assert terminal_condition(done)["type"] == "Complete"
            expected = ground_truth(truth)
            assert sorted(expected) == list(range(COMPLETIONS))
            for index, codes in expected.items():
                assert codes.count(0) == 1 and codes[-1] == 0, f"index {index} succeeded once, last: {codes}"
            pods = await _pods(client, job)
            seen: dict[int, list[int]] = {}
            for pod in pods:
                state = terminated(pod)
                assert state.get("reason") != "ContainerStatusUnknown", pod["metadata"]["name"]
                seen.setdefault(_index(pod), []).append(int(state["exitCode"]))
            assert {i: sorted(c) for i, c in seen.items()} == {i: sorted(c) for i, c in expected.items()}
            status = done["status"]
            all_codes = [code for codes in expected.values() for code in codes]
            assert status.get("succeeded") == COMPLETIONS == all_codes.count(0)
            assert status.get("failed", 0) == all_codes.count(1)  # exit 2 is ignored, never counted
        finally:
            await client.close()

    try:
        asyncio.run(asyncio.wait_for(scenario(), 75))
    finally:
        print(processes.logs())
