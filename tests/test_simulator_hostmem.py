"""Simulator: host memory (pinned, pageable, registered), byte access, and what each means for copies."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from test_simulator_fixtures import SCHEDULES
from test_simulator_fixtures import eager_fixture  # noqa: F401 (the fixture eager)
from test_simulator_fixtures import open_simulator
from test_simulator_support import D2H
from test_simulator_support import H2D
from test_simulator_support import OpenLater
from test_simulator_support import bounded
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import initial
from test_simulator_support import read_var
from test_simulator_support import sym

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_MEMORY_ALLOCATION
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_HOST_REG_IOMEMORY
from acl_conformance.reference_impl.constants import ACL_HOST_REG_MAPPED
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED
from acl_conformance.reference_impl.constants import ACL_HOST_REG_READONLY

SIZE_MAX = 2**64 - 1
DELAY = 0.4


@pytest.fixture(params=SCHEDULES)
def sim(request: pytest.FixtureRequest) -> Iterator[Simulator]:
    yield from open_simulator(schedule=request.param, seed=11)


def is_pinned_path(sim: Simulator, src: int, count: int = 1) -> bool:
    """Observe which path a copy from ``src`` takes: behind a closed gate, a pinned copy
    returns at once and a pageable one waits (here: until the timer opens the gate)."""
    g = gate(sim)
    opener = OpenLater(sim, g, DELAY)
    code, returned = bounded(
        sim, lambda: sim.memcpy_to_symbol_async(sym(sim, "g_arr4k"), src, count, 0, H2D, 0)
    )
    assert code == 0
    pinned = opener.opened_at is None or returned < opener.opened_at
    if pinned:
        opener.cancel()
        sim.open_gate(g)
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    return pinned


# -- allocation ------------------------------------------------------------------------------
def test_malloc_host_checks(eager: Simulator) -> None:
    sim = eager
    assert sim.malloc_host(0) == (ACL_ERROR_INVALID_PARAM, 0)
    assert sim.malloc_host(16, null_host_ptr=True) == (ACL_ERROR_INVALID_PARAM, 0)
    assert sim.malloc_host(SIZE_MAX) == (ACL_ERROR_RT_MEMORY_ALLOCATION, 0)
    addresses = set()
    for size in (1, 3, 64, 100, 4096, 5000):
        code, ptr = sim.malloc_host(size)
        assert code == 0 and ptr % 64 == 0
        assert sim.read_host(ptr, size) == (0, bytes(size))
        addresses.add(ptr)
    assert len(addresses) == 6


def test_host_limit_option() -> None:
    with Simulator(host_limit=1000) as sim:
        assert sim.malloc_host(1000)[0] == 0
        assert sim.malloc_host(1001) == (ACL_ERROR_RT_MEMORY_ALLOCATION, 0)
        assert sim.malloc_pageable(1001) == (ACL_ERROR_RT_MEMORY_ALLOCATION, 0)


def test_free_host_checks(eager: Simulator) -> None:
    sim = eager
    _, ptr = sim.malloc_host(128)
    _, pageable = sim.malloc_pageable(128)
    assert sim.free_host(0) == ACL_ERROR_INVALID_PARAM
    assert sim.free_host(ptr + 64) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.free_host(pageable) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.free_host(0x1000) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.free_host(ptr) == 0
    assert sim.free_host(ptr) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.read_host(ptr, 1) == (ACL_ERROR_INVALID_PARAM, b"")


def test_malloc_and_free_pageable(eager: Simulator) -> None:
    sim = eager
    ptrs = []
    for size in (0, 1, 4095, 4096, 10000):
        code, ptr = sim.malloc_pageable(size)
        assert code == 0 and ptr != 0 and ptr % 4096 == 0
        ptrs.append(ptr)
    assert len(set(ptrs)) == len(ptrs)
    _, pinned = sim.malloc_host(64)
    assert sim.free_pageable(0) == 0
    assert sim.free_pageable(ptrs[2] + 1) == ACL_ERROR_INVALID_PARAM
    assert sim.free_pageable(pinned) == ACL_ERROR_INVALID_PARAM
    assert sim.free_pageable(0x1000) == ACL_ERROR_INVALID_PARAM
    for ptr in ptrs:
        assert sim.free_pageable(ptr) == 0
    assert sim.free_pageable(ptrs[0]) == ACL_ERROR_INVALID_PARAM
    assert sim.malloc_pageable(SIZE_MAX) == (ACL_ERROR_RT_MEMORY_ALLOCATION, 0)


def test_addresses_are_never_reused(eager: Simulator) -> None:
    _, a = eager.malloc_pageable(64)
    assert eager.free_pageable(a) == 0
    _, b = eager.malloc_pageable(64)
    assert a != b
    assert eager.write_host(a, b"x") == ACL_ERROR_INVALID_PARAM


# -- byte access ------------------------------------------------------------------------
@pytest.mark.parametrize("memory", ["pinned", "pageable"])
def test_write_and_read_host(eager: Simulator, memory: str) -> None:
    sim = eager
    ptr = host(sim, bytes(100), memory)
    assert sim.write_host(ptr + 10, b"hello") == 0
    assert sim.read_host(ptr + 8, 9) == (0, b"\0\0hello\0\0")
    assert sim.read_host(ptr, 100)[1][10:15] == b"hello"
    assert sim.write_host(ptr + 99, b"z") == 0
    assert sim.write_host(ptr + 99, b"zz") == ACL_ERROR_INVALID_PARAM  # runs past the end
    assert sim.read_host(ptr + 99, 2) == (ACL_ERROR_INVALID_PARAM, b"")
    assert sim.write_host(ptr + 100, b"z") == ACL_ERROR_INVALID_PARAM
    assert sim.write_host(ptr - 1, b"z") == ACL_ERROR_INVALID_PARAM
    assert sim.write_host(0, b"z") == ACL_ERROR_INVALID_PARAM
    assert sim.read_host(0x1234, 1) == (ACL_ERROR_INVALID_PARAM, b"")
    assert sim.write_host(ptr, b"") == 0
    assert sim.read_host(ptr + 5, 0) == (0, b"")
    assert sim.read_host(ptr, 100)[1][99:] == b"z"


# -- registration -------------------------------------------------------------------------
def test_host_register_checks(eager: Simulator) -> None:
    sim = eager
    _, page = sim.malloc_pageable(3 * 4096)
    _, pinned = sim.malloc_host(4096)
    assert sim.host_register(0, 4096) == ACL_ERROR_INVALID_PARAM
    assert sim.host_register(page, 0) == ACL_ERROR_INVALID_PARAM
    assert sim.host_register(page, 4096, 0) == ACL_ERROR_INVALID_PARAM
    assert sim.host_register(page, 4096, 0x1) == ACL_ERROR_INVALID_PARAM
    assert sim.host_register(page + 64, 64) == ACL_ERROR_INVALID_PARAM  # not 4 KiB aligned
    assert sim.host_register(page + 64, 0) == ACL_ERROR_INVALID_PARAM
    assert sim.host_register(page, 3 * 4096 + 1) == ACL_ERROR_RT_PARAM_INVALID  # past the buffer
    assert sim.host_register(0x7000_0000_0000, 4096) == ACL_ERROR_RT_PARAM_INVALID
    assert sim.host_register(pinned, 4096) == ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
    assert sim.host_register(page + 4096, 4096) == 0
    assert sim.host_register(page + 4096, 4096) == ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
    assert sim.host_register(page, 4097) == ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED  # overlap
    assert sim.host_register(page, 4096) == 0  # adjacent, not overlapping
    assert sim.host_register(page + 2 * 4096, 100) == 0  # any size
    assert sim.host_unregister(page) == 0


@pytest.mark.parametrize(
    "flag",
    [
        ACL_HOST_REG_PINNED,
        ACL_HOST_REG_MAPPED,
        ACL_HOST_REG_PINNED | ACL_HOST_REG_MAPPED,
        ACL_HOST_REG_IOMEMORY,
        ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED,
    ],
)
def test_host_register_known_flags(eager: Simulator, flag: int) -> None:
    _, page = eager.malloc_pageable(4096)
    assert eager.host_register(page, 4096, flag) == 0
    assert eager.host_unregister(page) == 0


def test_host_unregister_checks(eager: Simulator) -> None:
    sim = eager
    _, page = sim.malloc_pageable(8192)
    _, pinned = sim.malloc_host(64)
    assert sim.host_unregister(0) == ACL_ERROR_INVALID_PARAM
    assert sim.host_unregister(page) == ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
    assert sim.host_unregister(pinned) == ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
    assert sim.host_register(page, 8192) == 0
    assert sim.host_unregister(page + 4096) == ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
    assert sim.host_unregister(page) == 0
    assert sim.host_unregister(page) == ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
    assert sim.host_register(page, 8192) == 0  # registrable again


def test_registration_survives_free_as_a_stale_entry(eager: Simulator) -> None:
    sim = eager
    _, page = sim.malloc_pageable(4096)
    assert sim.host_register(page, 4096) == 0
    assert sim.free_pageable(page) == 0
    # A copy from the freed memory is rejected (no live buffer); the table entry remains.
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), page, 1, 0, H2D, 0) == 107000
    assert sim.host_unregister(page) == 0


# -- what a buffer's memory means for a copy --------------------------------------------------
def test_pinned_registered_and_pageable_paths(sim: Simulator) -> None:
    pinned = host(sim, b"a" * 64, "pinned")
    pageable = host(sim, b"b" * 64, "pageable")
    registered = host(sim, b"c" * 64, "registered")
    assert is_pinned_path(sim, pinned)
    assert not is_pinned_path(sim, pageable)
    assert is_pinned_path(sim, registered)
    assert sim.host_unregister(registered) == 0
    assert not is_pinned_path(sim, registered)  # unregistered: pageable again
    assert read_var(sim, "g_arr4k", 0, 1) == b"c"


def test_pinned_ness_is_decided_by_the_start_pointer(eager: Simulator) -> None:
    sim = eager
    _, page = sim.malloc_pageable(3 * 4096)
    assert sim.write_host(page, b"s" * (3 * 4096)) == 0
    assert sim.host_register(page + 4096, 4096) == 0
    # Starts inside the registered page, runs past it: pinned.
    assert is_pinned_path(sim, page + 4096 + 4000, 200)
    # Starts before the registered page, runs into it: pageable.
    assert not is_pinned_path(sim, page + 4000, 200)
    assert is_pinned_path(sim, page + 4096)
    assert not is_pinned_path(sim, page + 2 * 4096)


def test_pageable_source_overwritten_after_return_does_not_change_the_result(
    sim: Simulator,
) -> None:
    src = host(sim, b"\x10\x20\x30\x40", "pageable")
    g = gate(sim)
    opener = OpenLater(sim, g, DELAY)
    code, _ = bounded(sim, lambda: sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0))
    assert code == 0 and opener.opened_at is not None
    assert sim.write_host(src, b"\xff\xff\xff\xff") == 0
    assert sim.free_pageable(src) == 0
    assert bounded(sim, lambda: sim.synchronize_device())[0] == 0
    assert read_var(sim, "g_u32") == b"\x10\x20\x30\x40"


@pytest.mark.parametrize("pinned_read", ["execute", "call"])
def test_pinned_source_changed_before_the_gate_opens(pinned_read: str) -> None:
    with Simulator(pinned_read=pinned_read) as sim:
        assert sim.set_device(0) == 0
        src = host(sim, b"old!", "pinned")
        g = gate(sim)
        code, _ = bounded(
            sim, lambda: sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0)
        )
        assert code == 0
        assert sim.write_host(src, b"new!") == 0
        assert sim.open_gate(g) == 0
        assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
        # "execute": read when the task runs (after the change); "call": read at the call.
        assert read_var(sim, "g_u32") == (b"new!" if pinned_read == "execute" else b"old!")


def test_pinned_from_symbol_writes_host_memory_only_when_it_runs(sim: Simulator) -> None:
    dst = host(sim, b"\0" * 8, "registered")
    g = gate(sim)
    code, _ = bounded(
        sim, lambda: sim.memcpy_from_symbol_async(dst, 8, sym(sim, "g_u64"), 8, 0, D2H, 0)
    )
    assert code == 0
    time.sleep(0.02)
    assert sim.read_host(dst, 8) == (0, bytes(8))
    sim.open_gate(g)
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    assert sim.read_host(dst, 8) == (0, initial(sim, "g_u64"))


def test_freeing_a_pinned_source_while_its_copy_is_pending_does_not_crash(eager: Simulator) -> None:
    sim = eager
    src = host(sim, b"\x44", "pinned")
    g = gate(sim)
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, 0) == 0
    assert sim.free_host(src) == 0
    sim.open_gate(g)
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    assert len(read_var(sim, "g_u8")) == 1  # some byte; C would read freed memory


def test_host_reuse_hands_freed_addresses_out_again() -> None:
    """host_reuse (a legal variant): a freed range is handed out again, first fit, and a
    registration never undone outlives the free (as CANN's process-global table does)."""
    sim = Simulator(host_reuse=True)
    try:
        assert sim.set_device(0) == 0
        code, a = sim.malloc_pageable(8192)
        assert code == 0
        assert sim.host_register(a, 4096) == 0
        assert sim.free_pageable(a) == 0
        code, b = sim.malloc_pageable(4096)
        assert (code, b) == (0, a)
        assert is_pinned_path(sim, b)  # the registration applies to the new memory
        assert sim.host_register(b, 4096) == ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
        assert sim.host_unregister(b) == 0
        assert not is_pinned_path(sim, b)
        code, c = sim.malloc_pageable(100)  # what is left of the freed range, after b
        assert code == 0 and c > b
    finally:
        sim.close()


def test_addresses_are_never_reused_by_default(eager: Simulator) -> None:
    _code, a = eager.malloc_pageable(64)
    assert eager.free_pageable(a) == 0
    assert eager.malloc_pageable(64)[1] != a
