"""What a test's author reads when a wait fails: a wait that can no longer succeed (a finished Job, an ended pod)
fails at once, not after its timeout, and every failed wait says what the Job and its pods are (conditions with
reasons, counts, each container's exit code); on virtual time, how far the clock ran. Errors of the API come
without the helper's internals or an unrelated earlier exception attached."""

from __future__ import annotations

import time

import pytest

from kjobs.api.errors import ApiError
from kjobs.api.types import Obj
from kjobs.testing import KjobsCluster, WaitFailed

BOTH = [
    pytest.param("process", marks=pytest.mark.kjobs(runtime="process"), id="process"),
    pytest.param("simulated", marks=pytest.mark.kjobs(runtime="simulated"), id="simulated"),
]


def job(name: str, command: str, **spec: object) -> Obj:
    template = {
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox", "command": ["sh", "-c", command]}],
        }
    }
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"template": template, **spec}}


@pytest.mark.parametrize("runtime", BOTH)
def test_waiting_for_complete_on_a_failed_job_fails_at_once_and_says_why(
    kjobs_cluster: KjobsCluster, runtime: str
) -> None:
    kjobs_cluster.apply(job("oops", "exit 7", backoffLimit=1))
    wall = time.monotonic()
    with pytest.raises(WaitFailed) as failed:
        kjobs_cluster.wait_for("job", "oops", "Complete", timeout=60)
    assert time.monotonic() - wall < 20  # not the 60 s timeout: a failed Job never completes
    message = str(failed.value)
    assert message.startswith("Job oops is Failed and never changes again, so it will not reach 'Complete': ")
    assert "Failed BackoffLimitExceeded (Job has reached the specified backoff limit); active 0, ready 0" in message
    assert "FailureTarget" not in message  # the interim condition, same reason: said once
    assert message.count("main exited 7 (Error)") == 2  # each pod, with its container's exit code
    assert isinstance(failed.value, TimeoutError)  # what code expecting the timeout catches


@pytest.mark.kjobs(runtime="simulated")
def test_a_running_pod_of_a_finished_job_is_not_waited_for(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply(job("quick", "echo done"))
    kjobs_cluster.wait_for("job", "quick", "Complete")
    with pytest.raises(WaitFailed, match=r"no pod of job quick is 'phase=Running', and the Job is Complete: .*"):
        kjobs_cluster.pod_of("quick", timeout=60)
    pod = kjobs_cluster.pod_of("quick", "phase=Succeeded")
    name = pod["metadata"]["name"]
    with pytest.raises(WaitFailed, match=rf"pod {name} ended and will not reach 'phase=Running': .*exited 0"):
        kjobs_cluster.wait_for("pod", name, "phase=Running", timeout=60)


@pytest.mark.kjobs(runtime="simulated")
def test_a_job_that_never_ends_times_out_saying_how_far_virtual_time_ran(kjobs_cluster: KjobsCluster) -> None:
    kjobs_cluster.apply(job("forever", "sleep 1000000000"))
    with pytest.raises(TimeoutError) as timed_out:
        kjobs_cluster.wait_for("job", "forever", "Complete", timeout=0.3)
    message = str(timed_out.value)
    assert not isinstance(timed_out.value, WaitFailed)
    assert message.startswith("Job forever did not reach 'Complete' in 0.3s (virtual time ran ")
    assert "no condition yet; active 1, ready 1, succeeded 0, failed 0" in message
    assert "Running: main running" in message


def test_a_wait_for_a_job_that_is_not_there_says_so(kjobs_cluster: KjobsCluster) -> None:
    with pytest.raises(TimeoutError, match=r"^Job nope did not reach 'Complete' in 0\.1s: there is no such object$"):
        kjobs_cluster.wait_for("job", "nope", "Complete", timeout=0.1)
    with pytest.raises(TimeoutError, match=r"no pod of job nope reached 'phase=Running' in 0\.1s: .*no such object"):
        kjobs_cluster.pod_of("nope", timeout=0.1)


def test_an_invalid_manifest_is_the_api_servers_answer_alone(kjobs_cluster: KjobsCluster) -> None:
    invalid = job("broken", "true")
    del invalid["spec"]["template"]["spec"]["restartPolicy"]
    with pytest.raises(ApiError, match=r'Job\.batch "broken" is invalid: .*restartPolicy: Required') as info:
        kjobs_cluster.apply(invalid)
    # not shown "during handling of" the 404 of apply's first read, nor from the cluster thread's frames
    assert info.value.__context__ is None or info.value.__suppress_context__
    assert "kjobs/testing/background.py" not in "".join(str(entry.path) for entry in info.traceback)
