"""The simulator's copies into and out of symbols: effects, stream order, synchronous copies, from-symbol checks, and a property against a byte model."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from simulator_symbols_support import FROM_CASES
from simulator_symbols_support import SMALL
from simulator_symbols_support import STANDARD
from simulator_symbols_support import SYNC_TO_CASES
from simulator_symbols_support import case_args
from simulator_symbols_support import changed
from simulator_symbols_support import copy_op
from simulator_symbols_support import shared_fixture  # noqa: F401 (a fixture, by its name= )
from simulator_symbols_support import sim_fixture  # noqa: F401 (a fixture, by its name= )
from simulator_symbols_support import snapshot
from simulator_symbols_support import var_range
from test_simulator_fixtures import bare_fixture  # noqa: F401 (the fixture bare)
from test_simulator_fixtures import open_simulator  # noqa: F401 (the fixture bare)
from test_simulator_support import D2H
from test_simulator_support import DEFAULT
from test_simulator_support import H2D
from test_simulator_support import bounded
from test_simulator_support import gate
from test_simulator_support import host
from test_simulator_support import initial
from test_simulator_support import read_var
from test_simulator_support import sym
from test_simulator_support import symbols

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT


# -- effects ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, size", STANDARD)
@pytest.mark.parametrize("where", ["first", "last", "whole"])
def test_copy_changes_exactly_the_range_and_no_neighbour(
    sim: Simulator, name: str, size: int, where: str
) -> None:
    offset, count = {"first": (0, 1), "last": (size - 1, 1), "whole": (0, size)}[where]
    old = initial(sim, name)
    data = bytes((~old[offset + i]) & 0xFF for i in range(min(count, 4096)))
    data = (data * (count // len(data) + 1))[:count]
    src = host(sim, data, "pinned")
    before = snapshot(sim)
    assert sim.memcpy_to_symbol_async(sym(sim, name), src, count, offset, H2D, 0) == 0
    assert sim.synchronize_stream(0) == 0
    after = snapshot(sim)
    start, _ = var_range(sim, name)
    assert changed(before, after) == (start + offset, start + offset + count)
    assert after[start + offset : start + offset + count].tobytes() == data
    for other, _ in STANDARD:
        if other != name and symbols(sim)[other].size <= 4096:
            assert read_var(sim, other) == initial(sim, other)


def test_later_copy_in_the_same_stream_wins(sim: Simulator) -> None:
    a = host(sim, b"A" * 16, "pinned")
    b = host(sim, b"B" * 16, "pinned")
    g = gate(sim)
    assert sim.memcpy_to_symbol_async(sym(sim, "g_arr256"), a, 16, 0, H2D, 0) == 0
    assert sim.memcpy_to_symbol_async(sym(sim, "g_arr256"), b, 8, 4, H2D, 0) == 0
    assert sim.open_gate(g) == 0
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    assert read_var(sim, "g_arr256", 0, 16) == b"AAAA" + b"B" * 8 + b"AAAA"


def test_sync_copy_is_done_at_the_call_outside_every_stream(sim: Simulator) -> None:
    gate(sim)  # the default stream is blocked and stays so
    src = host(sim, b"\x11\x22\x33\x44", "pinned")
    code, _ = bounded(sim, lambda: sim.memcpy_to_symbol(sym(sim, "g_u32"), src, 4, 0, H2D))
    assert code == 0
    assert read_var(sim, "g_u32") == b"\x11\x22\x33\x44"
    pageable = host(sim, b"\x55", "pageable")
    assert (
        bounded(sim, lambda: sim.memcpy_to_symbol(sym(sim, "g_u8"), pageable, 1, 0, DEFAULT))[0]
        == 0
    )
    assert read_var(sim, "g_u8") == b"\x55"


@pytest.mark.parametrize("case", sorted(SYNC_TO_CASES))
def test_to_symbol_sync_checks(sim: Simulator, case: str) -> None:
    src = host(sim, b"\x01\x02\x03\x04", "pageable")
    base = {"symbol": sym(sim, "g_u64"), "src": src, "count": 4, "offset": 0, "kind": H2D}
    args, expected = case_args(base, SYNC_TO_CASES[case], base["symbol"] + 4, "src", src + 1)
    before = snapshot(sim)
    assert sim.memcpy_to_symbol(**args) == expected  # type: ignore[arg-type]
    if expected or args["count"] == 0:
        assert changed(before, snapshot(sim)) is None
    else:
        assert read_var(sim, "g_u64", 4, 4) == b"\x01\x02\x03\x04"


@pytest.mark.parametrize("call", ["memcpy_from_symbol", "memcpy_from_symbol_async"])
@pytest.mark.parametrize("dst_kind", ["pinned", "pageable"])
@pytest.mark.parametrize("case", sorted(FROM_CASES))
def test_from_symbol_checks(sim: Simulator, call: str, dst_kind: str, case: str) -> None:
    dst = host(sim, bytes(8), dst_kind)
    symbol = sym(sim, "g_struct12")
    base = {"dst": dst + 4, "dst_max": 4, "symbol": symbol, "count": 4, "offset": 8, "kind": D2H}
    args, expected = case_args(base, FROM_CASES[case], symbol + 8, "dst", dst + 5)
    if call.endswith("async"):
        args["stream"] = 0
    before = snapshot(sim)
    assert getattr(sim, call)(**args) == expected
    assert sim.synchronize_stream(0) == 0
    assert changed(before, snapshot(sim)) is None  # a read never writes the device
    got = sim.read_host(dst, 8)[1]
    if expected or args["count"] == 0:
        assert got == bytes(8)
    else:
        assert got == bytes(4) + initial(sim, "g_struct12")[8:12]


@pytest.mark.parametrize("dst_kind", ["pinned", "pageable"])
def test_from_symbol_async_stream_checks(sim: Simulator, dst_kind: str) -> None:
    dst = host(sim, bytes(4), dst_kind)
    s = sym(sim, "g_u32")
    _, dead = sim.create_stream()
    assert sim.destroy_stream(dead) == 0
    for bad in (dead, sim.invalid_handle(), 0x42):
        assert (
            sim.memcpy_from_symbol_async(dst, 4, s, 4, 0, D2H, bad) == ACL_ERROR_RT_INVALID_HANDLE
        )
    # Out of bounds is checked before the stream.
    assert sim.memcpy_from_symbol_async(dst, 4, s, 4, 1, D2H, dead) == ACL_ERROR_INVALID_PARAM
    assert sim.set_device(1) == 0
    _, foreign = sim.create_stream()
    assert sim.set_device(0) == 0
    expected = ACL_ERROR_RT_STREAM_CONTEXT if dst_kind == "pinned" else 0
    assert sim.memcpy_from_symbol_async(dst, 4, s, 4, 0, D2H, foreign) == expected
    assert sim.synchronize_device() == 0
    assert sim.read_host(dst, 4)[1] == (bytes(4) if expected else initial(sim, "g_u32"))


def test_from_symbol_async_pinned_is_a_task_in_stream_order(sim: Simulator) -> None:
    dst = host(sim, bytes(4), "pinned")
    src = host(sim, b"WXYZ", "pinned")
    g = gate(sim)
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u32"), src, 4, 0, H2D, 0) == 0
    code, _ = bounded(
        sim, lambda: sim.memcpy_from_symbol_async(dst, 4, sym(sim, "g_u32"), 4, 0, D2H, 0)
    )
    assert code == 0
    assert sim.read_host(dst, 4)[1] == bytes(4)  # not run: the gate is closed
    assert sim.open_gate(g) == 0
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    assert sim.read_host(dst, 4)[1] == b"WXYZ"  # ran after the earlier copy


def test_from_symbol_sync_reads_at_the_call(sim: Simulator) -> None:
    src = host(sim, b"\x99", "pinned")
    g = gate(sim)
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), src, 1, 0, H2D, 0) == 0
    assert bounded(sim, lambda: read_var(sim, "g_u8"))[0] == initial(sim, "g_u8")
    sim.open_gate(g)
    assert bounded(sim, lambda: sim.synchronize_stream(0))[0] == 0
    assert read_var(sim, "g_u8") == b"\x99"


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(copy_op, min_size=1, max_size=12))
def test_copy_sequences_match_a_byte_model(shared: Simulator, ops: list) -> None:
    sim = shared
    model = {name: bytearray(read_var(sim, name)) for name, _ in SMALL}
    buffers = []
    for (name, size), offset, count, how, seed in ops:
        data = bytes((seed + 3 * i) & 0xFF for i in range(count))
        src = host(sim, data, "pageable" if how == "sync" else how)
        buffers.append((src, how))
        if how == "sync":
            # A sync copy runs outside the stream: let the stream's earlier copies land
            # first, so that the model's order is the real one.
            assert sim.synchronize_stream(0) == 0
            code = sim.memcpy_to_symbol(sym(sim, name), src, count, offset, H2D)
        else:
            code = sim.memcpy_to_symbol_async(sym(sim, name), src, count, offset, DEFAULT, 0)
        assert code == (0 if count == 0 or offset + count <= size else ACL_ERROR_INVALID_PARAM)
        if code == 0:
            model[name][offset : offset + count] = data
    assert sim.synchronize_stream(0) == 0
    for name, _ in SMALL:
        assert read_var(sim, name) == bytes(model[name])
    for src, how in buffers:
        if how == "registered":
            assert sim.host_unregister(src) == 0
        assert (sim.free_host(src) if how == "pinned" else sim.free_pageable(src)) == 0
