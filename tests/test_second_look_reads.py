"""An asynchronous read whose destination still holds what it held before, once a
synchronisation covered it: charged to the promise of completion when the read ran late,
to the read (FROMSYMBOL-BYTES) when it did not leave the variable's bytes there at all
(issue 34: a read that ignores its offset and finds at offset 0 what its destination
held was charged to PINNED-COMPLETE-AFTER-SYNC, a bystander)."""

from __future__ import annotations

from typing import Any

import pytest

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.variants.corner_mutants import FromBothIgnoreOffset
from acl_conformance.adapters.variants.mutants import SyncReturnsEarly
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.harness import Harness

PROFILES = ("spec", "cann")


class AsyncReadWritesNothing(Simulator):
    """aclrtMemcpyFromSymbolAsync into page-locked memory answers success and writes nothing."""

    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int:
        if count and self._host.is_pinned(dst):
            code, _strm, _ctx = self._stream(stream)  # the handle checks, then nothing
            return code
        return super().memcpy_from_symbol_async(dst, dst_max, symbol, count, offset, kind, stream)


def _harness(adapter: Any, profile: str) -> Harness:
    adapter.init(None)
    h = Harness(adapter, profile, call_timeout=30.0)
    h.model.world.initialized = True
    h.call("set_device", device_id=0)
    return h


def _two_reads(h: Harness) -> None:
    """g_u32 filled with known bytes; byte 0, then byte 3, read asynchronously into the
    same page-locked byte, each synchronised (what test_bounds' boundary reads do)."""
    s = h.stream()
    fill = h.pinned(4, ops.pattern(41, 4))
    assert ops.to_symbol_async(h, "g_u32", fill, count=4, stream=s).ok
    ops.sync(h, s)
    dst = h.pinned(1, b"\xee")
    for offset in (0, 3):
        assert ops.from_symbol_async(h, dst, "g_u32", count=1, offset=offset, stream=s).ok
        ops.sync(h, s)
        assert h.read(dst) == ops.pattern(41, 4)[offset : offset + 1]


def _failure(adapter: Any, profile: str) -> ConformanceFailure:
    h = _harness(adapter, profile)
    try:
        with pytest.raises(ConformanceFailure) as exc:
            _two_reads(h)
        return exc.value
    finally:
        h.close()
        h.adapter.close()


@pytest.mark.parametrize("profile", PROFILES)
def test_a_correct_backend_passes(profile: str) -> None:
    h = _harness(Simulator(), profile)
    try:
        _two_reads(h)
    finally:
        h.close()
        h.adapter.close()


@pytest.mark.parametrize("profile", PROFILES)
def test_a_read_of_the_wrong_place_is_charged_to_the_read(profile: str) -> None:
    f = _failure(FromBothIgnoreOffset(), profile)
    assert f.requirement == "FROMSYMBOL-BYTES", str(f)
    assert "PINNED-COMPLETE-AFTER-SYNC" in f.also  # the other reading, named
    assert "aclrtMemcpyFromSymbolAsync(" in str(f) and "still holds what it held" in str(f)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_read_that_writes_nothing_is_charged_to_the_read(profile: str) -> None:
    f = _failure(AsyncReadWritesNothing(), profile)
    assert f.requirement == "FROMSYMBOL-BYTES", str(f)
    assert "PINNED-COMPLETE-AFTER-SYNC" in f.also


@pytest.mark.parametrize("profile", PROFILES)
def test_a_read_that_ran_late_is_charged_to_the_promise(profile: str) -> None:
    # a lazy device whose aclrtSynchronizeStream does not wait: the read runs when the
    # second look synchronises the device, and the destination changes
    f = _failure(SyncReturnsEarly(), profile)
    assert f.requirement == "PINNED-COMPLETE-AFTER-SYNC", str(f)
    assert "the read ran, late" in str(f)
