"""Simulator: fixtures, symbols, the four symbol copies, bounds and kinds (CANN's codes and order)."""

from __future__ import annotations

import itertools

import pytest
from simulator_symbols_support import ALL_KINDS
from simulator_symbols_support import SIZE_MAX
from simulator_symbols_support import STANDARD
from simulator_symbols_support import TO_ASYNC_CASES
from simulator_symbols_support import _interior
from simulator_symbols_support import _padding
from simulator_symbols_support import _to_async_args
from simulator_symbols_support import changed
from simulator_symbols_support import shared_fixture  # noqa: F401 (a fixture, by its name= )
from simulator_symbols_support import sim_fixture  # noqa: F401 (a fixture, by its name= )
from simulator_symbols_support import snapshot
from simulator_symbols_support import var_range
from test_simulator_fixtures import bare_fixture  # noqa: F401 (the fixture bare)
from test_simulator_fixtures import open_simulator  # noqa: F401 (the fixture bare)
from test_simulator_support import D2H
from test_simulator_support import H2D
from test_simulator_support import expected_pattern
from test_simulator_support import host
from test_simulator_support import initial
from test_simulator_support import read_var
from test_simulator_support import sym

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_ERROR_FAILURE
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_SYMBOL


# -- fixtures and the symbol table --------------------------------------------------------
def test_fixtures_are_the_declared_shapes(sim: Simulator) -> None:
    assert [(v.name, v.size) for v in sim.fixtures()] == STANDARD


def test_shadow_ranges_are_disjoint_and_in_declaration_order(sim: Simulator) -> None:
    fx = sim.fixtures()
    assert fx[0].address >= 0x5555_0000_0000
    for a, b in itertools.pairwise(fx):
        assert a.address + a.size <= b.address


def test_variables_are_packed_next_to_each_other_in_device_memory(sim: Simulator) -> None:
    ranges = [var_range(sim, n) for n, _ in STANDARD]
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert end == start
    assert len(snapshot(sim, 0)) >= ranges[-1][1]


@pytest.mark.parametrize("name", [n for n, _ in STANDARD])
def test_initial_contents_follow_the_documented_pattern(sim: Simulator, name: str) -> None:
    data = read_var(sim, name)
    assert data == initial(sim, name)
    assert any(data)


def test_pattern_helper_matches_formula() -> None:
    # The helper itself: byte i of variable k is (k*37 + i*11 + 0x5A) & 0xFF.
    assert expected_pattern(0, 3) == bytes([0x5A, 0x65, 0x70])
    assert expected_pattern(2, 1) == bytes([(2 * 37 + 0x5A) & 0xFF])


def test_get_symbol_address_and_size_of_every_fixture(sim: Simulator) -> None:
    addresses = set()
    for v in sim.fixtures():
        code, dev_ptr = sim.get_symbol_address(v.address)
        assert code == 0 and dev_ptr != 0
        addresses.add(dev_ptr)
        assert sim.get_symbol_size(v.address) == (0, v.size)
    assert len(addresses) == len(STANDARD)


def test_symbol_address_is_per_device(sim: Simulator) -> None:
    s = sym(sim, "g_u32")
    on0 = sim.get_symbol_address(s)
    assert sim.set_device(1) == 0
    on1 = sim.get_symbol_address(s)
    assert on0[0] == on1[0] == 0 and on0[1] != on1[1]
    assert sim.get_symbol_size(s) == (0, 4)


@pytest.mark.parametrize("call", ["get_symbol_address", "get_symbol_size"])
@pytest.mark.parametrize(
    "case, null_out, device, expected",
    [
        ("null", False, True, ACL_ERROR_INVALID_PARAM),
        ("null", True, True, ACL_ERROR_INVALID_PARAM),
        ("null", False, False, ACL_ERROR_INVALID_PARAM),
        ("valid", True, True, ACL_ERROR_INVALID_PARAM),
        ("interior", True, True, ACL_ERROR_INVALID_PARAM),
        ("interior", True, False, ACL_ERROR_INVALID_PARAM),
        ("valid", False, False, ACL_ERROR_RT_CONTEXT_NULL),
        ("interior", False, False, ACL_ERROR_RT_CONTEXT_NULL),
        ("interior", False, True, ACL_ERROR_RT_INVALID_SYMBOL),
        ("padding", False, True, ACL_ERROR_RT_INVALID_SYMBOL),
        ("garbage", False, True, ACL_ERROR_RT_INVALID_SYMBOL),
        ("past_last", False, True, ACL_ERROR_RT_INVALID_SYMBOL),
        ("valid", False, True, 0),
    ],
)
def test_symbol_query_checks(
    bare: Simulator, call: str, case: str, null_out: bool, device: bool, expected: int
) -> None:
    if device:
        assert bare.set_device(0) == 0
    last = bare.fixtures()[-1]
    symbol = {
        "null": 0,
        "valid": sym(bare, "g_u64"),
        "interior": _interior(bare),
        "padding": _padding(bare),
        "garbage": 0x1234,
        "past_last": last.address + last.size,
    }[case]
    fn = getattr(bare, call)
    code, out = fn(symbol, null_out)
    assert code == expected
    if expected:
        assert out == 0
    elif call == "get_symbol_size":
        assert out == 8


@pytest.mark.parametrize("name, size", STANDARD[:7])
def test_every_interior_pointer_of_small_variables_is_rejected(
    sim: Simulator, name: str, size: int
) -> None:
    base = sym(sim, name)
    for k in range(1, size):
        assert sim.get_symbol_size(base + k) == (ACL_ERROR_RT_INVALID_SYMBOL, 0)
    _, buf = sim.malloc_host(size)
    for k in range(1, size):
        assert sim.memcpy_to_symbol_async(base + k, buf, 1, 0, H2D, 0) == 107043


@pytest.mark.parametrize("case", sorted(TO_ASYNC_CASES))
def test_to_symbol_async_checks(sim: Simulator, case: str) -> None:
    args = _to_async_args(sim, case)
    before = snapshot(sim)
    code = sim.memcpy_to_symbol_async(**args)
    assert code == TO_ASYNC_CASES[case]
    assert sim.synchronize_device() == 0
    after = snapshot(sim)
    if code != 0 or args["count"] == 0:
        # Failure hygiene: nothing written anywhere, and the stream still works.
        assert changed(before, after) is None
        assert sim.stream_query(0) == (0, 0)
        ok = host(sim, b"\x01", "pinned")
        assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), ok, 1, 0, H2D, 0) == 0
        assert sim.synchronize_stream(0) == 0
        assert read_var(sim, "g_u8") == b"\x01"
    else:
        start, _ = var_range(sim, "g_arr256")
        expected = bytes(range(args["count"]))
        assert read_var(sim, "g_arr256", args["offset"], args["count"]) == expected
        span = changed(before, after)
        assert span is not None
        assert start + args["offset"] <= span[0] and span[1] <= start + args["offset"] + 256


def test_count_zero_succeeds_without_a_device(bare: Simulator) -> None:
    assert bare.memcpy_to_symbol_async(0, 0, 0, SIZE_MAX, 999, 0x99) == 0
    assert bare.memcpy_to_symbol(0, 0, 0, SIZE_MAX, 999) == 0
    assert bare.memcpy_from_symbol(0, 0, 0, 0, SIZE_MAX, 999) == 0
    assert bare.memcpy_from_symbol_async(0, 0, 0, 0, SIZE_MAX, 999, 0x99) == 0


def test_no_device_is_107002_after_the_argument_checks(bare: Simulator) -> None:
    _, buf = bare.malloc_host(8)
    s = sym(bare, "g_u64")
    assert bare.memcpy_to_symbol_async(s, buf, 4, 0, H2D, 0) == ACL_ERROR_RT_CONTEXT_NULL
    assert bare.memcpy_to_symbol_async(s + 1, buf, 4, SIZE_MAX, H2D, 0x5) == 107002
    assert bare.memcpy_to_symbol_async(s, buf, 4, 0, 2, 0) == ACL_ERROR_INVALID_PARAM
    assert bare.memcpy_to_symbol(s, buf, 4, 0, H2D) == ACL_ERROR_RT_CONTEXT_NULL
    assert bare.memcpy_from_symbol(buf, 8, s, 4, 0, D2H) == ACL_ERROR_RT_CONTEXT_NULL
    assert bare.memcpy_from_symbol(buf, 2, s, 4, 0, D2H) == ACL_ERROR_INVALID_PARAM
    assert bare.memcpy_from_symbol_async(buf, 8, s, 4, 0, D2H, 0) == ACL_ERROR_RT_CONTEXT_NULL


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_to_symbol_kinds(sim: Simulator, kind: int) -> None:
    buf = host(sim, b"\xab\xcd", "pinned")
    expected = 0 if kind in (1, 4) else ACL_ERROR_INVALID_PARAM
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u32"), buf, 2, 1, kind, 0) == expected
    assert sim.memcpy_to_symbol(sym(sim, "g_u64"), buf, 2, 1, kind) == expected
    assert sim.synchronize_stream(0) == 0
    old32, old64 = initial(sim, "g_u32"), initial(sim, "g_u64")
    if expected == 0:
        assert read_var(sim, "g_u32") == old32[:1] + b"\xab\xcd" + old32[3:]
        assert read_var(sim, "g_u64") == old64[:1] + b"\xab\xcd" + old64[3:]
    else:
        assert read_var(sim, "g_u32") == old32
        assert read_var(sim, "g_u64") == old64


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_from_symbol_kinds(sim: Simulator, kind: int) -> None:
    _, buf = sim.malloc_pageable(4)
    expected = 0 if kind in (2, 4) else ACL_ERROR_INVALID_PARAM
    assert sim.memcpy_from_symbol(buf, 4, sym(sim, "g_u32"), 4, 0, kind) == expected
    assert sim.memcpy_from_symbol_async(buf, 4, sym(sim, "g_u32"), 4, 0, kind, 0) == expected
    assert sim.read_host(buf, 4)[1] == (initial(sim, "g_u32") if expected == 0 else bytes(4))


def test_kind_is_passed_as_a_c_int(sim: Simulator) -> None:
    # (aclrtMemcpyKind)(2**32 + 1) is 1 in C: the simulator converts as C does.
    buf = host(sim, b"\x01", "pinned")
    assert sim.memcpy_to_symbol(sym(sim, "g_u8"), buf, 1, 0, 2**32 + 1) == 0
    assert sim.memcpy_to_symbol(sym(sim, "g_u8"), buf, 1, 0, 2**32 + 2) == 100000


def test_negative_size_arguments_wrap_like_size_t(sim: Simulator) -> None:
    buf = host(sim, b"\x01", "pinned")
    assert sim.memcpy_to_symbol_async(sym(sim, "g_u8"), buf, 1, -1, H2D, 0) == ACL_ERROR_FAILURE
    assert (
        sim.memcpy_to_symbol_async(sym(sim, "g_u8"), buf, -1, 0, H2D, 0) == ACL_ERROR_INVALID_PARAM
    )
