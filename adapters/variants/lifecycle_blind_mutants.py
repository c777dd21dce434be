"""Bugs and legal oddities written blind for issue 23, past the first step of a life cycle.

Someone outside the project, who had not read the suite's tests, wrote a set of backends
(bench/blind_lifecycle/blind23) that go wrong, or behave oddly but within the text, only
at the second or third step of a life cycle: several host registrations, one released
and registered again; a device reset while another device is current, the device set
again; an event recorded on a stream then destroyed; a device switch; a copy from a
symbol at the bounds of ``dstMax``; two wrong arguments in one call; a busy stream under
a timeout.  These are those backends, written again as small subclasses of the bundled
simulator that change its ACL calls, as a vendor could ship them.

The bugs come first, then the legal oddities (the suite must accept those).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from acl_conformance.adapters.simulator import cabi
from acl_conformance.adapters.simulator.devices import Context
from acl_conformance.adapters.simulator.devices import Devices
from acl_conformance.adapters.simulator.layout import ByteArray
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import SIZE_MAX

from .mutant_base import MutantBase
from .mutant_base import Registrations


class _Contexts(MutantBase):
    """The one place these variants read the simulator's device table: whether a reset
    ended a device's context, and that context's memory as a whole, are not shown by any
    ACL call (a copy reaches one variable at a time, and only on the current device)."""

    def _context_of(self, device_id: int) -> Context | None:
        """The live context of device ``device_id`` (None: none, or no such device)."""
        device = cabi.int32(device_id)
        return self._devices.context_of(device) if self._devices.valid(device) else None


# -- host registration ------------------------------------------------------------------
class UnregisterLeavesAStaleCache(Registrations):
    """The runtime remembers the registered range its last page-locked copy came from, and
    aclrtHostUnregister forgets it only when the range released is the one registered last:
    an older range released while remembered still counts as page-locked, so a copy from
    it returns before the copy is done."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._hit: int | None = None
        """The registered range the last page-locked copy came from (its start)."""
        self._newest: int | None = None
        """The start of the range registered last."""
        self._stale: tuple[int, int] | None = None
        """(start, size) of a range released while remembered: it is listed as released,
        and its pages are kept locked (the simulator's registration stays) until the
        cache lets it go."""

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        code = super().host_register(ptr, size, flag)
        stale = self._stale
        if code == ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED and stale is not None:
            start, n = stale
            if start < ptr + cabi.size_t(size) and ptr < start + n:
                # the table no longer lists the stale range: nothing is in the way
                self._drop_stale()
                code = super().host_register(ptr, size, flag)
        if code == ACL_SUCCESS:
            self._newest = ptr
        return code

    def host_unregister(self, ptr: int) -> int:
        if self._stale is not None and ptr == self._stale[0]:
            return ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED  # released already
        if ptr in self._live and ptr == self._hit and ptr != self._newest:
            self._stale = (ptr, self._live.pop(ptr))  # the cache is not told
            return ACL_SUCCESS
        code = super().host_unregister(ptr)
        if code == ACL_SUCCESS and ptr == self._newest:
            self._hit = None
            self._drop_stale()
        return code

    def _drop_stale(self) -> None:
        if self._stale is not None:
            start, self._stale = self._stale[0], None
            super().host_unregister(start)

    def _note_copy(self, host: int) -> None:
        """A page-locked copy from a registered range is remembered; a copy from the
        remembered range (stale or not), or from any other memory, changes nothing."""
        start = next((s for s, n in list(self._live.items()) if s <= host < s + n), None)
        if start is None:
            return
        if self._stale is not None:
            self._drop_stale()  # the cache moves to another range: the stale one is let go
        self._hit = start

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if code == ACL_SUCCESS and count:
            self._note_copy(src)
        return code

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        code = super().memcpy_from_symbol_async(dst, dst_max, symbol, count, offset, kind, stream)
        if code == ACL_SUCCESS and count:
            self._note_copy(dst)
        return code


class ReRegisterAfterUnregisterRefused(Registrations):
    """aclrtHostUnregister leaves the released range in the table as a tombstone, which
    aclrtHostRegisterV2 counts as registered unless the new range starts where it did:
    registering part of a released range, or a range over it at another start, fails with
    507910 although nothing is registered there."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._tombstones: dict[int, int] = {}
        """Released ranges: start -> end."""

    def _over_a_tombstone(self, ptr: int, size: int) -> bool:
        end = ptr + cabi.size_t(size)
        return any(s != ptr and s < end and ptr < e for s, e in self._tombstones.items())

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        code = super().host_register(ptr, size, flag)
        # The tombstones are looked at with the registered ranges, after the arguments
        # (100000) and before the range is matched to a host buffer (107000).
        if code in (ACL_SUCCESS, ACL_ERROR_RT_PARAM_INVALID) and self._over_a_tombstone(ptr, size):
            if code == ACL_SUCCESS:
                super().host_unregister(ptr)
            return ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
        if code == ACL_SUCCESS:
            self._tombstones.pop(ptr, None)  # the slot is used again
        return code

    def host_unregister(self, ptr: int) -> int:
        size = self._live.get(ptr)
        code = super().host_unregister(ptr)
        if code == ACL_SUCCESS and size is not None:
            self._tombstones[ptr] = ptr + cabi.size_t(size)
        return code


# -- device reset, device switch ----------------------------------------------------------
class _ForgetfulDevices(Devices):
    """The device table, able to leave the calling thread without a current device (no
    ACL call does that while the thread's device is live)."""

    def forget_current(self) -> None:
        self._tls.current = None


class ResetDropsTheCurrentDevice(_Contexts):
    """aclrtResetDevice, releasing a device's last reference, clears the calling thread's
    current device even when that is another, live device: set 1, set 0, reset 1, and the
    thread's next copy fails with 107002."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._devices.__class__ = _ForgetfulDevices

    def reset_device(self, device_id: int) -> int:
        before = self._context_of(device_id)
        code = super().reset_device(device_id)
        if before is not None and self._context_of(device_id) is not before:
            assert isinstance(self._devices, _ForgetfulDevices)
            self._devices.forget_current()
        return code


class GetDeviceReportsTheFirstSet(MutantBase):
    """aclrtGetDevice reports the first device the calling thread ever set (a per-thread id
    filled once and never updated): after switching from 0 to 1 it still says 0."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._reported: dict[int, int] = {}
        """Host thread id -> the device its aclrtGetDevice reports (set once)."""

    def set_device(self, device_id: int) -> int:
        code = super().set_device(device_id)
        if code == ACL_SUCCESS:
            self._reported.setdefault(threading.get_ident(), cabi.int32(device_id))
        return code

    def get_device(self) -> tuple[int, int]:
        code, device = super().get_device()
        if code == ACL_SUCCESS:
            device = self._reported.get(threading.get_ident(), device)
        return code, device


# -- events -------------------------------------------------------------------------------
class EventRecordRevalidatesItsStream(MutantBase):
    """An event keeps the handle of the stream it was last recorded on and checks it again
    when waited for: once that stream is destroyed, aclrtStreamWaitEvent and
    aclrtSynchronizeEvent on the event fail with 107017 (the record had completed)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._recorded_on: dict[int, int] = {}
        """Event -> the stream its latest record went to (NULL streams left out)."""
        self._destroyed: set[int] = set()

    def record_event(self, event: int, stream: int) -> int:
        code = super().record_event(event, stream)
        if code == ACL_SUCCESS:
            self._recorded_on[int(event)] = int(stream)
        return code

    def destroy_stream(self, stream: int) -> int:
        code = super().destroy_stream(stream)
        if code == ACL_SUCCESS:
            self._destroyed.add(int(stream))
        return code

    def _stream_gone(self, event: int) -> bool:
        stream = self._recorded_on.get(int(event), 0)
        return bool(stream) and stream in self._destroyed

    def stream_wait_event(self, stream: int, event: int) -> int:
        if self._stream_gone(event):
            code, _status = self.stream_query(stream)  # the waiting stream is checked first
            return code or ACL_ERROR_RT_INVALID_HANDLE
        return super().stream_wait_event(stream, event)

    def synchronize_event(self, event: int) -> int:
        if self._stream_gone(event):
            return ACL_ERROR_RT_INVALID_HANDLE
        return super().synchronize_event(event)


# -- aclrtMemcpyFromSymbol's dstMax -------------------------------------------------------
class FromDstMaxZeroIsUnbounded(MutantBase):
    """aclrtMemcpyFromSymbol takes dstMax 0 as 'size not given' and does not check it (a
    compatibility convention): count > dstMax = 0 is accepted and dst written."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        if count and cabi.size_t(dst_max) == 0:
            dst_max = SIZE_MAX
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)


class FromDstMaxCountsTheOffset(MutantBase):
    """aclrtMemcpyFromSymbol checks offset + count against dstMax (the symbol's offset mixed
    into the destination's bound): reading dstMax bytes from an offset past 0 is refused
    with 100000."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        n = cabi.size_t(count)
        if n and n + cabi.size_t(offset) > cabi.size_t(dst_max):
            return ACL_ERROR_INVALID_PARAM
        return super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)


# -- the order of the checks --------------------------------------------------------------
class StreamCheckedFirst(MutantBase):
    """aclrtMemcpyToSymbolAsync validates the stream handle before its other arguments: a
    bad stream with an unregistered symbol (or a range past the end, or a bad kind) gives
    107017 where CANN gives the other argument's code."""

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if count and stream:
            code, _status = self.stream_query(stream)
            if code != ACL_SUCCESS:
                return code
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)


# -- legal oddities -----------------------------------------------------------------------
class PageableReturnsLate(MutantBase):
    """A copy with pageable host memory returns 10 ms after its copy is complete
    (bookkeeping after the copy): slower, and still what the text asks."""

    LATE_S = 0.010

    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        pageable = bool(count and src) and self._pageable(src)
        code = super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)
        if pageable and code == ACL_SUCCESS:
            time.sleep(self.LATE_S)
        return code

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        pageable = bool(count and dst) and self._pageable(dst)
        code = super().memcpy_from_symbol_async(dst, dst_max, symbol, count, offset, kind, stream)
        if pageable and code == ACL_SUCCESS:
            time.sleep(self.LATE_S)
        return code


class TimeoutExpiresLate(MutantBase):
    """aclrtSynchronizeStreamWithTimeout's positive timeouts expire up to 40 ms late (a
    coarse timer): 507046 while the stream is still busy, 0 if it finished in the slack."""

    SLACK_MS = 40

    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int:
        code = super().synchronize_stream_with_timeout(stream, timeout)
        if code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT:  # only a positive timeout expires
            code = super().synchronize_stream_with_timeout(stream, self.SLACK_MS)
        return code


class _SetAgainAfterReset(_Contexts):
    """Calls ``_reloaded(context)`` when a device reset earlier is set again and gets its
    new context (once per context: the set that made it)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._sets = threading.Lock()
        """Held across a set, so that the context a set finds missing is the one it makes."""

    def _reloaded(self, ctx: Context) -> None:
        raise NotImplementedError

    def set_device(self, device_id: int) -> int:
        with self._sets:
            before = self._context_of(device_id)
            code = super().set_device(device_id)
            ctx = self._context_of(device_id)
            if code == ACL_SUCCESS and before is None and ctx is not None and ctx.generation:
                self._reloaded(ctx)
        return code


class ResetPoisonsContents(_SetAgainAfterReset):
    """A device set again after aclrtResetDevice comes back with its memory filled with 0xA5
    (the reloaded image is not initialised), not its variables' initial values."""

    def _reloaded(self, ctx: Context) -> None:
        ctx.memory[:] = 0xA5


class ResetKeepsContents(_SetAgainAfterReset):
    """aclrtResetDevice keeps the device's memory: set again, its variables hold what they
    held before the reset (the other devices are untouched)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._kept: dict[int, ByteArray] = {}
        """Device -> its memory as the reset left it."""

    def reset_device(self, device_id: int) -> int:
        before = self._context_of(device_id)
        code = super().reset_device(device_id)
        if before is not None and self._context_of(device_id) is not before:
            self._kept[before.device] = before.memory.copy()
        return code

    def _reloaded(self, ctx: Context) -> None:
        kept = self._kept.pop(ctx.device, None)
        if kept is not None:
            ctx.memory[:] = kept
