"""The agent's process: what the client needs of it, how it ends, how its end is told.

A crash is told as the exit status or signal (:func:`describe_exit`); a late agent is
killed with its whole process group (:func:`kill_group`); an agent whose client was
dropped without ``close()`` is killed and reaped by a finaliser (:func:`reap`).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import IO
from typing import Any
from typing import Protocol

EXIT_UNKNOWN = -1000
"""A ``returncode`` for an agent known to have ended whose exit status nobody could learn
(a forked agent whose fork server died first)."""


class AgentDied(RuntimeError):
    """The agent process ended while a call was outstanding, or before it was made."""


class AgentProc(Protocol):
    """What :class:`~.client.AgentProcess` needs of the agent's process:
    :class:`subprocess.Popen`, or a child of a fork server (``forkserver.ForkedChild``)."""

    pid: int
    returncode: int | None
    stdin: IO[bytes] | None
    stdout: IO[bytes] | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


def describe_exit(returncode: int | None) -> str:
    """``was killed by signal 11 (SIGSEGV)``, ``exited with status 3``, ..."""
    if returncode is None:
        return "is still running"
    if returncode == EXIT_UNKNOWN:
        return "ended (its exit status is unknown)"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        return f"was killed by signal {-returncode} ({name})"
    return f"exited with status {returncode}"


def kill_group(proc: AgentProc) -> None:
    """SIGKILL the agent's process group (the agent leads it; helpers it started die too,
    so that nothing keeps its stdout open).  A forked agent, which is not our child, is
    killed through its pidfd (``ForkedChild.kill``)."""
    if not isinstance(proc, subprocess.Popen):
        proc.kill()
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if proc.poll() is None:
            proc.kill()


def reap(proc: AgentProc, stop: threading.Event) -> None:
    """Finaliser: kill and reap an agent whose client was dropped without close()."""
    stop.set()
    if proc.poll() is None:
        kill_group(proc)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def environment(extra: Mapping[str, str | None]) -> dict[str, str]:
    """This process's environment with ``extra`` set (a value of None removes the name)."""
    env = dict(os.environ)
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def file_tail(file: IO[Any], chars: int) -> str:
    """The last ``chars`` characters written to ``file``, stripped ("" if it cannot be read)."""
    try:
        file.flush()
        size = file.seek(0, io.SEEK_END)
        file.seek(max(0, size - chars))
        data: bytes = file.read()
    except (OSError, ValueError):
        return ""
    return data.decode(errors="replace").strip()
