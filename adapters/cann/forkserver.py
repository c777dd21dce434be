"""Fresh agents by ``fork``: an agent started once per option set forks a copy on request.

Starting an agent costs an ``exec``, loading the backend and registering the fixture
variables (17 MiB of initial bytes written by the agent and copied by the backend).  With
a fresh agent per Hypothesis example that is paid some thousand times a run.  An agent
started with ``--fork-server=<fd>`` (see ``PROTOCOL.md``) does its start-up once, then
forks a child per request: the child shares the server's pages copy-on-write, so it
starts with everything done and nothing copied, in the state of an agent that has just
started (the server makes no ACL call).

:class:`ForkServer` runs one such server; :meth:`ForkServer.spawn` returns a
:class:`ForkedChild`, which stands in for :class:`subprocess.Popen` inside
:class:`~acl_conformance.adapters.cann.client.AgentProcess` (``pid``, ``stdin``,
``stdout``, ``poll``, ``wait``, ``kill``, ``returncode``).  The server reaps its children
and reports their wait status; a kill goes through a pidfd, so it never reaches a process
that took over a recycled pid.

Only for backends that start no thread before their first call: a child of a process
with threads has only the thread that forked.  The bundled C double qualifies; the pool
uses a fork server for it alone, unless told otherwise.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from collections.abc import Sequence
from typing import IO

from .process import EXIT_UNKNOWN
from .process import AgentDied
from .process import describe_exit

SPAWN_TIMEOUT = 30.0
"""Seconds a fork may take, the server's own start-up included."""


class ForkServer:
    """One agent running ``--fork-server``, and the children it forked."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.argv = list(argv)
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
        try:
            self.proc = subprocess.Popen(
                [*self.argv, f"--fork-server={child.fileno()}"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                env=dict(env) if env is not None else None,
                pass_fds=(child.fileno(),),
                close_fds=True,
                start_new_session=True,
            )
        except OSError as exc:
            parent.close()
            self._stderr.close()
            raise AgentDied(f"cannot start the agent {self.argv[0]}: {exc}") from exc
        finally:
            child.close()
        self._sock = parent
        self._cond = threading.Condition()
        self._replies: dict[int, tuple[str, int]] = {}
        self._exits: dict[int, int] = {}
        """pid -> wait status, for children that ended (a few bytes per example)."""
        self._live = 0
        self._retired = False
        self._dead: str | None = None
        self._tags = itertools.count(1)
        self._send = threading.Lock()
        self._reader = threading.Thread(
            target=self._read, name=f"acl-fork-server-{self.proc.pid}", daemon=True
        )
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self._dead is None and not self._retired and self.proc.poll() is None

    # -- the server's messages --------------------------------------------------------------
    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(256)
            except OSError:
                data = b""
            if not data:
                break
            words = data.decode(errors="replace").split()
            with self._cond:
                if len(words) == 3 and words[0] in ("pid", "error"):
                    self._replies[int(words[1])] = (words[0], int(words[2]))
                elif len(words) == 3 and words[0] == "exit":
                    self._exits[int(words[1])] = int(words[2])
                    self._live -= 1
                self._cond.notify_all()
                if self._retired and self._live <= 0:
                    break
        if self._retired:  # its last child has ended: the server may go
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        with self._cond:
            if self._dead is None:
                self._dead = (
                    f"the fork server (pid {self.proc.pid}) {describe_exit(self.proc.returncode)}"
                    f"{self._stderr_tail()}"
                )
            self._cond.notify_all()
        with contextlib.suppress(OSError):
            self._sock.close()

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace").strip()
        except (OSError, ValueError):
            return ""
        return f"; its stderr ends: {' | '.join(text.splitlines()[-6:])}" if text else ""

    # -- children ---------------------------------------------------------------------------
    def spawn(self, stderr: IO[bytes], timeout: float = SPAWN_TIMEOUT) -> ForkedChild:
        """A new agent whose stderr is ``stderr`` (AgentDied if the server cannot fork)."""
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        tag = next(self._tags)
        try:
            with self._send:
                if not self.alive:
                    raise OSError("the fork server is not running")
                with self._cond:
                    self._live += 1
                socket.send_fds(
                    self._sock, [f"spawn {tag}".encode()], [in_r, out_w, stderr.fileno()]
                )
        except OSError as exc:
            for fd in (in_w, out_r):
                os.close(fd)
            raise AgentDied(f"the fork server (pid {self.pid}) cannot fork: {exc}") from None
        finally:
            os.close(in_r)
            os.close(out_w)
        deadline = time.monotonic() + timeout
        with self._cond:
            while tag not in self._replies and self._dead is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            reply_type, value = self._replies.pop(tag, ("error", -1))
            if reply_type != "pid":
                self._live -= 1
        if reply_type != "pid":
            for fd in (in_w, out_r):
                os.close(fd)
            why = self._dead or ("no answer" if value < 0 else f"fork failed: {os.strerror(value)}")
            raise AgentDied(f"the fork server (pid {self.pid}) gave no agent: {why}")
        return ForkedChild(
            self, value, os.fdopen(in_w, "wb", buffering=0), os.fdopen(out_r, "rb", buffering=0)
        )

    @property
    def dead(self) -> str | None:
        """Why the server is gone (None while it runs)."""
        return self._dead

    def status(self, pid: int, timeout: float | None) -> int | None:
        """The wait status of child ``pid`` once reported (None past ``timeout``); after the
        server died, :data:`EXIT_UNKNOWN` once the child is gone."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while pid not in self._exits and self._dead is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self._cond.wait(left)
            return self._exits.get(pid)  # kept: several threads may wait for one child

    # -- the end ----------------------------------------------------------------------------
    def retire(self) -> None:
        """Fork no more; the server ends once every child it forked has ended (so that
        their exit statuses are still reported)."""
        with self._cond:
            self._retired = True
            done = self._live <= 0
        if done:
            self.close()

    def close(self) -> None:
        """End the server now (EOF on its socket), and reap it."""
        with self._cond:
            self._retired = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._reader is not threading.current_thread():
            self._reader.join(timeout=10)
        self._stderr.close()


class ForkedChild:
    """A child of a :class:`ForkServer`, with the part of Popen's interface the agent
    client uses."""

    def __init__(self, server: ForkServer, pid: int, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.server = server
        self.pid = pid
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout
        self.returncode: int | None = None
        self._lock = threading.Lock()
        """Guards ``returncode`` and ``_pidfd`` (the client's threads share this object)."""
        self._pidfd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self._pidfd = os.pidfd_open(pid)

    def _settle(self, status: int | None) -> int | None:
        with self._lock:
            if self.returncode is None:
                if status is None and self.server.dead is not None and self._gone_locked():
                    self.returncode = EXIT_UNKNOWN
                elif status is not None:
                    self.returncode = (
                        EXIT_UNKNOWN
                        if status == EXIT_UNKNOWN
                        else os.waitstatus_to_exitcode(status)
                    )
            if self.returncode is not None and self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
            return self.returncode

    def _gone(self, timeout: float = 0.0) -> bool:
        with self._lock:
            return self.returncode is not None or self._gone_locked(timeout)

    def _gone_locked(self, timeout: float = 0.0) -> bool:
        """The process has ended (asked once the server that reaps it is gone)."""
        if self._pidfd is None:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return True
            return False
        return bool(select.select([self._pidfd], [], [], timeout)[0])

    def poll(self) -> int | None:
        if self.returncode is None:
            self._settle(self.server.status(self.pid, 0))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            deadline = None if timeout is None else time.monotonic() + timeout
            status = self.server.status(self.pid, timeout)
            if status is None and self.server.dead is not None:
                # Nobody reaps it for us now: wait for it to end, in slices (kill() may
                # need the lock meanwhile).
                while not self._gone(0.05):
                    if deadline is not None and time.monotonic() >= deadline:
                        break
                else:
                    status = EXIT_UNKNOWN
            self._settle(status)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.server.argv, timeout or 0.0)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        """SIGKILL (through the pidfd where there is one: never a recycled pid)."""
        with self._lock:
            if self.returncode is not None:
                return
            with contextlib.suppress(ProcessLookupError, OSError):
                if self._pidfd is not None:
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                else:
                    os.kill(self.pid, signal.SIGKILL)


__all__ = ["SPAWN_TIMEOUT", "ForkServer", "ForkedChild"]
