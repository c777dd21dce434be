"""The raw path to the backend: a call made in its host thread's worker, with a time
limit, recorded; host memory read back.  The harness judges the answers
(``Harness.call``); the suite's own reads go through here alone.  A backend that hangs or
raises poisons the path: every later call fails at once with the same cause."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from acl_conformance.adapters.base import CallTimeout
from acl_conformance.adapters.traced import Traced
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import SIZE_MAX
from acl_conformance.reference_impl.constants import error_name
from acl_conformance.reference_impl.record import CallRecord

from .failure import BackendCrash
from .failure import BackendTimeout
from .failure import FailureSnapshot
from .stream_gates import StreamGates
from .workers import GateReleaser
from .workers import HostWorker

CALL_TIMEOUT_SECONDS = 60.0
"""How long one call into the backend may take before it is reported as TIMEOUT, unless
the run says otherwise (``--acl-call-timeout``)."""

_C_RANGES = {
    "size_t": (0, SIZE_MAX),
    "uint64_t": (0, SIZE_MAX),
    "uint32_t": (0, 2**32 - 1),
    "int32_t": (-(2**31), 2**31 - 1),
    "aclrtMemcpyKind": (-(2**31), 2**31 - 1),
}


def check_c_ranges(name: str, args: dict[str, Any]) -> None:
    """A suite bug, not a backend failure: an argument C cannot represent."""
    for p in CALLS[name].params:
        lim = _C_RANGES.get(p.ctype)
        v = args.get(p.name)
        if lim is not None and isinstance(v, int) and not lim[0] <= v <= lim[1]:
            raise ValueError(f"{name}: {p.name}={v} does not fit {p.ctype}")


class BackendCalls:
    """One backend instance as one harness calls it: each host thread's calls in that
    thread's own worker, with a time limit; the gates released when a call waits longer
    than it must; the first hang or crash remembered."""

    def __init__(
        self,
        adapter: Traced,
        call_timeout: float,
        gates: StreamGates,
        snapshot: Callable[[], FailureSnapshot],
        release_after: float,
    ) -> None:
        """``snapshot``: what a failure raised here keeps of the harness."""
        self.adapter = adapter
        self.call_timeout = call_timeout
        self.poisoned: str | None = None
        """Set when the backend hung or crashed: it must not be called again."""
        self.poison_error: BackendCrash | None = None
        """The failure that poisoned it (a BackendTimeout when the backend hung)."""
        self._gates = gates
        self._snapshot = snapshot
        self._workers: dict[int, HostWorker] = {}
        self._lock = threading.Lock()
        self.releaser = GateReleaser(gates.release, release_after)

    def _worker(self, thread: int) -> HostWorker:
        """The OS thread that makes host thread ``thread``'s backend calls."""
        with self._lock:
            w = self._workers.get(thread)
            if w is None:
                w = self._workers[thread] = HostWorker(f"acl-host-{thread}")
            return w

    def raw(self, name: str, thread: int, args: dict[str, Any], label: str) -> CallRecord:
        """Make ``name(**args)`` on the backend as host ``thread``; its record.  A hang, a
        raise or an adapter's own time-out poisons the path (BackendTimeout or
        BackendCrash, naming ``label``)."""
        if self.poisoned:
            kind = type(self.poison_error) if self.poison_error is not None else BackendCrash
            raise kind(
                f"the backend is unusable after an earlier failure: {self.poisoned}",
                self._snapshot(),
            )
        adapter = self.adapter
        gates = self._gates

        def job(**kw: Any) -> CallRecord:
            with adapter.host_thread(thread):
                rec = adapter.record(name, kw)
            # Taken the moment the call returns: which gates were open by then.
            rec.gates_open = gates.open_now()
            return rec

        token = self.releaser.enter() if gates.any_closed() else None
        try:
            if adapter.calls_may_hang:
                rec: CallRecord = self._worker(thread).run(job, self.call_timeout, **args)
            else:
                rec = job(**args)
        except concurrent.futures.TimeoutError:
            raise self._poison(
                BackendTimeout, f"{label} did not return within {self.call_timeout:g} s"
            ) from None
        except CallTimeout as exc:  # the adapter's own limit
            raise self._poison(BackendTimeout, f"{label} did not return: {exc}") from exc
        except Exception as exc:  # the backend raised instead of answering
            raise self._poison(BackendCrash, f"{label} raised {type(exc).__name__}: {exc}") from exc
        finally:
            if token is not None:
                self.releaser.leave(token)
        return rec

    def _poison(self, kind: type[BackendCrash], why: str) -> BackendCrash:
        self.poisoned = why
        self.poison_error = kind(why, self._snapshot())
        return self.poison_error

    def read_back(self, address: int, count: int, thread: int) -> bytes:
        """The ``count`` bytes at host ``address`` (a crash if the backend cannot say)."""
        r = self.raw("read_host", thread, {"src": address, "count": count}, "read_host")
        if r.code != ACL_SUCCESS:
            raise BackendCrash(
                f"reading host memory at 0x{address:x} failed with {error_name(r.acl_error)}",
                self._snapshot(),
            )
        data: bytes = r.outputs["data"]
        return bytes(data)

    def stop_releasing(self) -> None:
        """No more gates are opened by the releaser (the harness is closing)."""
        self.releaser.stop()

    def close(self) -> None:
        """Let go of the workers (a hung one is abandoned)."""
        with self._lock:
            workers = list(self._workers.values())
            self._workers.clear()
        for w in workers:
            w.close()
