"""Stop 37's hostile inputs against a real `kjobs up` over HTTPS with the admin client certificate (what kubectl
uses): every served kind's body spoiled at one field path and sent as a create, an update or each patch type,
list and watch parameters at their edges (a watch asked for `timeoutSeconds=9999` is read briefly and hung up
on), hostile paths. Each answer is below 500 (504 allowed), a refusal is a `Status` with its code, no request
takes more than `BOUND` seconds, a refused request leaves the objects no controller touches as they were, and
the server answers `/readyz` afterwards. Fixed seed, bounded (500 examples, about 10 s); docs/api-robustness.md,
"Stop 37"."""

from __future__ import annotations

import base64
import os
import shutil
import ssl
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.test_config_objects import kubectl_on_up
from tests.server.fuzz37_support import (
    FIELD_SELECTORS,
    KINDS,
    LABEL_SELECTORS,
    RAW_NUMBERS,
    Answer,
    Kind,
    check_status,
    encode,
    hostile_json,
    paths_of,
    pointer,
    q,
    replaced,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

BOUND = 10.0
"""Seconds any one request may take over HTTPS (a watch: until its headers)."""

QUIET = {"configmaps", "secrets", "leases", "roles", "rolebindings", "priorityclasses", "storageclasses"}
"""Kinds no controller of `kjobs up` writes to after their creation: a refusal must leave them byte for byte."""


class Https:
    """httpx over the kubeconfig's server, CA and admin client certificate."""

    def __init__(self, config: Path, tmp: Path) -> None:
        kubeconfig = yaml.safe_load(config.read_text())
        cluster = kubeconfig["clusters"][0]["cluster"]
        user = kubeconfig["users"][0]["user"]
        context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        cert, key = tmp / "admin.crt", tmp / "admin.key"
        cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
        key.write_bytes(base64.b64decode(user["client-key-data"]))
        key.chmod(0o600)
        context.load_cert_chain(cert, key)
        self.client = httpx.Client(base_url=cluster["server"], verify=context, timeout=BOUND + 5)

    def send(
        self, method: str, path: str, *, query: bytes = b"", headers: dict[str, str] | None = None, body: bytes = b""
    ) -> Answer:
        url = path + ("?" + query.decode() if query else "")
        start = time.monotonic()
        request = self.client.build_request(method, url, headers=headers or {}, content=body or None)
        request.url = request.url.copy_with(raw_path=url.encode())  # as written: encoded slashes and dots stay
        response = self.client.send(request, stream=True)
        try:
            # a watch that started is hung up on (its first event may be minutes away)
            watching = "watch=true" in url and response.status_code == 200
            chunks = [] if watching else list(response.iter_raw())
        finally:
            response.close()
        answer = Answer(response.status_code, dict(response.headers), b"".join(chunks), time.monotonic() - start)
        return answer


@pytest.fixture(scope="module")
def https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Https]:
    tmp = tmp_path_factory.mktemp("hostile")
    with kubectl_on_up(tmp) as up:
        client = Https(up.config, Path(tempfile.mkdtemp(dir=tmp)))
        for kind in KINDS:
            if kind.plural == "widgets":
                deadline = time.monotonic() + 20
                while client.send("GET", kind.collection()).status != 200 and time.monotonic() < deadline:
                    time.sleep(0.05)
            created = client.send("POST", kind.collection(), body=orjson.dumps(kind.body), headers=_JSON)
            assert created.status == 201, (kind.plural, created.status, created.body)
        yield client
        client.client.close()


_JSON = {"content-type": "application/json"}


def _attempt(
    https: Https, kind: Kind, method: str, path: str, *, query: bytes = b"", headers: dict[str, str], body: bytes
) -> Answer:
    watched = kind.item() if kind.plural in QUIET else None
    before = https.send("GET", watched).body if watched else None
    answer = https.send(method, path, query=query, headers=headers, body=body)
    check_status(answer, method, path)
    assert answer.seconds < BOUND, (method, path, answer.seconds)
    if watched and (answer.status >= 400 or b"dryRun=All" in query):
        assert https.send("GET", watched).body == before, (method, path, answer.status, answer.body[:300])
    if answer.status < 300 and method in ("DELETE", "PUT", "PATCH", "POST") and kind.plural in QUIET:
        https.send("DELETE", kind.item())  # put the seed back as it was
        https.send("POST", kind.collection(), body=orjson.dumps(kind.body), headers=_JSON)
    return answer


@settings(
    max_examples=int(os.environ.get("KJOBS_FUZZ_EXAMPLES", "500")),  # more to explore locally, random seeds
    deadline=None,
    derandomize=not os.environ.get("KJOBS_FUZZ_EXAMPLES"),
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(KINDS),
    shape=st.sampled_from(["create", "update", "merge", "strategic", "apply", "json-patch", "list", "path"]),
    data=st.data(),
)
def test_hostile_requests_over_https(https: Https, kind: Kind, shape: str, data: st.DataObject) -> None:
    body = kind.body
    where = data.draw(st.sampled_from(paths_of(body)), label="where")
    raw = data.draw(st.one_of(st.none(), st.sampled_from(RAW_NUMBERS)), label="raw")
    value = "@RAW@" if raw is not None else data.draw(hostile_json(), label="value")
    query = q({"dryRun": "All"}) if data.draw(st.booleans(), label="dryRun") else b""
    if shape == "create":
        spoiled = replaced(body, where, value)
        method, path, ctype, content = "POST", kind.collection(), "application/json", encode(spoiled, raw)
    elif shape == "update":
        method, path, ctype, content = "PUT", kind.item(), "application/json", encode(replaced(body, where, value), raw)
    elif shape in ("merge", "strategic", "apply"):
        ctype = {
            "merge": "application/merge-patch+json",
            "strategic": "application/strategic-merge-patch+json",
            "apply": "application/apply-patch+yaml",
        }[shape]
        method, path, content = "PATCH", kind.item(), encode(replaced(body, where, value), raw)
        if shape == "apply":
            query = q({"fieldManager": "fz", "force": "true"})
    elif shape == "json-patch":
        op = data.draw(st.sampled_from(["add", "replace", "test", "move", "copy", "remove"]), label="op")
        patch = [{"op": op, "path": pointer(where), "from": "/metadata/labels", "value": value}]
        method, path, ctype, content = "PATCH", kind.item(), "application/json-patch+json", encode(patch, raw)
    elif shape == "list":
        params = [
            ("labelSelector", data.draw(LABEL_SELECTORS, label="labels")),
            ("fieldSelector", data.draw(FIELD_SELECTORS, label="fields")),
            ("limit", data.draw(st.sampled_from(["1", "-1", "0", "x"]), label="limit")),
            ("timeoutSeconds", data.draw(st.sampled_from(["9999", "-1", "1.5", "9223372036854775808"]), label="t")),
            ("allowWatchBookmarks", "true"),
            ("sendInitialEvents", data.draw(st.sampled_from(["true", "false"]), label="sie")),
            ("resourceVersionMatch", data.draw(st.sampled_from(["", "NotOlderThan", "Exact"]), label="rvm")),
            ("resourceVersion", data.draw(st.sampled_from(["", "0", "1", "99999999"]), label="rv")),
        ]
        if data.draw(st.booleans(), label="watch"):
            params.append(("watch", "true"))
        method, path, ctype, content, query = "GET", kind.collection(), "application/json", b"", q(params)
    else:
        piece = data.draw(
            st.sampled_from(["%2F", "..", "%2e%2e", "a%2Fb", "x" * 300, "A..B", "%C3%A9", "%00", "-a", "kube-system"]),
            label="piece",
        )
        parts = kind.item().split("/")
        parts[data.draw(st.integers(1, len(parts) - 1), label="at")] = piece
        method, path, ctype, content = (
            data.draw(st.sampled_from(["GET", "DELETE"]), label="m"),
            "/".join(parts),
            "",
            b"",
        )
    _attempt(https, kind, method, path, query=query, headers={"content-type": ctype} if ctype else {}, body=content)
    assert https.send("GET", "/readyz").status == 200


def test_the_seeds_are_still_there_and_the_server_serves(https: Https) -> None:
    for kind in KINDS:
        if kind.plural in QUIET:
            assert https.send("GET", kind.item()).status == 200, kind.plural
    answer = https.send("GET", "/api/v1/namespaces/default/configmaps", query=b"limit=1")
    assert answer.status == 200 and orjson.loads(answer.body)["kind"] == "ConfigMapList"
    assert isinstance(orjson.loads(https.send("GET", "/version").body), dict)
