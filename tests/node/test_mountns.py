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
from typing import Any

import pytest

from kjobs.node import mountns
from kjobs.node.process_runtime import hidden_from_pods, mounting_enabled

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
        reach = subprocess.run([*prefix, sys.executable, "-I", "-S", "-c", ""], capture_output=True, text=True)
        if reach.returncode != 0:
            # e.g. pyenv's 3.12 and 3.13 under /root (mode 0700): their libpython is out of that user's reach
            pytest.skip(f"user 65534 cannot run {sys.executable}: {reach.stderr.strip()}")
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


def _hiding(staging: Path, hide: list[str], keep: list[str], script: str, cwd: str = "/", binds: object = ()) -> Any:
    plan = json.dumps({"root": str(staging), "cwd": cwd, "hide": hide, "keep": keep, "binds": list(binds)})  # type: ignore[call-overload]
    argv = [sys.executable, "-I", "-S", MOUNTNS, plan, "--", "sh", "-c", script]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)


def test_hidden_paths_are_empty_and_read_only_but_the_kept_directory_stays_reachable(
    tmp_path: Path, staging: Path
) -> None:
    """kjobs' data directory (keys, database) and the kubeconfig it wrote are covered; the pod's own directory
    under them is bound back, writable (docs/security.md)."""
    data = tmp_path / "data"
    (data / "pki").mkdir(parents=True)
    (data / "pki" / "sa.key").write_text("secret")
    own = data / "nodes" / "n" / "pods" / "mine"
    other = data / "nodes" / "n" / "pods" / "other"
    own.mkdir(parents=True)
    other.mkdir(parents=True)
    (other / "token").write_text("theirs")
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text("client-key-data: x\n")
    script = (
        f"cat {data}/pki/sa.key; echo [$(ls {data})]; echo [$(ls {data}/nodes/n/pods)]; cat {other}/token;"
        f" echo [$(cat {kubeconfig})]; echo x > {kubeconfig} || echo refused; touch {data}/new || echo refused;"
        " pwd; echo mine > made.txt"
    )
    done = _hiding(staging, [str(data), str(kubeconfig)], [str(own)], script, cwd=str(own))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[nodes]", "[mine]", "[]", "refused", "refused", str(own)]
    assert "sa.key: No such file or directory" in done.stderr
    assert (own / "made.txt").read_text() == "mine\n"
    listing = _hiding(staging, [str(kubeconfig)], [], "ls -a /")
    assert listing.returncode == 0 and "..kjobs-hidden" not in listing.stdout, listing.stdout
    assert kubeconfig.read_text() == "client-key-data: x\n"
    assert sorted(os.listdir(data)) == ["nodes", "pki"]


def test_a_volume_under_a_hidden_directory_is_still_mounted(tmp_path: Path, staging: Path) -> None:
    """A volume's source lives under the hidden node directory (the kubelet's pod volume dirs); it is bound from
    the host, and a mountPath inside a hidden directory is made on a tmpfs of its own."""
    data = tmp_path / "data"
    volume = data / "pods" / "mine" / "volumes" / "cfg"
    volume.mkdir(parents=True)
    (volume / "level").write_text("3")
    binds = [
        {"source": str(volume), "target": "/etc/app", "readOnly": True},
        {"source": str(volume), "target": f"{data}/inside", "readOnly": True},
    ]
    done = _hiding(staging, [str(data)], [], f"cat /etc/app/level {data}/inside/level; ls {data}", binds=binds)
    assert (done.returncode, done.stdout) == (0, "33inside\n"), done.stderr


def test_a_hidden_path_that_does_not_exist_or_holds_another_is_skipped(tmp_path: Path, staging: Path) -> None:
    data = tmp_path / "data"
    (data / "nodes").mkdir(parents=True)
    hide = [str(data / "nodes"), str(data), str(tmp_path / "missing")]
    done = _hiding(staging, hide, [], f"echo [$(ls {data})]")
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr


def test_hidden_from_pods_resolves_symlinks_and_never_hides_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".local" / "share" / "kjobs").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(home / ".local" / "share" / "kjobs")
    monkeypatch.setenv("HOME", str(home))
    root = home / ".local" / "share" / "kjobs" / "nodes" / "n"
    got = hidden_from_pods(root, [str(link), str(home), str(tmp_path), "/", str(link)])
    assert got == [str(root), str(home / ".local" / "share" / "kjobs")]


def test_a_volume_the_pod_asks_for_is_bound_over_a_hidden_path(tmp_path: Path, staging: Path) -> None:
    """Hiding comes before the volumes: a hostPath volume of the kubeconfig (a pod that is meant to have it) is
    seen at its mountPath, even the hidden path itself."""
    kubeconfig = tmp_path / "kc.yaml"
    kubeconfig.write_text("admin")
    binds = [{"source": str(kubeconfig), "target": str(kubeconfig), "readOnly": True}]
    done = _hiding(staging, [str(kubeconfig)], [], f"cat {kubeconfig}", binds=binds)
    assert (done.returncode, done.stdout) == (0, "admin"), done.stderr


def test_the_nodes_entries_in_the_pods_directory_are_read_only_while_the_directory_stays_writable(
    tmp_path: Path, staging: Path
) -> None:
    """A container cannot swap its termination-message file, hosts file or volume contents for a symlink that the
    node, later writing or reading there as the user, would follow out of the container's view."""
    pod = tmp_path / "data" / "pods" / "mine"
    (pod / "containers" / "main").mkdir(parents=True)
    (pod / "containers" / "main" / "abcd1234").write_text("")
    (pod / "volumes").mkdir()
    (pod / "etc-hosts").write_text("127.0.0.1 localhost\n")
    protect = [str(pod / name) for name in ("volumes", "containers", "etc-hosts", "missing")]
    plan = json.dumps(
        {
            "root": str(staging),
            "cwd": str(pod),
            "hide": [str(tmp_path / "data")],
            "keep": [str(pod)],
            "protect": protect,
            "binds": [],
        }
    )
    script = (
        "rm containers/main/abcd1234 || echo kept; ln -s /etc/passwd volumes/..data || echo refused;"
        " echo x > etc-hosts || echo refused; echo scratch > mine.txt && cat mine.txt"
    )
    argv = [sys.executable, "-I", "-S", MOUNTNS, plan, "--", "sh", "-c", script]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout.splitlines() == ["kept", "refused", "refused", "scratch"], done.stderr
    assert (pod / "etc-hosts").read_text() == "127.0.0.1 localhost\n"
    assert os.listdir(pod / "volumes") == []


def test_a_sub_path_is_opened_without_following_a_symlink_swapped_in_after_the_check(
    tmp_path: Path, staging: Path
) -> None:
    """The node checks a subPath stays in its volume, then the mount namespace binds it: a container that swaps a
    directory of its volume for a symlink in between must not get the symlink's target (CVE-2017-1002101,
    CVE-2021-25741; the kubelet's `doSafeOpen`). The bind walks the volume one component at a time instead."""
    volume = tmp_path / "vol"
    (volume / "ok" / "deeper").mkdir(parents=True)
    (volume / "ok" / "deeper" / "file").write_text("inside")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "file").write_text("sa.key")
    (volume / "swapped").symlink_to(secret)  # as if made after the node's check
    good = [{"source": str(volume / "ok" / "deeper"), "target": "/mnt/sub", "readOnly": False, "within": str(volume)}]
    done = run_in(staging, good, "cat /mnt/sub/file")
    assert (done.returncode, done.stdout) == (0, "inside"), done.stderr
    bad = [{"source": str(volume / "swapped"), "target": "/mnt/sub", "readOnly": False, "within": str(volume)}]
    done = run_in(staging, bad, "cat /mnt/sub/file")
    assert done.returncode == 128 and done.stdout == ""
    assert done.stderr == f"failed to start container process: unexpected symlink found {volume}/swapped\n"
    outside = [{"source": str(secret), "target": "/mnt/sub", "readOnly": False, "within": str(volume)}]
    done = run_in(staging, outside, "cat /mnt/sub/file")
    assert done.returncode == 128 and "not within volume path" in done.stderr


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
