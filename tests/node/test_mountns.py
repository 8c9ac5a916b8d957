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
