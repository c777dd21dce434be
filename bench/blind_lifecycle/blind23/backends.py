"""Backends of an imaginary vendor: the bundled simulator with one small change each.

Every class below is a subclass of the bundled simulator that a vendor could plausibly
ship.  The BUG classes go wrong only at the 2nd or 3rd step of a life cycle (a second
host registration, a reset while another device is live, a re-recorded event, a device
switch, a busy stream under a timeout, a dstMax boundary, two defects in one call).  The
LEGAL classes behave oddly but within what the spec text (and the CANN facts) allow.

``make(name, **options)`` builds one by name; options go to the simulator.
"""

from __future__ import annotations

import threading
import time
import types

import numpy as np

from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.simulator import cabi
from acl_conformance.adapters.simulator.events import Event
from acl_conformance.adapters.simulator.events import Record
from acl_conformance.adapters.simulator.events import _record_task
from acl_conformance.adapters.simulator.hostmem import HostMemory
from acl_conformance.adapters.simulator.hostmem import Registration
from acl_conformance.adapters.simulator.streams import Wait
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INTERNAL_ERROR
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_SYMBOL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import FROM_SYMBOL_KINDS
from acl_conformance.reference_impl.constants import TO_SYMBOL_KINDS


def _swap_host(sim: Simulator, cls: type[HostMemory]) -> None:
    """Replace the simulator's host memory by ``cls`` (same limit and reuse option)."""
    sim._host = cls(sim.options.host_limit, reuse=sim.options.host_reuse)


# =====================================================================================
# Class HOST: host registration life cycle (several live ranges, unregister, re-register)
# =====================================================================================


class _LifoRegistrations(HostMemory):
    """Registrations also kept as a stack; unregister checks the pointer is registered,
    then pops the *most recent* registration (the driver's 'undo last pin' path)."""

    def __init__(self, limit: int, reuse: bool = False) -> None:
        super().__init__(limit, reuse=reuse)
        self._order: list[int] = []

    def register(self, address: int, size: int) -> Registration:
        outcome = super().register(address, size)
        if outcome is Registration.OK:
            with self._lock:
                self._order.append(address)
        return outcome

    def unregister(self, address: int) -> bool:
        with self._lock:
            if address not in self._order:
                return False
            victim = self._order.pop()  # BUG: should be self._order.remove(address)
            return self._registered.remove(victim)


class RegUnregisterPopsLatest(Simulator):
    """BUG (host registration, step 3): with ranges A then B registered, unregistering A
    drops B's registration and leaves A page-locked.  A copy from A afterwards is still
    asynchronous (does not wait for the copy), B's copies block."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        _swap_host(self, _LifoRegistrations)


class _StaleHitCache(HostMemory):
    """is_pinned keeps a one-entry cache of the last registered range it hit; unregister
    only invalidates it when the range unregistered is the one registered last."""

    def __init__(self, limit: int, reuse: bool = False) -> None:
        super().__init__(limit, reuse=reuse)
        self._hit: tuple[int, int] | None = None
        self._last_registered: int | None = None

    def register(self, address: int, size: int) -> Registration:
        outcome = super().register(address, size)
        if outcome is Registration.OK:
            with self._lock:
                self._last_registered = address
        return outcome

    def is_pinned(self, address: int) -> bool:
        with self._lock:
            hit = self._hit
            if hit is not None and hit[0] <= address < hit[1]:
                return True
            buf = self._buffer_at(address)
            if buf is not None and buf.pinned and address < buf.end:
                return True
            start = self._registered.containing(address)
            if start is None:
                return False
            i = self._registered._starts.index(start)
            self._hit = (start, self._registered._ends[i])
            return True

    def unregister(self, address: int) -> bool:
        ok = super().unregister(address)
        with self._lock:
            # BUG: should be "if self._hit and self._hit[0] == address"
            if ok and address == self._last_registered:
                self._hit = None
        return ok


class RegStaleHitCache(Simulator):
    """BUG (host registration, step 3-4): register A, register B, copy from A (cached),
    unregister A: A still counts as page-locked, so a copy from it does not block."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        _swap_host(self, _StaleHitCache)


class _ReregisterTombstone(HostMemory):
    """Unregistered ranges leave a tombstone (start, end) used to recycle the pin slot;
    the overlap test of a new registration does not skip tombstones of *another* start."""

    def __init__(self, limit: int, reuse: bool = False) -> None:
        super().__init__(limit, reuse=reuse)
        self._tombs: dict[int, int] = {}

    def register(self, address: int, size: int) -> Registration:
        end = address + size
        with self._lock:
            for start, tend in self._tombs.items():
                # a slot may be recycled only by the same start; another start overlapping
                # a tombstone is (wrongly) refused as already registered
                if start != address and start < end and tend > address:
                    return Registration.OVERLAP
        outcome = super().register(address, size)
        if outcome is Registration.OK:
            with self._lock:
                self._tombs.pop(address, None)
        return outcome

    def unregister(self, address: int) -> bool:
        with self._lock:
            start = self._registered.containing(address)
            end = None
            if start == address:
                end = self._registered._ends[self._registered._starts.index(start)]
        ok = super().unregister(address)
        if ok and end is not None:
            with self._lock:
                self._tombs[address] = end
        return ok


class RegReregisterShifted(Simulator):
    """BUG (host registration, re-register): after registering and unregistering a range,
    registering an overlapping range at another start (a sub-range, the next page) fails
    with 507910 although nothing is registered there."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        _swap_host(self, _ReregisterTombstone)


# =====================================================================================
# Class RESET: device reset while other devices hold variable instances
# =====================================================================================


class ResetReimagesCurrent(Simulator):
    """BUG (reset, step 2): aclrtResetDevice(d) of a device that is not the calling thread's
    current one re-images the *current* context's memory (the reload path used the current
    context instead of the device's): device 0's variables go back to their initial
    pattern when device 1 is reset."""

    def reset_device(self, device_id: int) -> int:
        device = cabi.int32(device_id)
        before = self._devices.context_of(device) if self._devices.valid(device) else None
        current = self._devices.current()
        code = super().reset_device(device_id)
        ended = before is not None and self._devices.context_of(device) is not before
        if ended and current is not None and current.device != device:
            np.copyto(current.memory, self.layout.image())
        return code


class ResetDropsCurrent(Simulator):
    """BUG (reset, step 2): when the last reference of a device is dropped, the thread's
    current context is cleared unconditionally, even when the current device is another
    (live) one: set 1, set 0, reset 1, then copy on device 0 gives 107002."""

    def reset_device(self, device_id: int) -> int:
        device = cabi.int32(device_id)
        before = self._devices.context_of(device) if self._devices.valid(device) else None
        code = super().reset_device(device_id)
        if before is not None and self._devices.context_of(device) is not before:
            self._devices._tls.current = None  # BUG: only if it was the ended context
        return code


# =====================================================================================
# Class EVENT: re-recorded events, waits, records on destroyed streams
# =====================================================================================


class _FirstRecordEvent(Event):
    """Keeps every record in a list; 'latest' returns the first one."""

    def __init__(self, handle: int, device: int) -> None:
        super().__init__(handle, device)
        self._records: list[Record] = []

    def record(self, stream) -> bool:  # type: ignore[no-untyped-def]
        with self._lock:
            seq = stream.enqueue(_record_task)
            if seq is None:
                return False
            self._records.append(Record(stream, seq))
            self._latest = self._records[0]  # BUG: should be self._records[-1]
            return True


class _EventFactoryMixin:
    _event_cls: type[Event] = Event

    def create_event(self, null_event: bool = False) -> tuple[int, int]:
        self._check_open()  # type: ignore[attr-defined]
        code, ctx = self._create_context(null_event)  # type: ignore[attr-defined]
        if ctx is None:
            return code, 0
        with self._lock:  # type: ignore[attr-defined]
            handle = next(self._handles)  # type: ignore[attr-defined]
            event = self._event_cls(handle, ctx.device)
            self._objects[handle] = event  # type: ignore[attr-defined]
            ctx.events[handle] = event
        return ACL_SUCCESS, handle


class EventFirstRecordWins(_EventFactoryMixin, Simulator):
    """BUG (event, step 2): after an event is recorded a second time, waits and
    synchronisations still refer to its first record, so a stream waiting after the second
    record is not ordered after the tasks that record captured."""

    _event_cls = _FirstRecordEvent


class EventRecordStreamRevalidated(Simulator):
    """BUG (event, step 3): record on stream S, destroy S: the event kept S's handle and
    re-validates it, so aclrtStreamWaitEvent and aclrtSynchronizeEvent on that event then
    fail with 107017 instead of succeeding (the record completed when S was destroyed)."""

    def _record_stream_gone(self, event: int) -> bool:
        evt = self._event(event)
        if evt is None:
            return False
        record = evt.latest()
        if record is None or record.stream.handle == 0:
            return False
        with self._lock:
            return record.stream.handle not in self._objects

    def stream_wait_event(self, stream: int, event: int) -> int:
        if self._record_stream_gone(event):
            code, strm, _ = self._stream(stream)
            return code if strm is None else ACL_ERROR_RT_INVALID_HANDLE
        return super().stream_wait_event(stream, event)

    def synchronize_event(self, event: int) -> int:
        if self._record_stream_gone(event):
            return ACL_ERROR_RT_INVALID_HANDLE
        return super().synchronize_event(event)


class EventWaitFollowsRerecord(Simulator):
    """BUG (event, step 3): the wait task keeps a reference to the event and reads its
    latest record when it runs, not when aclrtStreamWaitEvent was called: re-recording the
    event while the wait is pending moves the wait to the new record (over-waiting, or a
    deadlock when the new record sits behind work the waiter must let through)."""

    def stream_wait_event(self, stream: int, event: int) -> int:
        self._check_open()
        if cabi.pointer(event) == 0:
            return ACL_ERROR_INVALID_PARAM
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        code, evt = self._event_arg(event)
        if evt is None:
            return code
        code = self.submit_check(strm, ctx)
        if code:
            return code
        if evt.latest() is None:
            return ACL_SUCCESS

        def wait() -> None:
            # BUG: waits on the event's *status* ("its latest record has run"), re-read
            # while waiting, instead of on the record captured at the call: a re-record
            # while this wait is pending moves the wait to the new record.
            while True:
                record = evt.latest()
                if record is None or record.stream is strm:
                    return
                if record.stream.wait_for(record.seq, 0.005) is Wait.STOPPED:
                    return
                if record.stream.wait_for(record.seq, 0) is Wait.DONE and evt.latest() is record:
                    return

        return ACL_SUCCESS if strm.enqueue(wait) is not None else ACL_ERROR_RT_INVALID_HANDLE


# =====================================================================================
# Class SWITCH: device switches, threads, per-thread current device
# =====================================================================================


class CurrentDeviceProcessGlobal(Simulator):
    """BUG (switch, 2 threads): the current device is process-global instead of
    thread-local: thread A sets 0, thread B sets 1, thread A's next copy writes device 1."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self._devices._tls = types.SimpleNamespace()  # BUG: was threading.local()


class GetDeviceFirstSet(Simulator):
    """BUG (switch, step 2): aclrtGetDevice returns the first device the thread ever set (a
    per-thread 'device id' filled once and never updated): 0 -> 1 still reports 0."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self._first = threading.local()

    def set_device(self, device_id: int) -> int:
        code = super().set_device(device_id)
        if code == ACL_SUCCESS and getattr(self._first, "device", None) is None:
            self._first.device = cabi.int32(device_id)
        return code

    def get_device(self) -> tuple[int, int]:
        code, device = super().get_device()
        if code != ACL_SUCCESS:
            return code, device
        return ACL_SUCCESS, getattr(self._first, "device", device)


class NullStreamStickyDevice(Simulator):
    """BUG (switch, 0 -> 1 -> 0 with NULL): the NULL stream is resolved once per thread and
    cached; after a device switch NULL still names the first device's default stream.  A
    pinned copy on NULL after 0 -> 1 is then checked against device 0's stream (107003);
    a pageable one drains device 0's default stream, not device 1's."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self._null_cache = threading.local()

    def _stream(self, stream: int):  # type: ignore[no-untyped-def]
        code, strm, ctx = super()._stream(stream)
        if cabi.pointer(stream) != 0 or strm is None:
            return code, strm, ctx
        cached = getattr(self._null_cache, "stream", None)
        if cached is None or cached._stopped:  # re-resolved only once the old one is gone
            self._null_cache.stream = strm
            return code, strm, ctx
        return code, cached, ctx


# =====================================================================================
# Class TIMEOUT: aclrtSynchronizeStreamWithTimeout values, idle vs busy stream
# =====================================================================================


class TimeoutZeroPolls(Simulator):
    """BUG under cann, legal under spec (timeout 0): 0 is a poll (0 if the stream is idle,
    507046 if busy) instead of CANN's 107000."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        if cabi.int32(timeout) == 0:
            self._check_open()
            code, strm, _ = self._stream(stream)
            if strm is None:
                return code
            return ACL_SUCCESS if strm.idle() else ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        return super().synchronize_stream_with_timeout(stream, timeout)


class TimeoutForeverAsMs(Simulator):
    """BUG (timeout -1 on a busy stream): -1 goes through the generic ms -> s conversion and
    becomes -1 ms: on an idle stream it returns 0, on a busy one it times out at once
    (507046) instead of waiting for ever."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        self._check_open()
        ms = cabi.int32(timeout)
        if ms < -1:
            return ACL_ERROR_RT_PARAM_INVALID
        code, strm, _ = self._stream(stream)
        if strm is None:
            return code
        if ms == 0:
            return ACL_ERROR_RT_PARAM_INVALID
        return self._wait_code(strm, strm.drain(ms / 1000.0))  # BUG: -1 is 'forever'


class TimeoutExpirySucceeds(Simulator):
    """BUG (small positive timeout on a busy stream): when the timeout expires the call
    returns 0 ('waited as long as asked') instead of 507046, while the task still blocks."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        code = super().synchronize_stream_with_timeout(stream, timeout)
        if code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT and cabi.int32(timeout) > 0:
            return ACL_SUCCESS
        return code


# =====================================================================================
# Class DSTMAX: synchronous aclrtMemcpyFromSymbol, dstMax vs count at the boundaries
# =====================================================================================


class _FromSyncChecks(Simulator):
    """aclrtMemcpyFromSymbol with its own copy of the checks (the async one keeps the
    simulator's), where the dstMax test is ``_dstmax_bad``."""

    def _dstmax_bad(self, n: int, dst_max: int, offset: int) -> bool:
        return n > cabi.size_t(dst_max)

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        self._check_open()
        dst_ptr, n = cabi.pointer(dst), cabi.size_t(count)
        sym, off, k = cabi.pointer(symbol), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS
        if sym == 0 or dst_ptr == 0 or self._dstmax_bad(n, dst_max, off):
            return ACL_ERROR_INVALID_PARAM
        if k not in FROM_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM
        code, _, source = self._symbol_range(sym, off, n)
        if source is None:
            return code
        return self._copy_now(dst_ptr, n, source, to_device=False)


class FromDstMaxOffByOne(_FromSyncChecks):
    """BUG (dstMax == count): the synchronous From rejects count >= dstMax, so a read that
    fills the destination exactly is refused with 100000."""

    def _dstmax_bad(self, n: int, dst_max: int, offset: int) -> bool:
        return n >= cabi.size_t(dst_max)


class FromDstMaxZeroUnbounded(_FromSyncChecks):
    """BUG (dstMax == 0): the synchronous From takes dstMax 0 as 'unknown, unchecked' (a
    compatibility-layer convention), so count > dstMax = 0 is accepted and dst written."""

    def _dstmax_bad(self, n: int, dst_max: int, offset: int) -> bool:
        m = cabi.size_t(dst_max)
        return m != 0 and n > m


class FromDstMaxCountsOffset(_FromSyncChecks):
    """BUG (dstMax == count, offset > 0): the synchronous From checks offset + count against
    dstMax (the symbol offset mixed into the destination bound): a read of count == dstMax
    bytes from offset > 0 is refused with 100000."""

    def _dstmax_bad(self, n: int, dst_max: int, offset: int) -> bool:
        return n + offset > cabi.size_t(dst_max)


# =====================================================================================
# Class ORDER: two defects in one call; which error comes first
# =====================================================================================


class OrderStreamFirst(Simulator):
    """BUG under cann, legal under spec: the stream handle is validated before the ACL-layer
    checks, so a bad stream plus an unregistered symbol (or a past-the-end range) returns
    107017 instead of 107043 (or 100000)."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        self._check_open()
        if cabi.size_t(count) != 0 and cabi.pointer(stream) != 0:
            code, strm, _ = self._stream(stream)
            if strm is None:
                return code
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


class OrderLookupBeforeKind(Simulator):
    """BUG under cann, legal under spec: the symbol lookup runs before the kind check, so an
    unregistered symbol with a bad kind returns 107043 instead of 100000."""

    def _to_symbol_checks(self, symbol: int, src_ptr: int, n: int, offset: int, kind: int):  # type: ignore[no-untyped-def]
        sym, off, k = cabi.pointer(symbol), cabi.size_t(offset), cabi.int32(kind)
        if n == 0:
            return ACL_SUCCESS, None
        if sym == 0 or src_ptr == 0:
            return ACL_ERROR_INVALID_PARAM, None
        if self._devices.current() is None:
            return ACL_ERROR_RT_CONTEXT_NULL, None
        if self._symbols.lookup(sym) is None:
            return ACL_ERROR_RT_INVALID_SYMBOL, None
        if k not in TO_SYMBOL_KINDS:
            return ACL_ERROR_INVALID_PARAM, None
        code, _, dst = self._symbol_range(sym, off, n)
        return code, dst


# =====================================================================================
# LEGAL oddities
# =====================================================================================


class LegalAddressReuse(Simulator):
    """LEGAL: freed host memory (pinned or pageable) is handed out again at once, so a
    re-allocated, re-registered buffer has the very address of an earlier, unregistered
    one (as malloc and page-locked pools do)."""

    def __init__(self, **kw: object) -> None:
        kw.setdefault("host_reuse", True)
        super().__init__(**kw)


class LegalSlowPageable(Simulator):
    """LEGAL: a pageable copy blocks until the copy is complete and then some (10 ms of
    bookkeeping after the copy, before returning)."""

    def _copy_on_stream(self, stream, host_ptr, n, device, to_device):  # type: ignore[no-untyped-def]
        pinned = self._host.is_pinned(host_ptr)
        code = super()._copy_on_stream(stream, host_ptr, n, device, to_device)
        if not pinned:
            time.sleep(0.010)
        return code


class LegalTimeoutLate(Simulator):
    """LEGAL: a positive timeout expires up to 40 ms late (coarse timer); the answer is
    still 507046 while the stream is blocked, or 0 if it finished in the slack."""

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        self._check_open()
        ms = cabi.int32(timeout)
        if ms <= 0:
            return super().synchronize_stream_with_timeout(stream, timeout)
        code, strm, _ = self._stream(stream)
        if strm is None:
            return code
        return self._wait_code(strm, strm.drain(ms / 1000.0 + 0.040))


class LegalResetPoison(Simulator):
    """LEGAL: a device set again after a reset comes back with its variables filled with
    0xA5 (the reloaded image is not re-initialised) instead of the initial pattern."""

    def set_device(self, device_id: int) -> int:
        code = super().set_device(device_id)
        if code == ACL_SUCCESS:
            ctx = self._devices.current()
            if ctx is not None and ctx.generation > 0 and not getattr(ctx, "_b23", False):
                with self._setup_lock:
                    if not getattr(ctx, "_b23", False):
                        ctx.memory[:] = 0xA5
                        ctx._b23 = True  # type: ignore[attr-defined]
        return code


class LegalResetKeepsContents(Simulator):
    """LEGAL: a device reset keeps its loaded image: set again, its variables hold what
    they held before the reset (other devices untouched)."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)
        self._kept: dict[int, np.ndarray] = {}

    def reset_device(self, device_id: int) -> int:
        device = cabi.int32(device_id)
        before = self._devices.context_of(device) if self._devices.valid(device) else None
        code = super().reset_device(device_id)
        if before is not None and self._devices.context_of(device) is not before:
            self._kept[device] = before.memory.copy()
        return code

    def set_device(self, device_id: int) -> int:
        device = cabi.int32(device_id)
        fresh = self._devices.valid(device) and self._devices.context_of(device) is None
        code = super().set_device(device_id)
        if code == ACL_SUCCESS and fresh:
            kept = self._kept.pop(device, None)
            ctx = self._devices.context_of(device)
            if kept is not None and ctx is not None:
                np.copyto(ctx.memory, kept)
        return code


BACKENDS: dict[str, type[Simulator]] = {
    # host registration
    "reg_unregister_pops_latest": RegUnregisterPopsLatest,
    "reg_stale_hit_cache": RegStaleHitCache,
    "reg_reregister_shifted": RegReregisterShifted,
    # device reset
    "reset_reimages_current": ResetReimagesCurrent,
    "reset_drops_current": ResetDropsCurrent,
    # events
    "event_first_record_wins": EventFirstRecordWins,
    "event_record_stream_revalidated": EventRecordStreamRevalidated,
    "event_wait_follows_rerecord": EventWaitFollowsRerecord,
    # device switches
    "current_device_process_global": CurrentDeviceProcessGlobal,
    "get_device_first_set": GetDeviceFirstSet,
    "null_stream_sticky_device": NullStreamStickyDevice,
    # timeouts
    "timeout_zero_polls": TimeoutZeroPolls,
    "timeout_forever_as_ms": TimeoutForeverAsMs,
    "timeout_expiry_succeeds": TimeoutExpirySucceeds,
    # FromSymbol dstMax
    "from_dstmax_off_by_one": FromDstMaxOffByOne,
    "from_dstmax_zero_unbounded": FromDstMaxZeroUnbounded,
    "from_dstmax_counts_offset": FromDstMaxCountsOffset,
    # two defects in one call
    "order_stream_first": OrderStreamFirst,
    "order_lookup_before_kind": OrderLookupBeforeKind,
    # legal oddities
    "legal_address_reuse": LegalAddressReuse,
    "legal_slow_pageable": LegalSlowPageable,
    "legal_timeout_late": LegalTimeoutLate,
    "legal_reset_poison": LegalResetPoison,
    "legal_reset_keeps_contents": LegalResetKeepsContents,
}


def make(name: str, **options: str) -> Adapter:
    """The backend called ``name``; the other options go to the simulator."""
    try:
        cls = BACKENDS[name]
    except KeyError:
        raise ValueError(f"name: unknown blind23 backend {name!r}; known: {', '.join(BACKENDS)}") from None
    sim = cls.from_options(options)
    sim.name = f"blind23-{name}"
    return sim
