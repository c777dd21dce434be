"""What test_simulator_symbols.py and test_simulator_symbol_copies.py share: helpers, fixtures and case tables."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import strategies as st
from test_simulator_fixtures import bare_fixture  # noqa: F401 (the fixture bare)
from test_simulator_fixtures import open_simulator
from test_simulator_support import DEFAULT
from test_simulator_support import H2D
from test_simulator_support import device_image
from test_simulator_support import host
from test_simulator_support import sym

from acl_conformance.adapters.simulator import Simulator
from acl_conformance.reference_impl.constants import ACL_ERROR_FAILURE
from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_SYMBOL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_CONTEXT

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


@pytest.fixture(name="sim")
def sim_fixture() -> Iterator[Simulator]:
    yield from open_simulator()


def snapshot(sim: Simulator, device: int = 0) -> np.ndarray:
    return np.frombuffer(device_image(sim, device), dtype=np.uint8)


def changed(before: np.ndarray, after: np.ndarray) -> tuple[int, int] | None:
    """(first, last+1) of the bytes that differ, or None."""
    idx = np.flatnonzero(before != after)
    return None if idx.size == 0 else (int(idx[0]), int(idx[-1]) + 1)


def var_range(sim: Simulator, name: str) -> tuple[int, int]:
    v = next(v for v in sim.layout.variables if v.name == name)
    return v.offset, v.offset + v.size


def _interior(sim: Simulator) -> int:
    return sym(sim, "g_u32") + 1


def _padding(sim: Simulator) -> int:
    return sym(sim, "g_u8") + 1  # g_u8 is 1 byte; the next shadow is 16-byte aligned


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


# -- a property: any sequence of copies on one stream ends as a simple byte model says ------
SMALL = [(n, s) for n, s in STANDARD if s <= 4096]


@pytest.fixture(scope="module", name="shared")
def shared_fixture() -> Iterator[Simulator]:
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
