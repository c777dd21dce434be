"""The harness's own threads: one worker per host thread, and the gate releaser."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from typing import Any


class HostWorker:
    """One OS thread that makes every backend call of one logical host thread (ACL
    contexts are per thread, so a host thread keeps its own OS thread)."""

    def __init__(self, name: str) -> None:
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def run(self, fn: Callable[..., Any], limit: float, /, **args: Any) -> Any:
        """``fn(**args)`` on this worker; concurrent.futures.TimeoutError after ``limit`` s."""
        fut = self.pool.submit(fn, **args)
        return fut.result(timeout=limit)

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


class GateReleaser:
    """Opens the suite's gates when a call made while one is closed does not return within
    ``after`` seconds (one daemon thread per harness, started when first needed)."""

    def __init__(self, release: Callable[[], None], after: float) -> None:
        self._release = release
        self._after = after
        self._cv = threading.Condition()
        self._calls: dict[int, float] = {}
        self._next = 0
        self._thread: threading.Thread | None = None
        self._stop = False
        self.releases = 0

    def enter(self) -> int | None:
        """A call starts: its token (None once stopped)."""
        with self._cv:
            if self._stop:
                return None
            self._next += 1
            self._calls[self._next] = time.monotonic() + self._after
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="acl-release", daemon=True)
                self._thread.start()
            self._cv.notify()
            return self._next

    def leave(self, token: int) -> None:
        """The call of ``token`` returned."""
        with self._cv:
            self._calls.pop(token, None)

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._stop:
                    now = time.monotonic()
                    late = [k for k, d in self._calls.items() if d <= now]
                    if late:
                        for k in late:
                            del self._calls[k]
                        break
                    self._cv.wait(min(self._calls.values()) - now if self._calls else None)
                if self._stop:
                    return
                self.releases += 1
            self._release()
