"""The client side of the agent protocol (see PROTOCOL.md): one agent process, many callers.

:class:`AgentProcess` starts the agent and sends requests from any thread; each
request carries the caller's thread number, so that the agent runs one caller
thread's calls on one agent thread, and a request id, which its answer repeats.

Answers are read by the callers themselves (leader and followers): a caller
waiting for an answer takes the *reader role* if nobody holds it and reads the
agent's stdout, handing every answer it finds to the caller it belongs to, until
its own arrives; then it gives the role up and the next waiting caller takes it.
A lone caller thus reads its own answer with no thread hand-off, and with plain
blocking reads: two system calls per round trip (write, read), which is most of
its cost.

Every wait has a limit, kept by a watchdog thread that looks at the outstanding
calls every few tens of milliseconds.  A call that does not answer in time gets
the agent (its whole process group) killed, which ends every blocked read with
EOF, and raises :class:`~acl_conformance.adapters.base.CallTimeout` (the suite
reports TIMEOUT); an agent that dies (EOF on its stdout: a crash, a signal, an exit)
makes every waiting and later call raise :class:`AgentDied`, naming the call, the
exit status or signal, and the end of the agent's stderr (the suite reports
CRASH).  :meth:`AgentProcess.close` ends the agent (a ``quit`` request, then
SIGKILL), reaps it and joins the watchdog.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import itertools
import os
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import IO

from acl_conformance.adapters.base import CallTimeout

from .process import AgentDied
from .process import AgentProc
from .process import describe_exit
from .process import file_tail
from .process import kill_group
from .process import reap
from .wire import ProtocolError
from .wire import Reply
from .wire import parse_answers

PROTOCOL_VERSION = 2
STDERR_TAIL = 1500
"""Characters of the agent's stderr quoted when it dies."""
READ_CHUNK = 1 << 20

PIPE_SIZE = 1 << 20
"""What the agent's two pipes are grown to where the system allows (Linux's F_SETPIPE_SZ,
up to ``/proc/sys/fs/pipe-max-size``; 1 MiB by default): a 16 MiB payload then crosses
in 16 wake-ups of each side instead of 256 (64 KiB, the default), about a third less
time on a busy machine.  Where it is refused the pipes keep their size."""
WATCH_TICK = 0.05
"""Seconds between two looks of the watchdog at the outstanding calls."""


class _Slot:
    """Where one answer lands; ``failed`` when the agent is gone before it answered."""

    __slots__ = ("failed", "reply")

    def __init__(self) -> None:
        self.reply: Reply | None = None
        self.failed = False

    @property
    def settled(self) -> bool:
        return self.reply is not None or self.failed


def _watch(ref: weakref.ReferenceType[AgentProcess], stop: threading.Event) -> None:
    """The watchdog thread of one agent (it holds the client only weakly, so that a client
    dropped without close() can still be collected, and its finaliser stop this thread)."""
    while not stop.wait(WATCH_TICK):
        client = ref()
        if client is None or not client.check_deadlines():
            return
        del client


class AgentProcess:
    """One running agent and the protocol spoken with it."""

    def __init__(
        self,
        argv: Sequence[str],
        env: Mapping[str, str] | None = None,
        timeout: float = 15.0,
        quit_timeout: float = 10.0,
        spawn: Callable[[IO[bytes]], AgentProc] | None = None,
    ) -> None:
        """Start ``argv`` with ``env``; or, with ``spawn``, take the process that
        ``spawn(stderr)`` returns (a forked agent whose stderr is that file)."""
        self.argv = list(argv)
        self.timeout = float(timeout)
        self.quit_timeout = float(quit_timeout)
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the agent
        self.proc: AgentProc
        try:
            if spawn is not None:
                self.proc = spawn(self._stderr)
            else:
                self.proc = subprocess.Popen(
                    self.argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=self._stderr,
                    env=dict(env) if env is not None else None,
                    bufsize=0,
                    close_fds=True,
                    start_new_session=True,
                )
        except OSError as exc:
            self._stderr.close()
            raise AgentDied(f"cannot start the agent {self.argv[0]}: {exc}") from exc
        except BaseException:
            self._stderr.close()
            raise
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._fd = self.proc.stdout.fileno()
        for fd in (self._stdin.fileno(), self._fd):
            _grow_pipe(fd)
        self._buf = bytearray()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Slot] = {}
        self._wlock = threading.Lock()
        self._role = threading.Lock()
        """Held by the caller that reads the agent's stdout."""
        self._cond = threading.Condition(threading.Lock())
        """Callers that wait while another one reads sleep here."""
        self._waiters = 0
        self._byes: collections.deque[int] = collections.deque()
        self._death: str | None = None
        """Why the agent is gone (set once)."""
        self._timed_out: str | None = None
        self._late: object = ""
        """Set when this side killed the agent because a call did not answer."""
        self._closing = False
        self._closed = False
        self.last_call: object = "(none yet)"
        self._deadlines: dict[int, tuple[float, object]] = {}
        """Outstanding calls: request id -> (deadline, the call)."""
        self._kill_lock = threading.Lock()
        self._stop = threading.Event()
        self._finalizer = weakref.finalize(self, reap, self.proc, self._stop)
        self._watchdog = threading.Thread(
            target=_watch,
            args=(weakref.ref(self), self._stop),
            name=f"acl-agent-watchdog-{self.proc.pid}",
            daemon=True,
        )
        self._watchdog.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self._death is None and self.proc.poll() is None

    # -- reading answers (whoever holds the reader role) ------------------------------------
    def _parse(self, data: bytes) -> bool:
        """Hand out every whole answer in what was left over and ``data`` (what was just
        read); True if one went to another caller."""
        if self._buf:  # an answer's start came with the last read: the two go together
            self._buf += data
            answers, used = parse_answers(self._buf)
            del self._buf[:used]
        else:  # the usual case, one whole answer: no copy into the buffer
            answers, used = parse_answers(data)
            if used < len(data):
                self._buf += data[used:]
        others = False
        for rid, reply in answers:
            slot = self._pending.pop(rid, None)
            if slot is not None:
                slot.reply = reply
                others = True
        return others

    def _pump(self, mine: _Slot) -> None:
        """Read answers until ``mine`` is settled or the agent is gone (the watchdog kills a
        late agent, which ends the read with EOF)."""
        while mine.reply is None and not mine.failed:
            try:
                data = os.read(self._fd, READ_CHUNK)
            except OSError:
                data = b""
            if not data:
                self._on_eof()
                return
            if self._parse(data) and self._waiters:
                with self._cond:
                    self._cond.notify_all()

    def check_deadlines(self) -> bool:
        """Kill the agent if an outstanding call is past its deadline; False once it is gone."""
        if self._death is not None:
            return False
        now = time.monotonic()
        late = [what for deadline, what in list(self._deadlines.values()) if deadline <= now]
        if late:
            self._kill_after_timeout(late[0])
            return False
        return True

    def _try_pump(self, slot: _Slot) -> bool:
        """Take the reader's role if no other thread has it, read answers until ``slot``
        settles, hand the role back and wake the waiters: False if another thread reads."""
        if not self._role.acquire(blocking=False):
            return False
        try:
            self._pump(slot)
        finally:
            self._role.release()
            if self._waiters:
                with self._cond:
                    self._cond.notify_all()
        return True

    def _await(self, slot: _Slot, deadline: float) -> None:
        while not slot.settled:
            if self._death is not None:
                return
            if not self._try_pump(slot):
                with self._cond:
                    self._waiters += 1
                    try:
                        if not slot.settled and self._role.locked():
                            self._cond.wait(min(max(deadline - time.monotonic(), 0.0), 0.05))
                    finally:
                        self._waiters -= 1
            if time.monotonic() >= deadline and not slot.settled:
                return

    def _on_eof(self) -> None:
        if self._death is None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self._timed_out is not None:
                self._death = self._timed_out
            elif self._closing:
                self._death = "the agent was closed"
            else:
                self._death = (
                    f"the agent (pid {self.proc.pid}) {describe_exit(self.proc.returncode)}"
                    f"{self._stderr_tail()}"
                )
        self._fail_pending()

    def _fail_pending(self) -> None:
        """Settle every pending call as failed and wake the threads waiting for one (the
        agent is gone: no answer will come)."""
        for rid in list(self._pending):
            slot = self._pending.pop(rid, None)
            if slot is not None:
                slot.failed = True
        with self._cond:
            self._cond.notify_all()

    def _stderr_tail(self) -> str:
        text = file_tail(self._stderr, STDERR_TAIL)
        return f"; its stderr ends: {' | '.join(text.splitlines()[-12:])}" if text else ""

    # -- requests ---------------------------------------------------------------------------
    def _raise_dead(self, label: object) -> None:
        """CallTimeout if this side killed a late agent, else AgentDied; one line each."""
        death = self._death or "the agent is gone"
        if self._timed_out is not None:
            late = "" if str(self._late) == str(label) else f" ({self._late} was late)"
            raise CallTimeout(f"{death}{late}")
        last = (
            "" if str(self.last_call) == str(label) else f"; the last call sent: {self.last_call}"
        )
        raise AgentDied(f"{death}, during {label}{last}")

    def _write(self, data: bytes, payload: bytes | None) -> None:
        try:
            self._stdin.write(data)
            if payload:
                view = memoryview(payload)
                while view:
                    n = self._stdin.write(view)
                    view = view[n or 0 :]
        except (BrokenPipeError, OSError, ValueError):
            pass  # the agent is gone: reading its stdout finds EOF and fails the call

    def call(
        self,
        thread: int,
        command: str,
        args: Sequence[int | str] = (),
        payload: bytes | None = None,
        label: object = "",
    ) -> Reply:
        """Send one request and wait for its answer (at most ``timeout`` seconds)."""
        label = label or command
        if self._death is not None:
            self._raise_dead(label)
        rid = next(self._ids)
        slot = _Slot()
        self._pending[rid] = slot
        # <id> <thread> <command> [<arg> ...] [#<payload length>]\n (PROTOCOL.md)
        line = f"{rid} {thread} {command}"
        if args:
            line += " " + " ".join(map(str, args))
        if payload is not None:
            line += f" #{len(payload)}"
        data = (line + "\n").encode()
        deadline = time.monotonic() + self.timeout
        self._deadlines[rid] = (deadline, label)
        with self._wlock:
            self.last_call = label
            while self._byes:
                self._write(f"0 {self._byes.popleft()} bye\n".encode(), None)
            if payload is not None and len(payload) < 65536:
                self._write(data + payload, None)
            else:
                self._write(data, payload)
        try:
            self._try_pump(slot)  # the usual case: nobody else is reading
            if not slot.settled:
                self._await(slot, deadline)
        finally:
            self._deadlines.pop(rid, None)
        if not slot.settled:
            self._pending.pop(rid, None)
            if self._death is None:
                self._kill_after_timeout(label)
        reply = slot.reply
        if reply is None:
            self._raise_dead(label)
        assert reply is not None
        if reply.code == -1:
            raise ProtocolError(
                f"{label}: the agent rejected the request: {reply.payload.decode()}"
            )
        return reply

    def _kill_after_timeout(self, label: object) -> None:
        with self._kill_lock:
            if self._timed_out is not None or self._death is not None:
                return
            self._late = label
            self._timed_out = (
                f"no answer within {self.timeout:g} s: the agent (pid {self.proc.pid}) was killed"
            )
            if self.proc.poll() is None:
                kill_group(self.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._death = self._timed_out
        self._fail_pending()

    def bye(self, thread: int) -> None:
        """The caller thread ``thread`` has ended, and its agent thread may end too (sent
        with the next request; safe to call from a finaliser)."""
        self._byes.append(thread)

    # -- the end --------------------------------------------------------------------------
    def close(self) -> None:
        """End the agent (a ``quit`` request, then SIGKILL) and reap it.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._closing = True
        if self._death is None and self.proc.poll() is None:
            with self._wlock:
                self._write(b"0 0 quit\n", None)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=self.quit_timeout)
        if self.proc.poll() is None:
            kill_group(self.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._stop.set()
        if self._watchdog is not threading.current_thread():
            self._watchdog.join(timeout=10)
        if self._death is None:
            self._death = "the agent was closed"
        for rid in list(self._pending):
            slot = self._pending.pop(rid, None)
            if slot is not None:
                slot.failed = True
        for f in (self._stdin, self.proc.stdout):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        self._stderr.close()
        self._finalizer.detach()

    def disown(self) -> None:
        """Drop this client without ending its agent (in a child made by fork: the agent is
        the parent's, and the finaliser must not kill it)."""
        self._finalizer.detach()


def _grow_pipe(fd: int) -> None:
    """Grow pipe ``fd`` to :data:`PIPE_SIZE` if the system lets this process (a user past
    its pipe-buffer quota is refused; elsewhere than Linux there is no such call)."""
    setter = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setter is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, setter, PIPE_SIZE)
