"""Simulator: fixtures, symbols, the four symbol copies, bounds and kinds (CANN's codes and order)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_simulator_fixtures import bare_fixture, open_simulator  # noqa: F401 (the fixture bare)
from test_simulator_support import (
    D2H,
    DEFAULT,
    H2D,
    bounded,
    expected_pattern,
    gate,
    host,
    initial,
    read_var,
    sym,
    symbols,
)

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import (
    ACL_ERROR_FAILURE,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_INVALID_SYMBOL,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
)

SIZE_MAX = 2**64 - 1
STANDARD = [
    ("g_u8", 1),
    ("g_u32", 4),
    ("g_u64", 8),
    ("g_struct12", 12),
    ("g_struct24", 24),
    ("g_arr256", 256),
    ("g_arr4k", 4096),
    ("g_arr1m", 1 << 20),
    ("g_arr16m", 16 << 20),
]
ALL_KINDS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 999, -1, 2**31 - 1]


@pytest.fixture
def sim() -> Iterator[Simulator]:
    yield from open_simulator()


def snapshot(sim: Simulator, device: int = 0) -> np.ndarray:
    return np.frombuffer(sim.snapshot(device), dtype=np.uint8)


def changed(before: np.ndarray, after: np.ndarray) -> tuple[int, int] | None:
    """(first, last+1) of the bytes that differ, or None."""
    idx = np.flatnonzero(before != after)
    return None if idx.size == 0 else (int(idx[0]), int(idx[-1]) + 1)


def var_range(sim: Simulator, name: str) -> tuple[int, int]:
    v = next(v for v in sim.layout.variables if v.name == name)
    return v.offset, v.offset + v.size


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
    assert len(sim.snapshot(0)) >= ranges[-1][1]


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


def _interior(sim: Simulator) -> int:
    return sym(sim, "g_u32") + 1


def _padding(sim: Simulator) -> int:
    return sym(sim, "g_u8") + 1  # g_u8 is 1 byte; the next shadow is 16-byte aligned


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


# -- aclrtMemcpyToSymbolAsync: the order of checks -----------------------------------------
def _to_async_args(sim: Simulator, case: str) -> dict[str, int]:
    """Arguments for one check case of aclrtMemcpyToSymbolAsync (g_arr256, pinned source)."""
    pinned = host(sim, bytes(range(256)), "pinned")
    args = {
        "symbol": sym(sim, "g_arr256"),
        "src": pinned,
        "count": 4,
        "offset": 0,
        "kind": H2D,
        "stream": 0,
    }
    code, foreign = 0, 0
    if "foreign" in case:
        assert sim.set_device(1) == 0
        code, foreign = sim.create_stream()
        assert sim.set_device(0) == 0
    assert code == 0
    code, dead = sim.create_stream()
    assert code == 0 and sim.destroy_stream(dead) == 0
    code, event = sim.create_event()
    assert code == 0
    overrides: dict[str, dict[str, int]] = {
        "count0_all_bad": {
            "symbol": 0,
            "src": 0,
            "count": 0,
            "offset": SIZE_MAX,
            "kind": 999,
            "stream": sim.invalid_handle(),
        },
        "null_symbol": {"symbol": 0},
        "null_symbol_null_src_bad_kind": {"symbol": 0, "src": 0, "kind": 999},
        "null_src": {"src": 0},
        "null_src_interior": {"src": 0, "symbol": _interior(sim)},
        "bad_kind_interior": {"kind": 3, "symbol": _interior(sim)},
        "bad_kind_overflow": {"kind": 0, "offset": SIZE_MAX},
        "interior": {"symbol": _interior(sim)},
        "padding": {"symbol": _padding(sim)},
        "garbage_symbol": {"symbol": 0xDEAD0},
        "interior_overflow": {"symbol": _interior(sim), "offset": SIZE_MAX},
        "interior_out_of_bounds": {"symbol": _interior(sim), "offset": 1000},
        "overflow_offset": {"offset": SIZE_MAX, "count": 1},
        "overflow_count": {"offset": 1, "count": SIZE_MAX},
        "overflow_both": {"offset": SIZE_MAX, "count": SIZE_MAX},
        "overflow_bad_stream": {"offset": SIZE_MAX, "stream": sim.invalid_handle()},
        "sum_is_size_max": {"offset": SIZE_MAX - 4, "count": 4},
        "one_past_end": {"offset": 253, "count": 4},
        "offset_at_end": {"offset": 256, "count": 1},
        "count_too_big": {"count": 257},
        "out_of_bounds_bad_stream": {"offset": 256, "stream": sim.invalid_handle()},
        "garbage_stream": {"stream": 0x77},
        "invalid_handle": {"stream": sim.invalid_handle()},
        "destroyed_stream": {"stream": dead},
        "event_as_stream": {"stream": event},
        "garbage_stream_pageable": {
            "stream": sim.invalid_handle(),
            "src": host(sim, b"x" * 8, "pageable"),
        },
        "foreign_stream_pinned": {"stream": foreign},
        "src_runs_past_buffer": {"src": pinned + 254},
        "src_unknown": {"src": 0x4000_0000},
        "exact_end": {"offset": 252, "count": 4},
        "whole_variable": {"count": 256},
        "default_kind": {"kind": DEFAULT},
    }
    args.update(overrides[case])
    return args


TO_ASYNC_CASES = {
    "count0_all_bad": 0,
    "null_symbol": ACL_ERROR_INVALID_PARAM,
    "null_symbol_null_src_bad_kind": ACL_ERROR_INVALID_PARAM,
    "null_src": ACL_ERROR_INVALID_PARAM,
    "null_src_interior": ACL_ERROR_INVALID_PARAM,
    "bad_kind_interior": ACL_ERROR_INVALID_PARAM,
    "bad_kind_overflow": ACL_ERROR_INVALID_PARAM,
    "interior": ACL_ERROR_RT_INVALID_SYMBOL,
    "padding": ACL_ERROR_RT_INVALID_SYMBOL,
    "garbage_symbol": ACL_ERROR_RT_INVALID_SYMBOL,
    "interior_overflow": ACL_ERROR_RT_INVALID_SYMBOL,
    "interior_out_of_bounds": ACL_ERROR_RT_INVALID_SYMBOL,
    "overflow_offset": ACL_ERROR_FAILURE,
    "overflow_count": ACL_ERROR_FAILURE,
    "overflow_both": ACL_ERROR_FAILURE,
    "overflow_bad_stream": ACL_ERROR_FAILURE,
    "sum_is_size_max": ACL_ERROR_INVALID_PARAM,
    "one_past_end": ACL_ERROR_INVALID_PARAM,
    "offset_at_end": ACL_ERROR_INVALID_PARAM,
    "count_too_big": ACL_ERROR_INVALID_PARAM,
    "out_of_bounds_bad_stream": ACL_ERROR_INVALID_PARAM,
    "garbage_stream": ACL_ERROR_RT_INVALID_HANDLE,
    "invalid_handle": ACL_ERROR_RT_INVALID_HANDLE,
    "destroyed_stream": ACL_ERROR_RT_INVALID_HANDLE,
    "event_as_stream": ACL_ERROR_RT_INVALID_HANDLE,
    "garbage_stream_pageable": ACL_ERROR_RT_INVALID_HANDLE,
    "foreign_stream_pinned": ACL_ERROR_RT_STREAM_CONTEXT,
    "src_runs_past_buffer": ACL_ERROR_RT_PARAM_INVALID,
    "src_unknown": ACL_ERROR_RT_PARAM_INVALID,
    "exact_end": 0,
    "whole_variable": 0,
    "default_kind": 0,
}


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


SYNC_TO_CASES = {
    "null_symbol": ({"symbol": 0}, ACL_ERROR_INVALID_PARAM),
    "null_src": ({"src": 0}, ACL_ERROR_INVALID_PARAM),
    "null_src_interior": ({"src": 0, "symbol": "interior"}, ACL_ERROR_INVALID_PARAM),
    "bad_kind": ({"kind": 2}, ACL_ERROR_INVALID_PARAM),
    "interior": ({"symbol": "interior"}, ACL_ERROR_RT_INVALID_SYMBOL),
    "interior_overflow": ({"symbol": "interior", "offset": SIZE_MAX}, 107043),
    "overflow": ({"offset": SIZE_MAX}, ACL_ERROR_FAILURE),
    "out_of_bounds": ({"offset": 5}, ACL_ERROR_INVALID_PARAM),
    "src_past_buffer": ({"src": "past"}, ACL_ERROR_RT_PARAM_INVALID),
    "count0": ({"count": 0, "symbol": 0, "src": 0, "kind": 7}, 0),
    "exact_end": ({"offset": 4}, 0),
}


def case_args(
    base: dict[str, int],
    case: tuple[dict[str, object], int],
    interior: int,
    host_side: str,
    past: int,
) -> tuple[dict[str, object], int]:
    """A check case's arguments and expected code: ``base`` with the case's overrides, and
    its placeholders made addresses: ``"interior"`` (the symbol) and ``"past"`` (the
    argument ``host_side``, the host buffer)."""
    overrides, expected = case
    args: dict[str, object] = {**base, **overrides}
    if args["symbol"] == "interior":
        args["symbol"] = interior
    if args[host_side] == "past":
        args[host_side] = past
    return args, expected


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


# -- From-symbol copies ----------------------------------------------------------------------
FROM_CASES = {
    "count0_all_bad": ({"count": 0, "dst": 0, "symbol": 0, "kind": 1, "dst_max": 0}, 0),
    "null_symbol": ({"symbol": 0}, ACL_ERROR_INVALID_PARAM),
    "null_dst": ({"dst": 0}, ACL_ERROR_INVALID_PARAM),
    "null_dst_interior": ({"dst": 0, "symbol": "interior"}, ACL_ERROR_INVALID_PARAM),
    "count_over_dst_max": ({"dst_max": 3}, ACL_ERROR_INVALID_PARAM),
    "count_over_dst_max_interior": ({"dst_max": 3, "symbol": "interior"}, 100000),
    "bad_kind": ({"kind": 1}, ACL_ERROR_INVALID_PARAM),
    "bad_kind_interior": ({"kind": 999, "symbol": "interior"}, ACL_ERROR_INVALID_PARAM),
    "interior": ({"symbol": "interior"}, ACL_ERROR_RT_INVALID_SYMBOL),
    "interior_overflow": ({"symbol": "interior", "offset": SIZE_MAX}, 107043),
    "overflow": ({"offset": SIZE_MAX, "count": 1, "dst_max": 100}, ACL_ERROR_FAILURE),
    "out_of_bounds": ({"offset": 9}, ACL_ERROR_INVALID_PARAM),
    "dst_past_buffer": ({"dst": "past"}, ACL_ERROR_RT_PARAM_INVALID),
    "dst_unknown": ({"dst": 0x4000_0000}, ACL_ERROR_RT_PARAM_INVALID),
    "dst_max_equal": ({"dst_max": 4}, 0),
    "dst_max_larger": ({"dst_max": SIZE_MAX}, 0),
    "default_kind": ({"kind": DEFAULT}, 0),
}


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


# -- a property: any sequence of copies on one stream ends as a simple byte model says ------
SMALL = [(n, s) for n, s in STANDARD if s <= 4096]


@pytest.fixture(scope="module")
def shared() -> Iterator[Simulator]:
    s = Simulator()
    assert s.set_device(0) == 0
    yield s
    s.close()


copy_op = st.tuples(
    st.sampled_from(SMALL),
    st.integers(0, 4100),
    st.integers(0, 300),
    st.sampled_from(["pinned", "pageable", "registered", "sync"]),
    st.integers(0, 255),
)


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
