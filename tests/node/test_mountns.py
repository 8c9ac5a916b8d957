"""A container's mount namespace (`kjobs.node.mountns`), run as the runtime runs it: real processes that see their
volumes at their mountPaths, while this machine's filesystem is left as it was."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from kjobs.node import mountns
from kjobs.node.process_runtime import mounting_enabled

pytestmark = pytest.mark.skipif(not mounting_enabled(), reason="no mount namespace can be made here")

MOUNTNS = os.path.abspath(mountns.__file__)


def run_in(
    staging: Path, binds: list[dict[str, object]], script: str, cwd: str = "/", prefix: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    plan = json.dumps({"root": str(staging), "cwd": cwd, "binds": binds})
    argv = [*prefix, sys.executable, "-I", "-S", MOUNTNS, plan, "--", "sh", "-c", script]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture
def staging(tmp_path: Path) -> Path:
    path = tmp_path / "mnt"
    path.mkdir()
    return path


def test_a_volume_is_seen_at_its_mount_path_and_the_host_is_untouched(tmp_path: Path, staging: Path) -> None:
    volume = tmp_path / "vol"
    volume.mkdir()
    (volume / "data.txt").write_text("foo\n")
    target = f"/kjobs-test-{os.getpid()}/input"
    done = run_in(
        staging,
        [{"source": str(volume), "target": target, "readOnly": False}],
        "pwd; cat data.txt; echo bar > out.txt; ls /usr/bin/env",
        cwd=target,
    )
    assert (done.returncode, done.stdout.splitlines()) == (0, [target, "foo", "/usr/bin/env"]), done.stderr
    assert (volume / "out.txt").read_text() == "bar\n"
    assert not os.path.exists(os.path.dirname(target))
    assert os.listdir(staging) == []


def test_a_mount_under_an_existing_directory_shadows_it_without_writing_to_it(tmp_path: Path, staging: Path) -> None:
    volume = tmp_path / "vol"
    volume.mkdir()
    (volume / "level").write_text("3")
    host = tmp_path / "host-dir"
    host.mkdir()
    (host / "kept.txt").write_text("kept")
    target = f"{host}/app/conf"
    done = run_in(
        staging, [{"source": str(volume), "target": target, "readOnly": False}], f"cat {target}/level {host}/kept.txt"
    )
    assert (done.returncode, done.stdout) == (0, "3kept"), done.stderr
    assert os.listdir(host) == ["kept.txt"]


def test_a_read_only_mount_refuses_writes(tmp_path: Path, staging: Path) -> None:
    volume = tmp_path / "vol"
    volume.mkdir()
    done = run_in(staging, [{"source": str(volume), "target": "/etc/app", "readOnly": True}], "echo x > /etc/app/new")
    assert done.returncode != 0
    assert "Read-only file system" in done.stderr
    assert os.listdir(volume) == []


def test_a_file_is_bound_at_a_file_mount_path(tmp_path: Path, staging: Path) -> None:
    source = tmp_path / "settings.conf"
    source.write_text("level=3\n")
    done = run_in(staging, [{"source": str(source), "target": "/etc/kjobs-settings.conf", "readOnly": False}],
                  "cat /etc/kjobs-settings.conf")  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "level=3\n"), done.stderr
    assert not os.path.exists("/etc/kjobs-settings.conf")


def test_a_symlinked_mount_path_is_resolved_inside_the_view(tmp_path: Path, staging: Path) -> None:
    volume = tmp_path / "vol"
    volume.mkdir()
    (volume / "token").write_text("t")
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    os.symlink(str(tmp_path / "real"), link_dir / "run")
    (tmp_path / "real").mkdir()
    target = f"{link_dir}/run/secrets"
    done = run_in(
        staging, [{"source": str(volume), "target": target, "readOnly": True}], f"cat {tmp_path}/real/secrets/token"
    )
    assert (done.returncode, done.stdout) == (0, "t"), done.stderr
    assert os.listdir(tmp_path / "real") == []


@pytest.mark.skipif(os.getuid() != 0 or shutil.which("setpriv") is None, reason="needs root to start as another user")
def test_a_user_that_is_not_root_stays_itself_in_its_user_namespace() -> None:
    top = Path(tempfile.mkdtemp())  # pytest's tmp_path is root's alone: another user cannot reach into it
    try:
        top.chmod(0o755)
        volume, staging = top / "vol", top / "mnt"
        volume.mkdir(mode=0o777)
        staging.mkdir(mode=0o777)
        volume.chmod(0o777)
        (volume / "f").write_text("hello")
        prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        done = run_in(
            staging,
            [{"source": str(volume), "target": "/input", "readOnly": False}],
            "id -u; id -g; cat /input/f; echo; touch /input/w && echo wrote",
            prefix=prefix,
        )
        assert (done.returncode, done.stdout.splitlines()) == (0, ["65534", "65534", "hello", "wrote"]), done.stderr
        assert (volume / "w").stat().st_uid == 65534
    finally:
        shutil.rmtree(top)


def test_a_missing_command_is_a_start_error(staging: Path) -> None:
    plan = json.dumps({"root": str(staging), "cwd": "/", "binds": []})
    done = subprocess.run(
        [sys.executable, "-I", "-S", MOUNTNS, plan, "--", "no-such-command-kjobs"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 128
    assert done.stderr == (
        'failed to start container process: exec: "no-such-command-kjobs": executable file not found in $PATH\n'
    )


def test_a_missing_working_directory_is_a_start_error(staging: Path) -> None:
    done = run_in(staging, [], "true", cwd="/no/such/dir")
    assert done.returncode == 128
    assert 'chdir to cwd ("/no/such/dir") set in config.json failed: No such file or directory' in done.stderr


def test_a_rewritten_volume_is_seen_through_its_mount_and_a_sub_path_keeps_the_old_file(
    tmp_path: Path, staging: Path
) -> None:
    """The kubelet's remount swaps `..data` (atomic_writer.go): a container that mounts the whole volume reads the
    new contents; one that mounts a `subPath` of it keeps the file it was started with (upstream: "A container
    using a ConfigMap as a subPath volume mount will not receive ConfigMap updates")."""
    from kjobs.node.volumesetup import write_atomic

    volume = tmp_path / "vol"
    write_atomic(volume, {"mode": (b"slow", 0o644)})
    signal = tmp_path / "signal"
    signal.mkdir()
    binds = [
        {"source": str(volume), "target": "/etc/app", "readOnly": True},
        {"source": str(volume / "mode"), "target": "/etc/one", "readOnly": True},
        {"source": str(signal), "target": "/signal", "readOnly": True},
    ]
    plan = json.dumps({"root": str(staging), "cwd": "/", "binds": binds})
    script = "cat /etc/one; echo; while [ ! -e /signal/go ]; do sleep 0.02; done; cat /etc/app/mode; echo; cat /etc/one"
    argv = [sys.executable, "-I", "-S", MOUNTNS, plan, "--", "sh", "-c", script]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        assert child.stdout.readline() == "slow\n"  # started, its binds made
        assert write_atomic(volume, {"mode": (b"fast", 0o644)})
        (signal / "go").touch()
        out, err = child.communicate(timeout=30)
    assert (child.returncode, out.splitlines()) == (0, ["fast", "slow"]), err
