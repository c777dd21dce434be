"""Warm spare agents: the next adapter of an option set finds its agent started already.

With ``isolation=example`` the suite starts a fresh adapter for every Hypothesis example
and shrink step, so the start of an agent (exec, loading the backend, registering the
fixture variables) would be paid a thousand times per run; under the default ``reset``
fresh agents are rarer (after a crash, a timeout or a failed reset, for a test that asks
for a pristine backend, for a recheck on fresh agents and after a recovery), but they
are then wanted at once.  Two things make it cheap:

- for a backend that may be forked (``AgentSpec.fork``: the bundled double), the agent
  starts once per spec as a fork server (:mod:`.forkserver`) and every agent after that is
  a fork of it: nothing to load, register or copy;
- :data:`SPARES` keeps one agent per :class:`AgentSpec` started ahead: taking it starts the
  next one on a background thread, whose start-up then overlaps with the test that runs
  meanwhile.

A spare is only ever handed to an adapter whose :class:`AgentSpec` is equal to the one it
was started with: the same command, the same environment, the same time limits, and the
same agent file (device, inode, size and modification time, looked at before and after
the start), so a spare of another option set, or of a build replaced since, is never
used.  A spare is never used twice: the pool hands it out and forgets it.

Clean-up: at most :data:`SPARE_LIMIT` spares and :data:`FORK_SERVER_LIMIT` fork servers
are kept (the oldest goes first; a fork server stops forking and ends once its last child
has); the ``atexit`` hook closes the waiting spares (``quit``, then SIGKILL) and the fork
servers, which covers pytest-xdist workers too (they exit normally).  A process that dies
without running ``atexit`` leaves nothing behind either: its spares read EOF on stdin and
quit, and so do its fork servers on their socket.  A child made by ``fork`` forgets the
parent's spares and servers without touching them.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import threading
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from .client import AgentProcess
from .forkserver import ForkServer
from .process import AgentDied

SPARE_LIMIT = 2
"""Spares kept at most, over every option set (one per option set is what a run needs:
under pytest-xdist each worker is a process with its own pool)."""
FORK_SERVER_LIMIT = 4
"""Fork servers kept at most, over every option set."""


def _identity(path: str) -> tuple[int, int, int, int]:
    """What tells one build of the agent file from another (zeros if it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0, 0, 0)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class AgentSpec:
    """Everything that decides what an agent process is: equal specs, interchangeable agents."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    timeout: float
    quit_timeout: float
    build: tuple[int, int, int, int]
    """:func:`_identity` of ``argv[0]`` when the spec was made."""
    fork: bool = False
    """Agents are forks of a fork server (for a backend that starts no thread before its
    first call), not new executions."""

    @classmethod
    def of(
        cls,
        argv: Sequence[str],
        env: Mapping[str, str],
        timeout: float,
        quit_timeout: float,
        fork: bool = False,
    ) -> AgentSpec:
        return cls(
            tuple(argv),
            tuple(sorted(env.items())),
            float(timeout),
            float(quit_timeout),
            _identity(argv[0]),
            fork,
        )

    def start(self) -> AgentProcess:
        """A new agent (raises AgentDied if it cannot be started)."""
        if self.fork:
            server = FORK_SERVERS.server(self)
            return AgentProcess(
                list(self.argv), None, self.timeout, self.quit_timeout, spawn=server.spawn
            )
        return AgentProcess(list(self.argv), dict(self.env), self.timeout, self.quit_timeout)

    def current(self) -> bool:
        """The agent file is still the build this spec names."""
        return _identity(self.argv[0]) == self.build


class SparePool:
    """One warm agent per spec, refilled in the background as soon as it is taken."""

    def __init__(self, limit: int = SPARE_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._spares: collections.OrderedDict[AgentSpec, AgentProcess] = collections.OrderedDict()
        self._wanted: collections.OrderedDict[AgentSpec, None] = collections.OrderedDict()
        self._maker: threading.Thread | None = None
        self._making: AgentSpec | None = None
        self._closed = False

    # -- use ------------------------------------------------------------------------------
    def take(self, spec: AgentSpec) -> AgentProcess:
        """An agent for ``spec``: its spare if one is waiting and alive, else a new one; in
        both cases the next spare of ``spec`` is started in the background."""
        with self._lock:
            spare = self._spares.pop(spec, None)
            if not self._closed:
                self._wanted[spec] = None
                self._ensure_maker()
                self._wake.notify_all()
        if spare is not None and spare.alive:
            return spare
        if spare is not None:
            spare.close()  # it died waiting: the caller gets a new one, and its errors
        return spec.start()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until no spare is wanted or being started (True), or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._wanted or self._making is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(min(left, 0.05))
        return True

    # -- the background thread ------------------------------------------------------------
    def _ensure_maker(self) -> None:
        """Start the thread that starts spares (caller holds the lock)."""
        if self._maker is None or not self._maker.is_alive():
            self._maker = threading.Thread(target=self._make, name="acl-agent-spares", daemon=True)
            self._maker.start()

    def _make(self) -> None:
        while True:
            with self._lock:
                while not self._wanted and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                spec, _ = self._wanted.popitem(last=False)
                if spec in self._spares:
                    continue
                self._making = spec
            proc: AgentProcess | None = None
            # One that cannot start: the next take starts one itself, and reports why.
            with contextlib.suppress(AgentDied):
                proc = spec.start()
            if proc is not None and not spec.current():
                proc.close()  # the file changed while it started: which build runs is unknown
                proc = None
            evicted: list[AgentProcess] = []
            with self._lock:
                self._making = None
                if proc is not None:
                    if self._is_closed():  # (shut down while it started)
                        evicted.append(proc)
                    else:
                        self._spares[spec] = proc
                        while len(self._spares) > self.limit:
                            evicted.append(self._spares.popitem(last=False)[1])
                self._wake.notify_all()
            for p in evicted:
                p.close()

    # -- the end --------------------------------------------------------------------------
    def _is_closed(self) -> bool:
        return self._closed

    def shutdown(self) -> None:
        """Close every spare and stop the background thread; later takes start agents
        directly (``atexit`` calls this)."""
        with self._lock:
            self._closed = True
            self._wanted.clear()
            spares = list(self._spares.values())
            self._spares.clear()
            self._wake.notify_all()
            maker = self._maker
        for p in spares:
            p.close()
        if maker is not None and maker is not threading.current_thread():
            maker.join(timeout=60)  # it closes what it was starting once it sees _closed

    def forget_after_fork(self) -> None:
        """In a child made by fork: the spares are the parent's; drop them untouched."""
        for p in self._spares.values():
            with contextlib.suppress(Exception):
                p.disown()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._spares = collections.OrderedDict()
        self._wanted = collections.OrderedDict()
        self._maker = None
        self._making = None


class ForkServers:
    """One running fork server per spec."""

    def __init__(self, limit: int = FORK_SERVER_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._servers: collections.OrderedDict[AgentSpec, ForkServer] = collections.OrderedDict()

    def server(self, spec: AgentSpec) -> ForkServer:
        """The spec's running server (started if there is none, or it died)."""
        retired: list[ForkServer] = []
        with self._lock:
            server = self._servers.get(spec)
            if server is not None and not server.alive:
                retired.append(self._servers.pop(spec))
                server = None
            if server is None:
                server = ForkServer(spec.argv, dict(spec.env))
                if not spec.current():  # the file changed as it started: which build runs?
                    retired.append(server)
                    server = None
                else:
                    self._servers[spec] = server
                    while len(self._servers) > self.limit:
                        retired.append(self._servers.popitem(last=False)[1])
            else:
                self._servers.move_to_end(spec)
        for old in retired:
            old.retire()
        if server is None:
            raise AgentDied(f"the agent {spec.argv[0]} was replaced while it started")
        return server

    def close(self) -> None:
        """End every server (their children live on until their clients close them)."""
        with self._lock:
            servers = list(self._servers.values())
            self._servers.clear()
        for server in servers:
            server.close()

    def forget_after_fork(self) -> None:
        self._lock = threading.Lock()
        self._servers = collections.OrderedDict()


FORK_SERVERS = ForkServers()
"""The process's fork servers."""

SPARES = SparePool()
"""The process's pool (each pytest-xdist worker has its own)."""


def _shutdown() -> None:
    SPARES.shutdown()
    FORK_SERVERS.close()


atexit.register(_shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=SPARES.forget_after_fork)
    os.register_at_fork(after_in_child=FORK_SERVERS.forget_after_fork)

__all__ = [
    "FORK_SERVERS",
    "FORK_SERVER_LIMIT",
    "SPARES",
    "SPARE_LIMIT",
    "AgentSpec",
    "ForkServers",
    "SparePool",
]
