"""`kjobs up` on a damaged data directory: it refuses, naming the damaged objects and how to recover; with
`--repair` it starts without them."""

from __future__ import annotations

import os
import signal
import sqlite3
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from click.testing import CliRunner

from kjobs.cli import main
from kjobs.store import DB_FILE, open_store

BROKEN = "UPDATE objects SET data = CAST(replace(data, 'busybox', 'busyboy') AS BLOB) WHERE name = 'b'"


def _start_up(args: list[str], home: Path) -> subprocess.Popen[str]:
    """`kjobs up` with `args` as a process, its output piped, with `home` as its home directory."""
    return subprocess.Popen(
        [sys.executable, "-m", "kjobs", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HOME": str(home)},
    )


def _damaged(data: Path) -> Path:
    """A data directory whose pod default/b was altered on disk; default/a is intact."""
    with open_store(str(data)) as store:
        for name in ("a", "b"):
            obj = {"metadata": {"name": name, "namespace": "default"}, "spec": {"containers": [{"image": "busybox"}]}}
            store.create("pods", "default", name, obj)
    conn = sqlite3.connect(data / DB_FILE)
    with conn:
        conn.execute(BROKEN)
    conn.close()
    return data / DB_FILE


def test_up_refuses_a_damaged_store_naming_the_object_and_the_way_out(tmp_path: Path) -> None:
    data = tmp_path / "data"
    db = _damaged(data)
    result = CliRunner().invoke(main, ["up", "--port", "0", "--data-dir", str(data), "--nodes", "0"])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)  # a message, not a traceback
    assert result.output.splitlines() == [
        f"Error: cannot open the data file {db}: it is damaged",
        "  pods default/b: its checksum does not match (the row was altered)",
        "To start without the objects named (they are deleted: controllers recreate what they own, such as a Job's"
        f" pods; the rest is lost), run: kjobs up --data-dir {data} --repair",
        f"Or restore {db} from a copy.",
    ]


def test_up_refuses_a_file_that_is_not_a_database_and_says_restore(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / DB_FILE).write_bytes(b"SQLite format 3\0" + b"\xff" * 4080)
    result = CliRunner().invoke(main, ["up", "--port", "0", "--data-dir", str(data), "--nodes", "0"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0] == f"Error: cannot open the data file {data / DB_FILE}: it is damaged"
    assert lines[-1].startswith(f"It cannot be repaired in place: restore {data / DB_FILE} from a copy")


def test_up_refuses_a_data_file_truncated_to_nothing(tmp_path: Path) -> None:
    """An emptied kjobs.db (a disk that filled, `> kjobs.db`): before, `kjobs up` started an empty cluster over it."""
    data = tmp_path / "data"
    _damaged(data).write_bytes(b"")
    result = CliRunner().invoke(main, ["up", "--port", "0", "--data-dir", str(data), "--nodes", "0"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Error: cannot open the data file {data / DB_FILE}: it is damaged",
        "  the file: it is empty (0 bytes): it was truncated, and the objects it held are gone",
        f"It cannot be repaired in place: restore {data / DB_FILE} from a copy (or recover rows with sqlite3's"
        " .recover).",
    ]
    assert (data / DB_FILE).stat().st_size == 0


@pytest.mark.e2e
def test_up_repair_starts_without_the_damaged_objects(tmp_path: Path) -> None:
    data, config = tmp_path / "data", tmp_path / "kc.yaml"
    _damaged(data)
    args = ["up", "--port", "0", "--data-dir", str(data), "--kubeconfig", str(config), "--nodes", "0", "--repair"]
    proc = _start_up(args, tmp_path)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == f"export KUBECONFIG={config}\n"
        url = yaml.safe_load(config.read_text())["clusters"][0]["cluster"]["server"]
        tls = ssl.create_default_context(cafile=str(data / "pki" / "ca.crt"))
        tls.load_cert_chain(str(data / "pki" / "admin.crt"), str(data / "pki" / "admin.key"))
        pods = httpx.get(f"{url}/api/v1/namespaces/default/pods", verify=tls).json()["items"]
        assert [p["metadata"]["name"] for p in pods] == ["a"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        assert proc.stderr.readline() == (
            f"repair of {data / DB_FILE}: deleted pods default/b: its checksum does not match (the row was altered)\n"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_up_refuses_a_store_of_a_newer_format_naming_the_file_and_its_marker_and_leaves_it(tmp_path: Path) -> None:
    """A user back on this release after a newer one changed the file's format (its own `user_version`): kjobs up
    says so and exits 1, offering no --repair, and the file is left byte for byte (docs/upgrade41.md; --repair is
    refused too: tests/store/test_integrity.py)."""
    from kjobs.store.integrity import FORMAT

    data = tmp_path / "data"
    db = _damaged(data)
    newer = FORMAT + 0x100
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE objects SET data = CAST(replace(data, 'busyboy', 'busybox') AS BLOB) WHERE name = 'b'")
        conn.execute(f"PRAGMA user_version = {newer}")
    conn.close()
    before = db.read_bytes()
    result = CliRunner().invoke(main, ["up", "--port", "0", "--data-dir", str(data), "--nodes", "0"])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output.splitlines() == [
        f"Error: cannot open the data directory {data}: cannot open the data file {db}: its format marker"
        f" (PRAGMA user_version) is {newer} ({newer:#x}), not the {FORMAT} ({FORMAT:#x}) this kjobs reads: a newer"
        " kjobs wrote it (or it is not a kjobs file); run the kjobs that wrote it, or a newer one"
    ]
    assert db.read_bytes() == before


PEM_KEY = (
    "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIH7c0Xl4qZ3y2JmJ1xXk0m3fYc5V9Q4bq9s1dJg0a1bC\n"
    "-----END PRIVATE KEY-----\n"
)
"""A ServiceAccount signing key in another format than this kjobs writes (a PEM key, as kubeadm's `sa.key` is)."""


@pytest.mark.e2e
def test_up_refuses_a_signing_key_it_cannot_read_instead_of_replacing_it(tmp_path: Path) -> None:
    """A data directory whose `pki/sa.key` another release wrote in a format this one does not read: kjobs up exits
    1 naming the key, and leaves it (a new key over it would void every ServiceAccount token, silently)."""
    data = tmp_path / "data"
    (data / "pki").mkdir(parents=True)
    key = data / "pki" / "sa.key"
    key.write_text(PEM_KEY)
    args = ["up", "--port", "0", "--data-dir", str(data), "--kubeconfig", str(tmp_path / "kc.yaml"), "--nodes", "0"]
    proc = _start_up(args, tmp_path)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # it started over the key: the failure this test is about
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    assert err.splitlines() == [
        f"Error: the ServiceAccount signing key {key} is not the 64 or more hex digits this kjobs reads (a newer kjobs"
        " wrote it, or it is damaged): restore it, or remove it to sign with a new key (every ServiceAccount token"
        " issued so far is then refused)"
    ]
    assert key.read_text() == PEM_KEY
