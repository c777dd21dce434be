"""CANN's own unit tests (cann-runtime-facts.md section 6), reproduced by the cann profile.

Each row of UTA (tests/ut/acl/testcase/acl_runtime_unittest.cpp) and UTS
(tests/ut/runtime/runtime/test/rt_utest_symbol.cc) becomes a call on a model
whose state stands for the mocked one: "mock returns 107043" is a symbol that
is not registered; "size 5" is a registered variable of 5 bytes.  The two
"stream nullptr" rows expect 100000 in CANN's tests only because the unmocked
lookup leaves the size at 0; the implementation never rejects a NULL stream,
so the profile predicts success there.
"""

from __future__ import annotations

from typing import Any

import pytest
from world import PAGEABLE
from world import PINNED
from world import W
from world import announce
from world import make_world
from world import observe_now

from acl_conformance.reference_impl.constants import SIZE_MAX

H2D, D2H, DEFAULT = 1, 2, 4
LOCAL = PAGEABLE + 64
"""&local in the tests: an ordinary host address, not a device variable."""


def only_codes(w: W, call: str, **args: Any) -> set[int]:
    outcome = w.allowed(call, **args)
    codes: set[int] = set()
    for alt in outcome.alternatives:
        assert alt.codes.values is not None, f"{call}: cann allows any error where CANN is exact"
        codes |= alt.codes.values
    return codes


@pytest.fixture
def w() -> W:
    world = make_world("cann")
    world.model.add_symbol("g_size5", 0x4000_0000, 5)
    world.model.add_symbol("g_size100", 0x4000_0100, 100)
    return world


def sym(w: W, name: str) -> int:
    return w.model.world.symbols_by_name[name].address


# --- GetSymbolAddressTest (UTA:9918-9944) -------------------------------------
def test_get_symbol_address_rows(w: W) -> None:
    assert only_codes(w, "get_symbol_address", symbol=0) == {100000}
    assert only_codes(w, "get_symbol_address", symbol=sym(w, "g_u32"), null_dev_ptr=True) == {
        100000
    }
    assert only_codes(w, "get_symbol_address", symbol=LOCAL) == {107043}
    assert only_codes(w, "get_symbol_address", symbol=sym(w, "g_u32")) == {0}
    ok = announce(w.model, "get_symbol_address", symbol=sym(w, "g_u32")).settle(0, dev_ptr=0x8100)
    assert ok == []
    bad = announce(w.model, "get_symbol_address", symbol=sym(w, "g_u64")).settle(0, dev_ptr=0)
    assert [v.requirement for v in bad] == ["GETSYMBOL-ADDRESS"]


# --- MemcpyFromSymbolTest / FromSymbolAsyncTest (UTA:9946-10067) ----------------
def from_rows(w: W) -> list[tuple[str, dict[str, Any], int]]:
    s5, s100 = sym(w, "g_size5"), sym(w, "g_size100")
    return [
        ("dst NULL", dict(dst=0, dst_max=4, symbol=s100, count=4, offset=0, kind=D2H), 100000),
        (
            "count 10, dstMax 5",
            dict(dst=PINNED, dst_max=5, symbol=s100, count=10, offset=0, kind=D2H),
            100000,
        ),
        ("kind 999", dict(dst=PINNED, dst_max=8, symbol=s100, count=4, offset=0, kind=999), 100000),
        ("kind H2D", dict(dst=PINNED, dst_max=8, symbol=s100, count=4, offset=0, kind=H2D), 100000),
        (
            "mock returns 107043",
            dict(dst=PINNED, dst_max=8, symbol=LOCAL, count=4, offset=0, kind=D2H),
            107043,
        ),
        (
            "size 5, count 5, offset 3",
            dict(dst=PINNED, dst_max=8, symbol=s5, count=5, offset=3, kind=D2H),
            100000,
        ),
        (
            "size 100, count 1, offset SIZE_MAX",
            dict(dst=PINNED, dst_max=8, symbol=s100, count=1, offset=SIZE_MAX, kind=D2H),
            500001,
        ),
        ("D2H", dict(dst=PINNED, dst_max=8, symbol=s100, count=4, offset=0, kind=D2H), 0),
        ("DEFAULT", dict(dst=PINNED, dst_max=8, symbol=s100, count=4, offset=0, kind=DEFAULT), 0),
        ("count 0", dict(dst=PINNED, dst_max=8, symbol=s100, count=0, offset=0, kind=D2H), 0),
    ]


@pytest.mark.parametrize("row", range(10))
def test_memcpy_from_symbol_rows(w: W, row: int) -> None:
    _label, args, code = from_rows(w)[row]
    assert only_codes(w, "memcpy_from_symbol", **args) == {code}


@pytest.mark.parametrize("row", range(10))
def test_memcpy_from_symbol_async_rows(w: W, row: int) -> None:
    _label, args, code = from_rows(w)[row]
    assert only_codes(w, "memcpy_from_symbol_async", stream=w.stream, **args) == {code}


def test_from_symbol_async_null_stream_succeeds(w: W) -> None:
    """UTA:10028-10030 expects 100000, an artefact of the mock; a real runtime uses the default stream."""
    args = dict(dst=PINNED, dst_max=8, symbol=sym(w, "g_size100"), count=5, offset=0, kind=D2H)
    assert only_codes(w, "memcpy_from_symbol_async", stream=0, **args) == {0}


# --- MemcpyToSymbolTest / ToSymbolAsyncTest (UTA:10069-10182) -------------------
def to_rows(w: W) -> list[tuple[str, dict[str, Any], int]]:
    s5, s100 = sym(w, "g_size5"), sym(w, "g_size100")
    return [
        ("src NULL", dict(symbol=s100, src=0, count=4, offset=0, kind=H2D), 100000),
        ("kind 999", dict(symbol=s100, src=PINNED, count=4, offset=0, kind=999), 100000),
        ("kind D2H", dict(symbol=s100, src=PINNED, count=4, offset=0, kind=D2H), 100000),
        (
            "mock returns 107043",
            dict(symbol=LOCAL, src=PINNED, count=4, offset=0, kind=H2D),
            107043,
        ),
        ("size 5, offset 3", dict(symbol=s5, src=PINNED, count=5, offset=3, kind=H2D), 100000),
        (
            "count 1, offset SIZE_MAX",
            dict(symbol=s100, src=PINNED, count=1, offset=SIZE_MAX, kind=H2D),
            500001,
        ),
        ("H2D", dict(symbol=s100, src=PINNED, count=4, offset=0, kind=H2D), 0),
        ("DEFAULT", dict(symbol=s100, src=PINNED, count=4, offset=0, kind=DEFAULT), 0),
        ("count 0", dict(symbol=s100, src=PINNED, count=0, offset=0, kind=H2D), 0),
    ]


@pytest.mark.parametrize("row", range(9))
def test_memcpy_to_symbol_rows(w: W, row: int) -> None:
    _label, args, code = to_rows(w)[row]
    assert only_codes(w, "memcpy_to_symbol", **args) == {code}


@pytest.mark.parametrize("row", range(9))
def test_memcpy_to_symbol_async_rows(w: W, row: int) -> None:
    _label, args, code = to_rows(w)[row]
    assert only_codes(w, "memcpy_to_symbol_async", stream=w.stream, **args) == {code}


def test_to_symbol_async_null_stream_succeeds(w: W) -> None:
    """UTA:10143-10145 expects 100000 for a NULL stream only because the mock left size 0."""
    args = dict(symbol=sym(w, "g_size100"), src=PINNED, count=5, offset=0, kind=H2D)
    assert only_codes(w, "memcpy_to_symbol_async", stream=0, **args) == {0}
    # ...and the copy really goes to the default stream: a sync of NULL completes it.
    announce(w.model, "memcpy_to_symbol_async", stream=0, **args).settle(0)
    w.ok("synchronize_stream", stream=0)
    assert observe_now(w.model, 0, "g_size100", 0, bytes(range(5))) == []


def test_mock_artefact_is_reproduced_when_the_size_is_zero(w: W) -> None:
    """With the mock's size of 0, the bounds check (not a stream check) rejects: 5 + 0 > 0."""
    w.model.add_symbol("g_mock_size0", 0x4000_0400, 1)  # sizes are positive; 1 byte is the nearest
    args = dict(symbol=sym(w, "g_mock_size0"), src=PINNED, count=5, offset=0, kind=H2D, stream=0)
    assert only_codes(w, "memcpy_to_symbol_async", **args) == {100000}


# --- UTS (rt_utest_symbol.cc) ----------------------------------------------------
def test_uts_symbol_not_found(w: W) -> None:
    assert only_codes(w, "get_symbol_address", symbol=LOCAL) == {107043}


def test_uts_success_address_and_size(w: W) -> None:
    s = sym(w, "g_u32")
    assert announce(w.model, "get_symbol_address", symbol=s).settle(0, dev_ptr=0x8100) == []
    assert announce(w.model, "get_symbol_size", symbol=s).settle(0, size=4) == []
    wrong = announce(w.model, "get_symbol_size", symbol=s).settle(0, size=8)
    assert [v.requirement for v in wrong] == ["SYMBOL-SIZE-AS-DECLARED"]
