"""The raw path to the backend: a call made in its host thread's worker, with a time
limit, recorded; host memory read back.  The harness judges the answers
(``Harness.call``); the suite's own reads go through here alone.  A backend that hangs or
raises poisons the path: every later call fails at once with the same cause."""

from __future__ import annotations

import concurrent.futures
import copy
import threading
import time
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
from .hangs import CallLimit
from .hangs import situation
from .stream_gates import StreamGates
from .workers import GateReleaser
from .workers import HostWorker

CALL_TIMEOUT_SECONDS: float | None = None
"""How long one call into the backend may take before it is reported as TIMEOUT, unless
the run says otherwise (``--acl-call-timeout``): None, a limit that adapts to the backend
(``hangs.CallLimit``: at least ``hangs.FLOOR_SECONDS``, more for a slow backend)."""

OnHang = Callable[[BackendTimeout, str, int, dict[str, Any]], None]
"""Told of a call that did not return (the failure, the call's name, host thread, args)."""
OnCrash = Callable[[BackendCrash, str, int, dict[str, Any]], None]
"""Told of a call that raised instead of answering (the failure, the call's name, host
thread, args)."""

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
        call_timeout: float | CallLimit | None,
        gates: StreamGates,
        snapshot: Callable[[], FailureSnapshot],
        release_after: float,
        on_hang: OnHang | None = None,
        hung: Callable[[str], dict[str, str] | None] | None = None,
        on_crash: OnCrash | None = None,
    ) -> None:
        """``snapshot``: what a failure raised here keeps of the harness; ``call_timeout``:
        a fixed limit in seconds, None for an adaptive one, or the run's own
        (``hangs.CallLimit``); ``on_hang``: told of a call that did not return, before its
        failure is raised; ``hung``: the run's record of a situation that hung
        (``RunState.hang``); ``on_crash``: told of a call that raised instead of answering,
        before its failure is raised."""
        self.adapter = adapter
        self._on_crash = on_crash
        self.limit = (
            call_timeout if isinstance(call_timeout, CallLimit) else CallLimit(call_timeout)
        )
        self._on_hang = on_hang
        self._hung = hung
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
            hang = self.poison_error
            if isinstance(hang, BackendTimeout) and hang.requirement is not None:
                raise copy.copy(hang)  # the hang, as charged: one hang, one failure
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
        limit = self.limit.seconds()
        start = time.monotonic()
        try:
            if adapter.calls_may_hang:
                rec: CallRecord = self._worker(thread).run(job, limit, **args)
            else:
                rec = job(**args)
            self.limit.observe(time.monotonic() - start)
        except concurrent.futures.TimeoutError:
            raise self._hung_call(
                f"{label} did not return within {limit:g} s",
                self.limit.describe(),
                name,
                thread,
                args,
                label,
            ) from None
        except CallTimeout as exc:  # the adapter's own limit
            raise self._hung_call(
                f"{label} did not return: {exc}",
                f"the adapter's own limit ({exc})",
                name,
                thread,
                args,
                label,
            ) from exc
        except Exception as exc:  # the backend raised instead of answering
            err = self._poison(BackendCrash, f"{label} raised {type(exc).__name__}: {exc}")
            err.call = label
            if self._on_crash is not None:
                self._on_crash(err, name, thread, args)
            raise err from exc
        finally:
            if token is not None:
                self.releaser.leave(token)
        return rec

    def _hung_call(
        self, why: str, limit: str, name: str, thread: int, args: dict[str, Any], label: str
    ) -> BackendTimeout:
        """The failure of a call that did not return (the path is poisoned)."""
        err = self._poison(BackendTimeout, why)
        assert isinstance(err, BackendTimeout)
        err.call = label
        err.limit = limit
        if self._on_hang is not None:
            self._on_hang(err, name, thread, args)
        return err

    def would_hang(self, name: str, args: dict[str, Any]) -> dict[str, str] | None:
        """The hang the run recorded for a call in the situation of ``name(**args)``
        (``hangs.situation``), or None: such a call is not made again."""
        return self._hung(situation(name, args)) if self._hung is not None else None

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
