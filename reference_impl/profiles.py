"""The profiles: for each call, (abstract state, arguments) -> every legal outcome.

Each call's rule lists its checks in the order the open-source CANN runtime
makes them (cann-runtime-facts.md sections 2 and 4).  A check says which
requirement it stands for, CANN's exact code, and how binding it is in each
profile.  The two profiles fold the same list differently:

- ``cann``: the first check that fails decides the code; a check CANN makes
  only on some configurations (or that the facts only infer) is a branch:
  its code is allowed *and* the call may go on.
- ``spec``: where the text demands rejection, any non-zero code; where the
  text is silent, success and rejection are both accepted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import effects as fx
from .catalogue import PROFILES
from .constants import (
    ACL_ERROR_FAILURE,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_REPEAT_INITIALIZE,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_INVALID_SYMBOL,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_HOST_REG_PINNED,
    ACL_SUCCESS,
    FROM_SYMBOL_KINDS,
    HOST_REGISTER_ALIGNMENT,
    SIZE_MAX,
    TO_SYMBOL_KINDS,
    MemcpyKind,
    kind_name,
)
from .order import Gate
from .outcome import ANY_ERROR, SUCCESS, Alternative, Codes, Outcome
from .state import Event, HostRange, Stream, StreamArg, Symbol, World

MUST = "must"
"""The check's failure must reject the call."""
MAY = "may"
"""The check's failure may reject the call, or the call may go on."""


@dataclass(frozen=True)
class Check:
    """A failed check of one call, in CANN's order."""

    requirement: str | None
    why: str
    code: int | None
    """CANN's code; None where the facts give no exact code (any non-zero)."""
    spec: str | None = MUST
    cann: str | None = MUST
    """How binding the check is in each profile; None: not a failure there."""


Rule = Callable[..., Outcome]


class Profile:
    """The rules shared by both profiles; subclasses decide how checks fold."""

    name = ""
    destroy_waits = False
    """aclrtDestroyStream waits for the stream's tasks (documented for CANN,
    06_stream_management.md:248); the text says nothing, so spec does not assume it."""

    def outcome(self, world: World, call: str, thread: int, args: Mapping[str, Any]) -> Outcome:
        """Every legal outcome of ``call(**args)`` made by host ``thread``."""
        rule: Rule | None = getattr(self, f"rule_{call}", None)
        if rule is None:
            raise KeyError(f"the {self.name} profile has no rule for {call!r}")
        return rule(world, thread, **args)

    # -- folding ----------------------------------------------------------
    def fold(self, checks: list[Check], success: Alternative) -> Outcome:  # pragma: no cover
        raise NotImplementedError

    def count_zero(self, requirement: str) -> Outcome:  # pragma: no cover
        raise NotImplementedError

    def pinned_path(self, rng: HostRange) -> tuple[bool, bool]:  # pragma: no cover
        """(takes the asynchronous path, the call may or may not wait)."""
        raise NotImplementedError

    # -- shared pieces ----------------------------------------------------
    @staticmethod
    def _device(
        world: World, thread: int, checks: list[Check], requirement: str = "DEVICE-CURRENT"
    ) -> int:
        dev = world.current_device(thread)
        if dev is None:
            # CANN sets a configured default device implicitly, else 107002
            # (runtime.cc:5397-5432); the model assumes device 0 for the first.
            checks.append(
                Check(
                    requirement,
                    "no device is current in this thread",
                    ACL_ERROR_RT_CONTEXT_NULL,
                    MAY,
                    MAY,
                )
            )
            return 0
        return dev

    @staticmethod
    def _lookup(
        world: World, symbol: int, checks: list[Check], unregistered: str, interior: str
    ) -> Symbol | None:
        if symbol == 0:
            return None
        sym = world.symbols.get(symbol)
        if sym is None:
            inner = world.symbol_containing(symbol)
            if inner is not None:
                checks.append(
                    Check(
                        interior,
                        f"symbol is &{inner.name} + {symbol - inner.address}, a pointer into a "
                        "variable, not a variable's address",
                        ACL_ERROR_RT_INVALID_SYMBOL,
                    )
                )
            else:
                checks.append(
                    Check(
                        unregistered,
                        "symbol is not the address of a registered device variable",
                        ACL_ERROR_RT_INVALID_SYMBOL,
                    )
                )
        return sym

    @staticmethod
    def _bounds(
        sym: Symbol | None,
        offset: int,
        count: int,
        checks: list[Check],
        overflow: str,
        past_end: str,
    ) -> None:
        if sym is None:
            return
        if offset + count > SIZE_MAX:
            checks.append(
                Check(
                    overflow, f"offset + count = {offset} + {count} wraps size_t", ACL_ERROR_FAILURE
                )
            )
        elif offset + count > sym.size:
            checks.append(
                Check(
                    past_end,
                    f"offset + count = {offset + count} > {sym.size}, the size of {sym.name}",
                    ACL_ERROR_INVALID_PARAM,
                )
            )

    def _stream(
        self,
        world: World,
        handle: int,
        device: int,
        checks: list[Check],
        invalid: str = "STREAM-INVALID-HANDLE",
    ) -> Stream | None:
        kind = world.classify_stream(handle)
        if kind is StreamArg.DEFAULT:
            if not world.caps.default_stream:
                checks.append(
                    Check(
                        "STREAM-NULL-DEFAULT",
                        "stream is NULL and the backend declares no default stream",
                        None,
                        MAY,
                        None,
                    )
                )
            return world.default_stream(device)
        if kind is StreamArg.LIVE:
            return world.streams[handle]
        checks.append(Check(invalid, f"stream is {kind.value}", ACL_ERROR_RT_INVALID_HANDLE))
        return None

    @staticmethod
    def _foreign(stream: Stream | None, device: int) -> bool:
        return stream is not None and stream.device != device

    def _undefined_memory(self, rng: HostRange | None, what: str, checks: list[Check]) -> None:
        if rng is not None and not rng.known:
            checks.append(
                Check(
                    None,
                    f"{what} is not host memory the suite allocated (undefined behaviour)",
                    None,
                    MAY,
                    MAY,
                )
            )

    # -- the copies -------------------------------------------------------
    def rule_memcpy_to_symbol_async(
        self,
        world: World,
        thread: int,
        symbol: int,
        src: int,
        count: int,
        offset: int,
        kind: int,
        stream: int,
    ) -> Outcome:
        return self._to_symbol(world, thread, symbol, src, count, offset, kind, stream)

    def rule_memcpy_to_symbol(
        self, world: World, thread: int, symbol: int, src: int, count: int, offset: int, kind: int
    ) -> Outcome:
        return self._to_symbol(world, thread, symbol, src, count, offset, kind, None)

    def _to_symbol(
        self,
        world: World,
        thread: int,
        symbol: int,
        src: int,
        count: int,
        offset: int,
        kind: int,
        stream: int | None,
    ) -> Outcome:
        is_async = stream is not None

        def req(r: str) -> str:
            return r if is_async else "TOSYMBOL-SYNC"

        if count == 0:
            return self.count_zero(req("COUNT-ZERO"))
        checks: list[Check] = []
        if symbol == 0:
            checks.append(Check(req("SYMBOL-NULL"), "symbol is NULL", ACL_ERROR_INVALID_PARAM))
        if src == 0:
            checks.append(Check(req("SRC-NULL"), "src is NULL", ACL_ERROR_INVALID_PARAM))
        if kind not in TO_SYMBOL_KINDS:
            in_enum = any(kind == k.value for k in MemcpyKind)
            checks.append(
                Check(
                    req("KIND-REJECTED" if in_enum else "KIND-OUT-OF-ENUM"),
                    f"kind is {kind_name(kind)}; only ACL_MEMCPY_HOST_TO_DEVICE and ACL_MEMCPY_DEFAULT are supported",
                    ACL_ERROR_INVALID_PARAM,
                )
            )
        device = self._device(world, thread, checks, req("DEVICE-CURRENT"))
        sym = self._lookup(
            world, symbol, checks, req("SYMBOL-UNREGISTERED"), req("SYMBOL-INTERIOR")
        )
        self._bounds(sym, offset, count, checks, req("BOUNDS-OVERFLOW"), req("BOUNDS-PAST-END"))
        target = self._stream(world, stream, device, checks) if stream is not None else None
        rng = world.host_range(src, count) if src else None
        self._undefined_memory(rng, "src", checks)
        mode, either = "sync", False
        if is_async and rng is not None and not rng.known:
            mode = "pinned"  # unknown memory: the weakest claim, any time up to a sync
        elif is_async and rng is not None:
            pinned, either = self.pinned_path(rng)
            mode = "pinned" if pinned else "pageable"
            if self._foreign(target, device):
                assert target is not None
                checks.append(
                    Check(
                        "STREAM-FOREIGN-DEVICE",
                        f"{target.name} belongs to device {target.device}, device {device} is current",
                        ACL_ERROR_RT_STREAM_CONTEXT,
                        MAY,
                        MUST if pinned and not either else MAY,
                    )
                )
        # Checks this call passes that a backend could get wrong and reject it for, with a
        # code of their own: the end-exact bound, the NULL stream.  A rejection with the
        # wrong code may be theirs as well as the failing check's.
        shadow = [
            *(["STREAM-NULL-DEFAULT"] if stream == 0 and world.caps.default_stream else []),
            *([req("BOUNDS-END-EXACT")] if sym is not None and offset + count == sym.size else []),
        ]
        if sym is None or (is_async and target is None) or rng is None:
            return _shadowed(self.fold(checks, _impossible), shadow)
        # What a refusal of this valid copy breaks: the first is cited, the others are
        # kept so that a report can tell an ambiguous failure from a clear one.
        candidates = [
            *(["TOSYMBOL-SYNC"] if not is_async else []),
            *(["STREAM-NULL-DEFAULT"] if stream == 0 else []),
            *shadow,
        ]
        success_req, *also = dict.fromkeys(candidates or ["KIND-ACCEPTED"])
        partly = either or (rng.any_pinned and not rng.all_pinned)
        effect = fx.CopyToSymbol(
            sym, device, offset, count, rng.buffer, rng.offset, mode, target, partly
        )
        return _shadowed(
            self.fold(
                checks,
                Alternative(
                    SUCCESS,
                    effect,
                    success_req,
                    f"a valid {mode} copy into {sym.name} succeeds",
                    tuple(also),
                ),
            ),
            shadow,
        )

    def rule_memcpy_from_symbol(
        self,
        world: World,
        thread: int,
        dst: int,
        dst_max: int,
        symbol: int,
        count: int,
        offset: int,
        kind: int,
    ) -> Outcome:
        return self._from_symbol(world, thread, dst, dst_max, symbol, count, offset, kind, None)

    def rule_memcpy_from_symbol_async(
        self,
        world: World,
        thread: int,
        dst: int,
        dst_max: int,
        symbol: int,
        count: int,
        offset: int,
        kind: int,
        stream: int,
    ) -> Outcome:
        return self._from_symbol(world, thread, dst, dst_max, symbol, count, offset, kind, stream)

    def _from_symbol(
        self,
        world: World,
        thread: int,
        dst: int,
        dst_max: int,
        symbol: int,
        count: int,
        offset: int,
        kind: int,
        stream: int | None,
    ) -> Outcome:
        r = "FROMSYMBOL-BYTES"
        if count == 0:
            return self.count_zero(r)
        checks: list[Check] = []
        if symbol == 0:
            checks.append(Check(r, "symbol is NULL", ACL_ERROR_INVALID_PARAM))
        if dst == 0:
            checks.append(Check(r, "dst is NULL", ACL_ERROR_INVALID_PARAM))
        if count > dst_max:
            checks.append(
                Check(
                    "FROMSYMBOL-DSTMAX",
                    f"count {count} > dstMax {dst_max}",
                    ACL_ERROR_INVALID_PARAM,
                )
            )
        if kind not in FROM_SYMBOL_KINDS:
            checks.append(
                Check(
                    "FROMSYMBOL-KINDS",
                    f"kind is {kind_name(kind)}; only ACL_MEMCPY_DEVICE_TO_HOST and ACL_MEMCPY_DEFAULT are supported",
                    ACL_ERROR_INVALID_PARAM,
                )
            )
        device = self._device(world, thread, checks)
        sym = self._lookup(world, symbol, checks, r, r)
        self._bounds(sym, offset, count, checks, r, r)
        target = self._stream(world, stream, device, checks) if stream is not None else None
        rng = world.host_range(dst, count) if dst else None
        self._undefined_memory(rng, "dst", checks)
        mode = "sync"
        if stream is not None and rng is not None and rng.known:
            pinned, either = self.pinned_path(rng)
            mode = "pinned" if pinned else "pageable"
            if self._foreign(target, device):
                assert target is not None
                checks.append(
                    Check(
                        "STREAM-FOREIGN-DEVICE",
                        f"{target.name} belongs to device {target.device}, device {device} is current",
                        ACL_ERROR_RT_STREAM_CONTEXT,
                        MAY,
                        MUST if pinned and not either else MAY,
                    )
                )
        if sym is None or (stream is not None and target is None) or rng is None:
            return self.fold(checks, _impossible)
        effect = fx.ReadSymbol(sym, device, offset, count, rng.buffer, rng.offset, mode, target)
        # A refusal of this valid read breaks the read; at dstMax's edges (exactly count,
        # or a value that looks small once cut to 32 bits) it is dstMax that is misread.
        edge = dst_max == count or dst_max >= 2**31
        success_req, *also = ["FROMSYMBOL-DSTMAX", r] if edge else [r]
        return self.fold(
            checks,
            Alternative(
                SUCCESS, effect, success_req, f"a valid read of {sym.name} succeeds", tuple(also)
            ),
        )

    def _symbol_query(
        self, world: World, thread: int, symbol: int, null_out: bool, req: str, what: str
    ) -> tuple[list[Check], Symbol | None, int]:
        checks: list[Check] = []
        if symbol == 0:
            checks.append(Check(req, "symbol is NULL", ACL_ERROR_INVALID_PARAM))
        if null_out:
            checks.append(Check(req, f"the {what} output pointer is NULL", ACL_ERROR_INVALID_PARAM))
        device = self._device(world, thread, checks, req)
        sym = self._lookup(world, symbol, checks, req, req)
        return checks, sym, device

    def rule_get_symbol_address(
        self, world: World, thread: int, symbol: int, null_dev_ptr: bool = False
    ) -> Outcome:
        checks, sym, device = self._symbol_query(
            world, thread, symbol, null_dev_ptr, "GETSYMBOL-ADDRESS", "devPtr"
        )
        if sym is None or null_dev_ptr:
            return self.fold(checks, _impossible)
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.ReportSymbolAddress(sym, device),
                "GETSYMBOL-ADDRESS",
                "a registered variable has an address",
            ),
        )

    def rule_get_symbol_size(
        self, world: World, thread: int, symbol: int, null_size: bool = False
    ) -> Outcome:
        checks, sym, _device = self._symbol_query(
            world, thread, symbol, null_size, "GETSYMBOL-SIZE", "size"
        )
        if sym is None or null_size:
            return self.fold(checks, _impossible)
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.ReportSymbolSize(sym),
                "GETSYMBOL-SIZE",
                "a registered variable has a size",
            ),
        )

    # -- streams ----------------------------------------------------------
    def rule_create_stream(self, world: World, thread: int, null_stream: bool = False) -> Outcome:
        checks: list[Check] = []
        if null_stream:
            checks.append(
                Check("STREAM-CALLS", "the stream output pointer is NULL", ACL_ERROR_INVALID_PARAM)
            )
        device = self._device(world, thread, checks, "STREAM-CALLS")
        return self.fold(
            checks,
            Alternative(
                SUCCESS, fx.NewStream(device), "STREAM-CALLS", "creating a stream succeeds"
            ),
        )

    def rule_destroy_stream(self, world: World, thread: int, stream: int) -> Outcome:
        checks: list[Check] = []
        if stream == 0:
            checks.append(Check("STREAM-CALLS", "stream is NULL", ACL_ERROR_INVALID_PARAM))
            return self.fold(checks, _impossible)
        device = self._device(world, thread, checks, "STREAM-CALLS")
        target = self._stream(world, stream, device, checks, "STREAM-CALLS")
        if target is None:
            return self.fold(checks, _impossible)
        if self._foreign(target, device):
            checks.append(
                Check(
                    "STREAM-CALLS",
                    f"{target.name} belongs to device {target.device}, not the current device",
                    None,
                    MAY,
                    MAY,
                )
            )
        if self.destroy_waits:
            g = world.order.closed_gate_before(target.queue.frontier)
            if g is not None:
                return _blocked_outcome("STREAM-CALLS", target, g)
        effect = fx.DestroyStream(target, drains=self.destroy_waits)
        return self.fold(
            checks,
            Alternative(SUCCESS, effect, "STREAM-CALLS", "destroying a live stream succeeds"),
        )

    def _sync_target(
        self, world: World, thread: int, stream: int, checks: list[Check], req: str
    ) -> Stream | None:
        device = self._device(world, thread, checks, req)
        target = self._stream(world, stream, device, checks, req)
        if target is not None and self._foreign(target, device):
            # StreamSynchronize switches to the stream's context (AIMP:1719-1727, inference).
            checks.append(
                Check(
                    req,
                    f"{target.name} belongs to device {target.device}, not the current device",
                    ACL_ERROR_RT_STREAM_CONTEXT,
                    MAY,
                    MAY,
                )
            )
        return target

    def rule_synchronize_stream(self, world: World, thread: int, stream: int) -> Outcome:
        checks: list[Check] = []
        target = self._sync_target(world, thread, stream, checks, "STREAM-CALLS")
        if target is None:
            return self.fold(checks, _impossible)
        blocked = world.order.closed_gate_before(target.queue.frontier)
        if blocked is not None:
            return _blocked_outcome("PINNED-COMPLETE-AFTER-SYNC", target, blocked)
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.SyncStream(target),
                "PINNED-COMPLETE-AFTER-SYNC",
                "synchronising a stream waits for its tasks",
            ),
        )

    def rule_synchronize_stream_with_timeout(
        self, world: World, thread: int, stream: int, timeout: int
    ) -> Outcome:
        checks: list[Check] = []
        if timeout < -1:
            checks.append(
                Check(
                    "SYNC-TIMEOUT", f"timeout {timeout} < -1", ACL_ERROR_RT_PARAM_INVALID, MAY, MUST
                )
            )
        target = self._sync_target(world, thread, stream, checks, "SYNC-TIMEOUT")
        if timeout == 0:
            checks.append(
                Check("SYNC-TIMEOUT", "timeout is 0", ACL_ERROR_RT_PARAM_INVALID, MAY, MUST)
            )
        if target is None:
            return self.fold(checks, _impossible)
        if world.order.closed_gate_before(target.queue.frontier) is not None:
            checks.append(
                Check(
                    "SYNC-TIMEOUT",
                    f"a closed gate blocks {target.name}: the wait can only time out",
                    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                )
            )
            return self.fold(checks, _impossible)
        checks.append(
            Check(
                "SYNC-TIMEOUT",
                "the stream's tasks may take longer than the timeout",
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                MAY,
                MAY,
            )
        )
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.SyncStream(target),
                "SYNC-TIMEOUT",
                "the stream completed within the timeout",
            ),
        )

    def rule_stream_query(self, world: World, thread: int, stream: int) -> Outcome:
        checks: list[Check] = []
        target = self._sync_target(world, thread, stream, checks, "STREAM-QUERY")
        if target is None:
            return self.fold(checks, _impossible)
        return self.fold(
            checks,
            Alternative(
                SUCCESS, fx.QueryStream(target), "STREAM-QUERY", "querying a live stream succeeds"
            ),
        )

    def rule_synchronize_device(self, world: World, thread: int) -> Outcome:
        checks: list[Check] = []
        device = self._device(world, thread, checks, "DEVICE-CALLS")
        for s in [world.default_stream(device), *world.streams.values()]:
            if s.alive and s.device == device:
                g = world.order.closed_gate_before(s.queue.frontier)
                if g is not None:
                    return _blocked_outcome("PINNED-COMPLETE-AFTER-SYNC", s, g)
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.SyncDevice(device),
                "PINNED-COMPLETE-AFTER-SYNC",
                "synchronising the device waits for all its streams",
            ),
        )

    # -- events -----------------------------------------------------------
    def _event(self, world: World, event: int, checks: list[Check]) -> Event | None:
        if event == 0:
            checks.append(Check("EVENT-CALLS", "event is NULL", ACL_ERROR_INVALID_PARAM))
            return None
        e = world.live_event(event)
        if e is None:
            what = (
                "a destroyed event"
                if event in world.dead_events
                else "a handle that is not an event"
            )
            checks.append(Check("EVENT-CALLS", f"event is {what}", None))
        return e

    def rule_create_event(self, world: World, thread: int, null_event: bool = False) -> Outcome:
        checks: list[Check] = []
        if null_event:
            checks.append(
                Check("EVENT-CALLS", "the event output pointer is NULL", ACL_ERROR_INVALID_PARAM)
            )
        device = self._device(world, thread, checks, "EVENT-CALLS")
        return self.fold(
            checks,
            Alternative(SUCCESS, fx.NewEvent(device), "EVENT-CALLS", "creating an event succeeds"),
        )

    def _event_on_stream(
        self, world: World, thread: int, event: int, stream: int, checks: list[Check]
    ) -> tuple[Event | None, Stream | None]:
        """The checks shared by aclrtRecordEvent and aclrtStreamWaitEvent."""
        e = self._event(world, event, checks)
        device = self._device(world, thread, checks, "EVENT-CALLS")
        target = self._stream(world, stream, device, checks, "EVENT-CALLS")
        if target is not None and self._foreign(target, device):
            # The text does not say whether an event may be recorded on (or waited
            # for by) another device's stream: both answers are allowed.
            checks.append(
                Check("EVENT-CALLS", f"{target.name} belongs to another device", None, MAY, MAY)
            )
        return e, target

    def rule_record_event(self, world: World, thread: int, event: int, stream: int) -> Outcome:
        checks: list[Check] = []
        e, target = self._event_on_stream(world, thread, event, stream, checks)
        if e is None or target is None:
            return self.fold(checks, _impossible)
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.RecordEvent(e, target),
                "STREAM-EVENT-ORDER",
                "recording an event succeeds",
            ),
        )

    def rule_stream_wait_event(self, world: World, thread: int, stream: int, event: int) -> Outcome:
        checks: list[Check] = []
        e, target = self._event_on_stream(world, thread, event, stream, checks)
        if e is None or target is None:
            return self.fold(checks, _impossible)
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.WaitEvent(target, e),
                "STREAM-EVENT-ORDER",
                "waiting for an event succeeds",
            ),
        )

    def rule_synchronize_event(self, world: World, thread: int, event: int) -> Outcome:
        checks: list[Check] = []
        e = self._event(world, event, checks)
        if e is None:
            return self.fold(checks, _impossible)
        if e.captured is None:
            checks.append(Check("EVENT-CALLS", f"{e.name} was never recorded", None, MAY, MAY))
            return self.fold(
                checks,
                Alternative(
                    SUCCESS, None, "EVENT-CALLS", "an unrecorded event has nothing to wait for"
                ),
            )
        g = world.order.closed_gate_before(e.captured)
        if g is not None:
            return Outcome(
                (
                    Alternative(
                        ANY_ERROR,
                        None,
                        "PINNED-COMPLETE-AFTER-SYNC",
                        f"{e.name} waits for gate {g.gid}, which is closed: the call cannot succeed now",
                    ),
                )
            )
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.SyncEvent(e),
                "PINNED-COMPLETE-AFTER-SYNC",
                "synchronising an event waits for what it captured",
            ),
        )

    def rule_destroy_event(self, world: World, thread: int, event: int) -> Outcome:
        checks: list[Check] = []
        e = self._event(world, event, checks)
        if e is None:
            return self.fold(checks, _impossible)
        return self.fold(
            checks,
            Alternative(SUCCESS, fx.DestroyEvent(e), "EVENT-CALLS", "destroying an event succeeds"),
        )

    # -- host memory ------------------------------------------------------
    def rule_malloc_host(
        self, world: World, thread: int, size: int, null_host_ptr: bool = False
    ) -> Outcome:
        checks: list[Check] = []
        if null_host_ptr:
            checks.append(
                Check(
                    "HOST-MEMORY-CALLS",
                    "the hostPtr output pointer is NULL",
                    ACL_ERROR_INVALID_PARAM,
                )
            )
        if size == 0:
            checks.append(
                Check("HOST-MEMORY-CALLS", "size is 0", ACL_ERROR_INVALID_PARAM, MAY, MUST)
            )
            return self.fold(
                checks,
                Alternative(
                    SUCCESS, None, "HOST-MEMORY-CALLS", "size 0 may give a pointer or NULL"
                ),
            )
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.NewHostBuffer(size, True),
                "HOST-MEMORY-CALLS",
                "allocating page-locked memory succeeds",
            ),
        )

    def rule_free_host(self, world: World, thread: int, host_ptr: int) -> Outcome:
        buf = world.buffers.get(host_ptr)
        if buf is None or not buf.alive or not buf.pinned:
            return Outcome(
                (
                    Alternative(
                        ANY_ERROR,
                        None,
                        "HOST-MEMORY-CALLS",
                        "host_ptr is not live aclrtMallocHost memory",
                    ),
                )
            )
        return Outcome(
            (
                Alternative(
                    SUCCESS,
                    fx.FreeHostBuffer(buf),
                    "HOST-MEMORY-CALLS",
                    "freeing page-locked memory succeeds",
                ),
            )
        )

    def rule_malloc_pageable(self, world: World, thread: int, size: int) -> Outcome:
        return Outcome((Alternative(SUCCESS, fx.NewHostBuffer(size, False), None, "malloc"),))

    def rule_free_pageable(self, world: World, thread: int, ptr: int) -> Outcome:
        buf = world.buffers.get(ptr)
        if buf is None or not buf.alive or buf.pinned:
            return Outcome((Alternative(ANY_ERROR, None, None, "ptr is not live malloc memory"),))
        return Outcome((Alternative(SUCCESS, fx.FreeHostBuffer(buf), None, "free"),))

    def rule_host_register(
        self, world: World, thread: int, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED
    ) -> Outcome:
        req = "HOST-MEMORY-CALLS"
        checks: list[Check] = []
        if ptr == 0:
            checks.append(Check(req, "ptr is NULL", ACL_ERROR_INVALID_PARAM))
            return self.fold(checks, _impossible)
        if size == 0:
            checks.append(Check(req, "size is 0", None))
            return self.fold(checks, _impossible)
        rng = world.host_range(ptr, size)
        if not rng.known:
            checks.append(
                Check(None, "the range is not host memory the suite allocated", None, MAY, MAY)
            )
        elif rng.buffer is not None and rng.buffer.pinned:
            checks.append(
                Check(
                    req,
                    f"{rng.buffer.name} is already page-locked (aclrtMallocHost)",
                    None,
                    MAY,
                    MUST,
                )
            )
        if ptr % HOST_REGISTER_ALIGNMENT:
            checks.append(
                Check(req, f"ptr is not {HOST_REGISTER_ALIGNMENT}-byte aligned", None, MAY, MUST)
            )
        overlapping = world.overlapping_registrations(ptr, size)
        if any(not r.stale for r in overlapping):
            checks.append(Check(req, "the range overlaps a registered range", None, MAY, MUST))
        elif overlapping:
            checks.append(
                Check(
                    req,
                    "the range overlaps a registration made on memory since freed (it may "
                    "or may not have outlived the free)",
                    None,
                    MAY,
                    MAY,
                )
            )
        if flag != ACL_HOST_REG_PINNED:
            checks.append(
                Check(None, f"flag 0x{flag:x} is not ACL_HOST_REG_PINNED", None, MAY, MAY)
            )
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.RegisterHost(ptr, size),
                "PINNED-REGISTERED",
                "registering pageable memory page-locks it",
            ),
        )

    def rule_host_unregister(self, world: World, thread: int, ptr: int) -> Outcome:
        req = "HOST-MEMORY-CALLS"
        checks: list[Check] = []
        if ptr == 0:
            checks.append(Check(req, "ptr is NULL", ACL_ERROR_INVALID_PARAM))
            return self.fold(checks, _impossible)
        reg = world.registered.get(ptr)
        if reg is None:
            checks.append(
                Check(
                    req,
                    "ptr is not the start of a registered range",
                    ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED,
                )
            )
            return self.fold(checks, _impossible)
        if reg.stale:
            checks.append(
                Check(
                    req,
                    "the registration was made on memory since freed (it may or may not have "
                    "outlived the free)",
                    ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED,
                    MAY,
                    MAY,
                )
            )
        return self.fold(
            checks,
            Alternative(
                SUCCESS,
                fx.UnregisterHost(ptr),
                "PINNED-REGISTERED",
                "unregistering makes the memory pageable again",
            ),
        )

    def rule_write_host(self, world: World, thread: int, dst: int, data: bytes) -> Outcome:
        rng = world.host_range(dst, len(data))
        if rng.buffer is None:
            return Outcome(
                (
                    Alternative(
                        Codes(None), None, None, "dst is not host memory the suite allocated"
                    ),
                )
            )
        return Outcome(
            (
                Alternative(
                    SUCCESS, fx.WriteHost(rng.buffer, rng.offset, bytes(data)), None, "a host write"
                ),
            )
        )

    def rule_read_host(self, world: World, thread: int, src: int, count: int) -> Outcome:
        return Outcome((Alternative(SUCCESS, fx.Nothing(), None, "a host read"),))

    # -- devices ----------------------------------------------------------
    def rule_set_device(self, world: World, thread: int, device_id: int) -> Outcome:
        if not world.valid_device(device_id):
            return Outcome(
                (
                    Alternative(
                        ANY_ERROR,
                        None,
                        "DEVICE-CALLS",
                        f"device {device_id} does not exist ({world.caps.devices} devices)",
                    ),
                )
            )
        return Outcome(
            (
                Alternative(
                    SUCCESS,
                    fx.SetDevice(device_id),
                    "DEVICE-CALLS",
                    "setting a valid device succeeds",
                ),
            )
        )

    def rule_get_device(self, world: World, thread: int) -> Outcome:
        dev = world.current_device(thread)
        if dev is None:
            return _one(ANY_ERROR, None, "DEVICE-CALLS", "no device is current")
        return _one(SUCCESS, fx.ReportDevice(dev), "DEVICE-CALLS", "the current device is reported")

    def rule_get_device_count(self, world: World, thread: int) -> Outcome:
        effect = fx.ReportDeviceCount(world.caps.devices)
        return _one(SUCCESS, effect, "DEVICE-CALLS", "the device count is reported")

    def rule_reset_device(self, world: World, thread: int, device_id: int) -> Outcome:
        if not world.valid_device(device_id):
            return Outcome(
                (
                    Alternative(
                        ANY_ERROR, None, "DEVICE-CALLS", f"device {device_id} does not exist"
                    ),
                )
            )
        if world.refcount.get(device_id, 0) == 0:
            return Outcome(
                (
                    Alternative(
                        SUCCESS,
                        None,
                        "DEVICE-CALLS",
                        "resetting a device that is not set may succeed",
                    ),
                    Alternative(ANY_ERROR, None, "DEVICE-CALLS", "or be rejected"),
                )
            )
        for s in [world.default_stream(device_id), *world.streams.values()]:
            if s.alive and s.device == device_id:
                g = world.order.closed_gate_before(s.queue.frontier)
                if g is not None:
                    return _blocked_outcome("DEVICE-CALLS", s, g)
        return Outcome(
            (
                Alternative(
                    SUCCESS,
                    fx.ResetDevice(device_id),
                    "DEVICE-CALLS",
                    "resetting a set device succeeds",
                ),
            )
        )

    # -- the suite's tools and process state --------------------------------
    def rule_launch_gate(self, world: World, thread: int, stream: int) -> Outcome:
        checks: list[Check] = []
        device = self._device(world, thread, checks)
        target = self._stream(world, stream, device, checks)
        if target is None:
            return self.fold(checks, _impossible)
        return self.fold(
            checks,
            Alternative(SUCCESS, fx.LaunchGate(target), None, "enqueueing the gate succeeds"),
        )

    def rule_open_gate(self, world: World, thread: int, gate: int) -> Outcome:
        return Outcome((Alternative(SUCCESS, fx.OpenGate(gate), None, "opening a gate"),))

    def rule_get_version_str(self, world: World, thread: int) -> Outcome:
        return Outcome(
            (
                Alternative(SUCCESS, fx.Nothing(), None, "the version string"),
                Alternative(
                    ANY_ERROR, None, None, "no version file (ACL_ERROR_INVALID_FILE on CANN)"
                ),
            )
        )

    def rule_init(self, world: World, thread: int, config_path: str | None = None) -> Outcome:
        if world.initialized:
            checks = [
                Check(
                    "INIT-CALLS",
                    "aclInit was already called",
                    ACL_ERROR_REPEAT_INITIALIZE,
                    MAY,
                    MUST,
                )
            ]
            return self.fold(
                checks, Alternative(SUCCESS, None, "INIT-CALLS", "a repeated aclInit may succeed")
            )
        return Outcome(
            (Alternative(SUCCESS, fx.Init(), "INIT-CALLS", "the first aclInit succeeds"),)
        )

    def rule_finalize(self, world: World, thread: int) -> Outcome:
        if not world.initialized:
            code = ACL_ERROR_REPEAT_FINALIZE if world.finalized else None
            checks = [Check("INIT-CALLS", "aclFinalize without a live aclInit", code, MAY, MUST)]
            return self.fold(
                checks,
                Alternative(SUCCESS, None, "INIT-CALLS", "a repeated aclFinalize may succeed"),
            )
        return Outcome(
            (
                Alternative(
                    SUCCESS, fx.Finalize(), "INIT-CALLS", "aclFinalize after aclInit succeeds"
                ),
            )
        )


_impossible = Alternative(SUCCESS, None, None, "")
"""A placeholder success for calls that cannot succeed; fold drops it unless a
check said the call may go on, in which case success without effect is allowed."""


def _shadowed(outcome: Outcome, shadow: list[str]) -> Outcome:
    """``outcome`` with ``shadow`` as what a rejection with a wrong code could be charged
    to as well (see Alternative.shadow)."""
    if not shadow:
        return outcome
    return Outcome(
        tuple(
            a
            if ACL_SUCCESS in a.codes
            else dataclasses.replace(
                a, shadow=tuple(r for r in dict.fromkeys(shadow) if r != a.requirement)
            )
            for a in outcome.alternatives
        )
    )


def _failing_after(checks: list[Check], profile: str) -> tuple[str, ...]:
    """What else a call that fails several checks at once puts at stake: the other checks'
    requirements, and CHECK-ORDER (which one decides the code)."""
    reqs = [c.requirement for c in checks if c.requirement and getattr(c, profile) == MUST]
    return (*dict.fromkeys(reqs), "CHECK-ORDER") if reqs else ()


def _one(codes: Codes, effect: object | None, requirement: str | None, why: str) -> Outcome:
    """An outcome with a single alternative."""
    return Outcome((Alternative(codes, effect, requirement, why),))


def _blocked_outcome(requirement: str, stream: Stream, gate: Gate) -> Outcome:
    """A call that must wait for ``stream`` while a closed gate is ahead of its tasks: no
    success yet.  A gate on another stream holds it through an event wait, so a success
    may as well mean that the wait did not order anything."""
    through_event = gate.task.queue != stream.queue.key
    return Outcome(
        (
            Alternative(
                ANY_ERROR,
                None,
                requirement,
                f"gate {gate.gid} ahead in {stream.name} is closed: the call cannot return success before it opens",
                also=("STREAM-EVENT-ORDER",) if through_event else (),
            ),
        )
    )


class CannProfile(Profile):
    """The exact codes and order of checks of the open-source CANN runtime."""

    name = "cann"
    destroy_waits = True

    def fold(self, checks: list[Check], success: Alternative) -> Outcome:
        branches: list[Alternative] = []
        for i, c in enumerate(checks):
            if c.cann is None:
                continue
            later = _failing_after(checks[i + 1 :], "cann")
            alt = Alternative(
                Codes.only(c.code) if c.code is not None else ANY_ERROR,
                None,
                c.requirement,
                c.why,
                later,
            )
            if c.cann == MUST:
                return Outcome((alt, *branches))
            branches.append(alt)
        return Outcome((success, *branches))

    def count_zero(self, requirement: str) -> Outcome:
        return Outcome(
            (
                Alternative(
                    SUCCESS,
                    None,
                    requirement,
                    "count == 0 returns ACL_SUCCESS before any other check",
                ),
            )
        )

    def pinned_path(self, rng: HostRange) -> tuple[bool, bool]:
        # Only the start pointer decides (register_memory.cc:20-40); a registration made on
        # memory since freed may or may not still hold.
        if rng.start_pinned:
            return True, False
        return (True, True) if rng.start_stale else (False, False)


class SpecProfile(Profile):
    """What the text says; any rejection code; every reasonable behaviour where silent."""

    name = "spec"

    def fold(self, checks: list[Check], success: Alternative) -> Outcome:
        musts = [c for c in checks if c.spec == MUST]
        if musts:
            return Outcome(
                (
                    Alternative(
                        ANY_ERROR,
                        None,
                        musts[0].requirement,
                        "; ".join(c.why for c in musts),
                        _failing_after(musts[1:], "spec"),
                    ),
                )
            )
        mays = [c for c in checks if c.spec == MAY]
        if mays:
            rejection = Alternative(
                ANY_ERROR, None, mays[0].requirement, "; ".join(c.why for c in mays)
            )
            return Outcome((success, rejection))
        return Outcome((success,))

    def count_zero(self, requirement: str) -> Outcome:
        return Outcome(
            (
                Alternative(SUCCESS, None, requirement, "count == 0 copies nothing"),
                Alternative(
                    ANY_ERROR,
                    None,
                    requirement,
                    "the text does not say whether count == 0 is an error",
                ),
            )
        )

    def pinned_path(self, rng: HostRange) -> tuple[bool, bool]:
        if rng.all_pinned:
            return True, False
        if not rng.any_pinned and not rng.any_stale:
            return False, False
        # Partly page-locked: judged as pinned for memory (the weaker claim), and
        # the call may or may not wait.
        return True, True


def get_profile(name: str) -> Profile:
    """The profile called ``name`` (``spec`` or ``cann``)."""
    if name == "spec":
        return SpecProfile()
    if name == "cann":
        return CannProfile()
    raise ValueError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}")
