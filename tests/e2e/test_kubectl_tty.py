"""`kubectl run -it`, `attach -it` and `debug -it` against `kjobs up` with the real kubectl driven from a terminal
(a pseudo-terminal this test holds): a container with `tty: true` runs on a terminal of its own, a shell there
answers what is typed, a resize of kubectl's terminal reaches the container's, `kubectl logs` shows what it wrote,
and `-t` to a container without a terminal gets kubectl's own warning. Before, the container said `not a tty`."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import struct
import subprocess
import termios
import time
from collections.abc import Iterator

import pytest

from tests.e2e.test_config_objects import Up, kubectl_on_up

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    with kubectl_on_up(tmp_path_factory.mktemp("tty")) as kubectl:
        yield kubectl


def _size(fd: int, width: int, height: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))


class Terminal:
    """kubectl run on a pseudo-terminal, as from a user's terminal: what it shows, and keys typed into it."""

    def __init__(self, up: Up, *args: str, width: int = 80, height: int = 24) -> None:
        self.master, child = os.openpty()
        _size(child, width, height)
        env = {"HOME": str(up.home), "KUBECONFIG": str(up.config), "PATH": "/usr/local/bin:/usr/bin:/bin"}
        env["TERM"] = "dumb"
        self.proc = subprocess.Popen(
            ["kubectl", *args],
            stdin=child,
            stdout=child,
            stderr=child,
            env=env,
            cwd=up.home,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),  # its controlling terminal: SIGWINCH
        )
        os.close(child)
        self.shown = b""

    def expect(self, pattern: bytes, timeout: float = 20) -> bytes:
        """What kubectl showed until `pattern` (searched in all it showed)."""
        deadline = time.monotonic() + timeout
        os.set_blocking(self.master, False)
        while not re.search(pattern, self.shown):
            assert time.monotonic() < deadline, f"no {pattern!r} in {self.shown!r}"
            try:
                self.shown += os.read(self.master, 4096)
            except BlockingIOError:
                time.sleep(0.02)
            except OSError:  # kubectl exited and its terminal closed
                assert re.search(pattern, self.shown), f"no {pattern!r} in {self.shown!r}"
        return self.shown

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def resize(self, width: int, height: int) -> None:
        _size(self.master, width, height)

    def wait(self, timeout: float = 20) -> int:
        try:
            return self.proc.wait(timeout)
        finally:
            os.set_blocking(self.master, False)
            try:
                while chunk := os.read(self.master, 4096):
                    self.shown += chunk
            except OSError:
                pass
            os.close(self.master)


def test_kubectl_run_it_gives_the_container_a_terminal(up: Up) -> None:
    terminal = Terminal(up, "run", "-it", "--rm", "tt", "--image=busybox", "--restart=Never", "--", "sh", "-c", "tty")
    assert terminal.wait() == 0, terminal.shown
    assert re.search(rb"/dev/pts/\d+", terminal.shown), terminal.shown
    assert b"not a tty" not in terminal.shown


def test_a_shell_run_with_kubectl_run_it_answers_resizes_and_exits(up: Up) -> None:
    terminal = Terminal(up, "run", "-it", "--rm", "shell", "--image=busybox", "--restart=Never", "--", "sh")
    terminal.expect(rb"If you don't see a command prompt, try pressing enter")
    terminal.type(b"echo $((6*7))\r")
    # the shell's first prompt shows before its answer when it started after kubectl attached (its container
    # starts in a mount namespace, for the ServiceAccount token volume), else it was printed before the attach
    terminal.expect(rb"\r\n([#$] )?42\r\n")
    terminal.type(b"stty size\r")
    terminal.expect(rb"\r\n24 80\r\n")  # kubectl's terminal's size, sent when the attach began
    terminal.resize(132, 50)
    for attempt in range(1, 20):  # kubectl sends it on SIGWINCH; it then reaches the container's terminal
        terminal.type(b"stty size\r")
        if re.search(rb"\r\n50 132\r\n", terminal.expect(rb"(\r\n\d+ \d+\r\n.*){%d}" % (attempt + 1), 5)):
            break
    assert re.search(rb"\r\n50 132\r\n", terminal.shown), terminal.shown
    terminal.type(b"exit\r")
    assert terminal.wait() == 0, terminal.shown
    assert b'pod "shell" deleted' in terminal.shown


def test_kubectl_logs_of_a_tty_container_shows_its_output(up: Up) -> None:
    pod = """apiVersion: v1
kind: Pod
metadata:
  name: logged
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    tty: true
    command: ["sh", "-c", "tty; echo to-stderr >&2"]
"""
    up.ok("apply", "-f", "-", stdin=pod)
    up.ok("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/logged", "--timeout=30s")
    assert re.fullmatch(r"/dev/pts/\d+\r?\nto-stderr\r?", up.ok("logs", "logged")), up.ok("logs", "logged")


def test_attach_t_to_a_container_without_a_terminal_gets_kubectls_warning(up: Up) -> None:
    pod = """apiVersion: v1
kind: Pod
metadata:
  name: plain
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    stdin: true
    command: ["sh", "-c", "read line; tty; echo got-$line"]
"""
    up.ok("apply", "-f", "-", stdin=pod)
    up.ok("wait", "--for=condition=Ready", "pod/plain", "--timeout=30s")
    terminal = Terminal(up, "attach", "-it", "plain")
    terminal.expect(rb"error: Unable to use a TTY - container main did not allocate one")
    terminal.type(b"hello\n")  # kept by kubectl's terminal until kubectl reads it, once its streams are up
    terminal.expect(rb"not a tty\r\ngot-hello")
    assert terminal.wait() == 0, terminal.shown


def test_kubectl_debug_it_runs_an_interactive_shell_on_a_terminal(up: Up) -> None:
    pod = """apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sleep", "300"]
"""
    up.ok("apply", "-f", "-", stdin=pod)
    up.ok("wait", "--for=condition=Ready", "pod/web", "--timeout=30s")
    terminal = Terminal(up, "debug", "-it", "web", "--profile=general", "--image=busybox", "-c", "dbg", "--", "sh")
    terminal.expect(rb"If you don't see a command prompt, try pressing enter")
    terminal.type(b"tty\r")
    terminal.expect(rb"\r\n/dev/pts/\d+\r\n")
    terminal.type(b"exit 0\r")
    assert terminal.wait() == 0, terminal.shown
