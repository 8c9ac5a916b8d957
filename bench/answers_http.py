"""Record what `kjobs up` answers to a scripted sequence of requests, to compare two source trees byte for byte.

A speed change must not change an answer (issue #15). This starts `kjobs up --nodes 0` of the tree on PYTHONPATH
(plain HTTP on loopback), sends a fixed sequence — pod creates, status patches as a node agent sends them and with
values of every wrong type, merge patches, updates, a Job whose pods the scheduler finds no node for — and writes
each answer (status, headers but the date and the audit id, body) and a watch stream of every pod event, with the
values that differ from run to run (uids, times, resourceVersions, generated names) replaced by placeholders
numbered in order of first appearance, so that two runs of one tree give the same file.

Run: PYTHONPATH=TREE/src python bench/answers_http.py OUT ; then diff two OUTs (docs/performance.md, stop 37).
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

PODS = "/api/v1/namespaces/default/pods"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"

_UIDS = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NAMES = re.compile(rb"kube-api-access-[a-z0-9]{5}|(?<=answers-job-)[0-9]+-[a-z0-9]{5}\b")
_TIMES = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
# up to 12 between the key and the digits: in the object a 422 quotes in its message the quotes are escaped twice
_REVISIONS = re.compile(rb"(resourceVersion[\\\":=]{1,12})\d+")


def normalized(raw: bytes, seen: dict[bytes, bytes]) -> bytes:
    """`raw` with uids and generated names numbered in order of first appearance, every time `<time>` and every
    resourceVersion `<rv>` (two runs write at other moments and in another interleaving with the controllers)."""

    def placeholder(match: re.Match[bytes]) -> bytes:
        value = match.group(0)
        if value not in seen:
            seen[value] = b"<%d>" % len(seen)
        return seen[value]

    raw = _NAMES.sub(placeholder, _UIDS.sub(placeholder, raw))
    return _REVISIONS.sub(rb"\1<rv>", _TIMES.sub(b"<time>", raw))


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "answers"}},
        "spec": {
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "10m"}}}],
            "nodeName": "nowhere",
        },
    }


def status(**container: Any) -> dict[str, Any]:
    """A status patch as the node agent sends it, with `container` over its one container status."""
    state = {"terminated": {"exitCode": 0, "reason": "Completed", "containerID": "sim://1"}}
    return {
        "status": {
            "$setElementOrder/conditions": [{"type": "Ready"}, {"type": "PodScheduled"}],
            "conditions": [{"type": "Ready", "status": "False", "lastProbeTime": None, "reason": "PodCompleted"}],
            "phase": "Succeeded",
            "podIP": "127.0.0.1",
            "podIPs": [{"ip": "127.0.0.1"}],
            "containerStatuses": [
                {
                    "name": "c",
                    "state": state,
                    "lastState": {},
                    "ready": False,
                    "restartCount": 0,
                    "image": "busybox",
                    "imageID": "",
                    "started": False,
                    **container,
                }
            ],
        }
    }


WRONG: list[tuple[str, Any]] = [
    ("restartCount", "1"),
    ("restartCount", 2.0),
    ("restartCount", 1.5),
    ("restartCount", 2**31),
    ("restartCount", True),
    ("ready", "yes"),
    ("image", 5),
    ("state", "running"),
    ("state", {"terminated": {"exitCode": "1"}}),
    ("allocatedResources", {"cpu": "lots"}),
    ("allocatedResources", {"cpu": 1}),
    ("volumeMounts", {"name": "x"}),
    ("unknownField", 1),
]


def script(http: httpx.Client, out: list[bytes]) -> None:
    def record(label: str, response: httpx.Response) -> None:
        headers = sorted(
            (k, v) for k, v in response.headers.items() if k.lower() not in ("date", "audit-id", "content-length")
        )
        out.append(f"## {label}: {response.status_code} {headers}\n".encode() + response.content + b"\n")

    record("create", http.post(PODS, json=pod("answers-pod")))
    url = f"{PODS}/answers-pod/status"
    for validation in ("", "?fieldValidation=Strict", "?fieldValidation=Ignore"):
        record(
            f"status {validation}",
            http.patch(url + validation, content=orjson.dumps(status()), headers={"Content-Type": SMP}),
        )
        for key, value in WRONG:
            body = orjson.dumps(status(**{key: value}))
            record(
                f"smp {key}={value!r} {validation}",
                http.patch(url + validation, content=body, headers={"Content-Type": SMP}),
            )
            merge = orjson.dumps({"status": {"containerStatuses": [{"name": "c", key: value}]}})
            merged = http.patch(url + validation, content=merge, headers={"Content-Type": MERGE})
            record(f"merge {key}={value!r} {validation}", merged)
    current = http.get(f"{PODS}/answers-pod").json()
    current["status"]["containerStatuses"][0]["restartCount"] = "3"
    record("put mistyped", http.put(f"{PODS}/answers-pod/status", json=current))
    labels = b'{"metadata":{"labels":{"x":"1"}}}'
    record("pod spec patch", http.patch(f"{PODS}/answers-pod", content=labels, headers={"Content-Type": SMP}))
    for name in ("answers-a", "answers-b"):
        body = pod(name)
        del body["spec"]["nodeName"]  # the scheduler's: no node, so it says why
        record(f"create {name}", http.post(PODS, json=body))
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "answers-job"},
        "spec": {
            "completions": 3,
            "parallelism": 3,
            "completionMode": "Indexed",
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}},
        },
    }
    record("create job", http.post("/apis/batch/v1/namespaces/default/jobs", json=job))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the three pods created and found unschedulable
        pods = http.get(PODS, params={"labelSelector": "job-name=answers-job"}).json()["items"]
        if len(pods) == 3 and all((p.get("status") or {}).get("conditions") for p in pods):
            break
        time.sleep(0.1)
    time.sleep(1.0)  # let the scheduler's and the Job controller's writes settle
    listed = http.get(PODS).json()
    listed["items"].sort(key=lambda p: p["metadata"]["name"])
    out.append(b"## list\n" + orjson.dumps(listed, option=orjson.OPT_SORT_KEYS) + b"\n")
    events = http.get(PODS, params={"watch": "1", "resourceVersion": "0", "timeoutSeconds": "1"}).content
    lines = sorted(events.splitlines(), key=lambda line: orjson.loads(line)["object"]["metadata"]["name"])
    out.append(b"## watch\n" + b"\n".join(lines) + b"\n")


def main() -> None:
    target = Path(sys.argv[1])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="kjobs-answers-") as tmp:
        argv = [sys.executable, "-m", "kjobs", "up", "--nodes", "0", "--insecure-http-loopback", "--port", str(port),
                "--data-dir", f"{tmp}/data", "--kubeconfig", f"{tmp}/kubeconfig"]  # fmt: skip
        log = Path(tmp) / "up.log"
        with log.open("wb") as sink:
            proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        if http.get("/readyz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError(log.read_text(errors="replace"))
                    time.sleep(0.1)
                out: list[bytes] = []
                script(http, out)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    seen: dict[bytes, bytes] = {}
    target.write_bytes(b"".join(normalized(chunk, seen) for chunk in out))


if __name__ == "__main__":
    main()
