"""Short forms of the calls the clause tests make, in the spec's own words.

Every function goes through the harness, so every call is judged by the model.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer

# The kinds' short forms, re-exported for test authors (``ops.H2D``).
from acl_conformance.reference_impl.constants import D2H as D2H
from acl_conformance.reference_impl.constants import DEFAULT as DEFAULT
from acl_conformance.reference_impl.constants import H2D as H2D
from acl_conformance.reference_impl.record import CallRecord

NULL = 0
"""The NULL pointer or handle; as a stream, the default stream."""


def symbol(h: Harness, name: str) -> int:
    """The host shadow address of fixture variable ``name`` (``&name`` in C)."""
    return h.fixtures[name].address


def size(h: Harness, name: str) -> int:
    return h.fixtures[name].size


def _to_symbol_args(
    h: Harness,
    var: str,
    src: HostBuffer | int,
    count: int,
    offset: int,
    kind: int,
    src_offset: int,
    sym: int | None,
) -> dict[str, Any]:
    """The arguments aclrtMemcpyToSymbol and aclrtMemcpyToSymbolAsync share (all but the
    stream)."""
    return dict(
        symbol=symbol(h, var) if sym is None else sym,
        src=src.at(src_offset) if isinstance(src, HostBuffer) else src,
        count=count,
        offset=offset,
        kind=kind,
    )


def _from_symbol_args(
    h: Harness, dst: HostBuffer, var: str, count: int, offset: int, kind: int, dst_max: int | None
) -> dict[str, Any]:
    """The arguments aclrtMemcpyFromSymbol and aclrtMemcpyFromSymbolAsync share (all but
    the stream)."""
    return dict(
        dst=dst.address,
        dst_max=dst.size if dst_max is None else dst_max,
        symbol=symbol(h, var),
        count=count,
        offset=offset,
        kind=kind,
    )


def to_symbol_async(
    h: Harness,
    var: str,
    src: HostBuffer | int,
    count: int,
    offset: int = 0,
    kind: int = H2D,
    stream: int | None = None,
    src_offset: int = 0,
    sym: int | None = None,
) -> CallRecord:
    """aclrtMemcpyToSymbolAsync(&var, src + src_offset, count, offset, kind, stream);
    ``stream`` None: any stream (the default one where the backend has it)."""
    return h.call(
        "memcpy_to_symbol_async",
        **_to_symbol_args(h, var, src, count, offset, kind, src_offset, sym),
        stream=h.any_stream() if stream is None else stream,
    )


def to_symbol(
    h: Harness,
    var: str,
    src: HostBuffer | int,
    count: int,
    offset: int = 0,
    kind: int = H2D,
    src_offset: int = 0,
) -> CallRecord:
    """aclrtMemcpyToSymbol(&var, src + src_offset, count, offset, kind)."""
    return h.call(
        "memcpy_to_symbol", **_to_symbol_args(h, var, src, count, offset, kind, src_offset, None)
    )


def write_variable(
    h: Harness, var: str, src: HostBuffer, count: int, src_offset: int = 0
) -> CallRecord:
    """Write ``count`` bytes of ``src`` (from ``src_offset``) to the start of ``var``, complete
    when it returns, for a test that needs the bytes there (not one of the call):
    aclrtMemcpyToSymbol.  When that call hung or raised earlier in the run (its situation
    is declined), aclrtMemcpyToSymbolAsync on a stream of the test's own, then that
    stream's synchronisation, so that the test goes on and decides what it checks
    without the call that failed."""
    if h.backend.would_hang("memcpy_to_symbol", {}) is None:
        return to_symbol(h, var, src, count=count, src_offset=src_offset)
    s = h.stream()
    r = to_symbol_async(h, var, src, count=count, stream=s, src_offset=src_offset)
    sync(h, s)
    return r


def from_symbol(
    h: Harness,
    dst: HostBuffer,
    var: str,
    count: int,
    offset: int = 0,
    kind: int = D2H,
    dst_max: int | None = None,
) -> CallRecord:
    """aclrtMemcpyFromSymbol(dst, dstMax, &var, count, offset, kind)."""
    return h.call(
        "memcpy_from_symbol", **_from_symbol_args(h, dst, var, count, offset, kind, dst_max)
    )


def from_symbol_async(
    h: Harness,
    dst: HostBuffer,
    var: str,
    count: int,
    offset: int = 0,
    kind: int = D2H,
    stream: int | None = None,
    dst_max: int | None = None,
) -> CallRecord:
    """aclrtMemcpyFromSymbolAsync(dst, dstMax, &var, count, offset, kind, stream)."""
    return h.call(
        "memcpy_from_symbol_async",
        **_from_symbol_args(h, dst, var, count, offset, kind, dst_max),
        stream=h.any_stream() if stream is None else stream,
    )


def sync(h: Harness, stream: int | None = None) -> CallRecord:
    return h.call("synchronize_stream", stream=h.any_stream() if stream is None else stream)


def sync_device(h: Harness) -> CallRecord:
    """Wait for every task of the current device before looking: aclrtSynchronizeDevice.
    When that call hung earlier in the run (its situation is declined), the device's
    streams are synchronised one by one instead (``Harness.drain_streams``), so that the
    test goes on and decides what it checks without the call that hung.  A test of
    aclrtSynchronizeDevice itself makes the call (``h.call``)."""
    if h.backend.would_hang("synchronize_device", {}) is None:
        return h.call("synchronize_device")
    return h.drain_streams()


def event(h: Harness) -> int:
    r = h.call("create_event")
    return int(r["event"])


def record(h: Harness, ev: int, stream: int) -> CallRecord:
    return h.call("record_event", event=ev, stream=stream)


def wait(h: Harness, stream: int, ev: int) -> CallRecord:
    return h.call("stream_wait_event", stream=stream, event=ev)


def destroyed_stream(h: Harness) -> int:
    """A stream handle that was created and destroyed."""
    s = h.stream()
    h.call("destroy_stream", stream=s)
    return s


_PERIOD = 251 * 256
"""The sequence repeats after this many bytes (i * 29 repeats after 251, i >> 8 after
251 * 256)."""


@functools.lru_cache(maxsize=1)
def _base() -> np.ndarray:
    i = np.arange(_PERIOD, dtype=np.int64)
    return ((i * 29 + (i >> 8) * 11) % 251).astype(np.int16)


def pattern(tag: int, n: int) -> bytes:
    """n bytes no other write of the test has: ``tag`` picks the sequence.  Byte ``i`` is
    ``(tag * 73 + i * 29 + (i >> 8) * 11) % 251 + 1``: never 0, and a run of it found
    elsewhere tells which write and which offset it came from."""
    block = ((_base() + (tag * 73) % 251) % 251 + 1).astype(np.uint8)
    if n <= _PERIOD:
        return block[:n].tobytes()
    return np.resize(block, n).tobytes()
