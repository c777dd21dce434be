"""Bounds: offset + count <= the variable's size (as aclrtGetSymbolSize reports it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.session.context import Suite
from acl_conformance.conformance.suite.suite_helpers import ALL_VARS
from acl_conformance.conformance.suite.suite_helpers import SMALL_VARS
from acl_conformance.conformance.suite.suite_helpers import apply_defects
from acl_conformance.conformance.suite.suite_helpers import copy_and_synchronize
from acl_conformance.conformance.suite.suite_helpers import host_buffer
from acl_conformance.reference_impl.constants import SIZE_MAX


@pytest.mark.requirement("BOUNDS-END-EXACT", "EFFECT-BYTES")
@pytest.mark.parametrize("var", ALL_VARS)
def test_last_byte_is_writable(harness: Harness, var: str) -> None:
    h = harness
    n = ops.size(h, var)
    src = h.pageable(16, ops.pattern(5, 16))
    count = min(n, 3)
    assert ops.to_symbol_async(h, var, src, count=count, offset=n - count).ok
    assert h.observe(var, offset=n - count)[-count:] == ops.pattern(5, count)


@pytest.mark.requirement("BOUNDS-END-EXACT", "SYMBOL-SIZE-AS-DECLARED")
@pytest.mark.parametrize("var", SMALL_VARS)
def test_whole_variable(harness: Harness, var: str) -> None:
    h = harness
    r = h.call("get_symbol_size", symbol=ops.symbol(h, var))
    n = int(r["size"])
    src = h.pinned(n, ops.pattern(6, n))
    s = h.stream()
    assert ops.to_symbol_async(h, var, src, count=n, stream=s).ok
    ops.sync(h, s)
    assert h.observe(var) == ops.pattern(6, n)


PAST_THE_END = [
    "one past",
    "offset at end",
    "offset past end",
    "count too big",
    "count past 32 bits",
    "offset past 32 bits",
    "offset past 63 bits",
]


@pytest.mark.requirement("BOUNDS-PAST-END", "HYGIENE-NO-WRITE")
@pytest.mark.parametrize("var", SMALL_VARS)
@pytest.mark.parametrize("where", PAST_THE_END)
def test_past_the_end_is_rejected(harness: Harness, var: str, where: str) -> None:
    h = harness
    n = ops.size(h, var)
    offset, count = {
        "one past": (n - min(n, 4) + 1, min(n, 4)),
        "offset at end": (n, 1),
        "offset past end": (n + 100, 1),
        "count too big": (0, n + 1),
        # size_t kept in 32 bits (a real porting bug): the low half alone is in bounds
        "count past 32 bits": (0, (1 << 32) + min(n, 4)),
        "offset past 32 bits": (1 << 32, 1),
        # compared in signed 64-bit arithmetic, this offset is negative
        "offset past 63 bits": (1 << 63, 1),
    }[where]
    src = h.pageable(n + 128, ops.pattern(7, n + 128))
    assert not ops.to_symbol_async(h, var, src, count=count, offset=offset).ok
    h.observe(var)


COPY_CALLS = sorted(defects.COPIES)


@pytest.mark.requirement("BOUNDS-PAST-END", "TOSYMBOL-SYNC", "FROMSYMBOL-BYTES", "HYGIENE-NO-WRITE")
@pytest.mark.parametrize("var", SMALL_VARS)
@pytest.mark.parametrize("call", COPY_CALLS)
def test_offset_past_the_end_with_a_small_count(harness: Harness, call: str, var: str) -> None:
    """An offset past the end with a count that would fit in the variable, in each of the
    four copies: a bound computed as ``count <= size - offset`` in size_t wraps there and
    lets it through.  Each copy rejects it (BOUNDS-PAST-END for aclrtMemcpyToSymbolAsync,
    TOSYMBOL-SYNC for aclrtMemcpyToSymbol, FROMSYMBOL-BYTES for the reads) and writes
    nothing: not the variable, not the variables laid out after it (where such a copy
    lands), not the host buffer."""
    h = harness
    n = ops.size(h, var)
    count = min(n, 4)
    streamed = call in defects.STREAMED
    fill = ops.pattern(12, 64)
    buf = host_buffer(h, "pinned" if streamed else "pageable", 64, fill)
    s = h.stream() if streamed else None
    for offset in (n + 1, n + 100):
        args = defects.valid_args(h, call, var, buf, count, offset=offset, stream=s)
        assert not h.call(call, **args).ok, f"offset {offset} past the end of {var} accepted"
    if s is not None:
        ops.sync(h, s)
    for v in SMALL_VARS:
        h.observe(v)
    assert h.read(buf) == fill


@pytest.mark.requirement("BOUNDS-OVERFLOW", "HYGIENE-NO-WRITE")
@pytest.mark.parametrize(
    "offset,count",
    [
        (SIZE_MAX, 1),
        (2, SIZE_MAX - 1),
        (SIZE_MAX - 10, 20),
        (SIZE_MAX, SIZE_MAX),
        (1 << 63, 1 << 63),
    ],
    ids=["SIZE_MAX+1", "2+(SIZE_MAX-1)", "(SIZE_MAX-10)+20", "SIZE_MAX+SIZE_MAX", "2^63+2^63"],
)
def test_wrapping_sum_is_rejected(harness: Harness, offset: int, count: int) -> None:
    h = harness
    src = h.pageable(64, ops.pattern(8, 64))
    assert not ops.to_symbol_async(h, "g_arr256", src, count=count, offset=offset).ok
    h.observe("g_arr256")


ZERO_WITH = ["none"] + [d.name for d in defects.for_call(defects.TO_ASYNC) if d.argument != "count"]


@pytest.mark.requirement("COUNT-ZERO", "CHECK-ORDER")
@pytest.mark.parametrize("defect", ZERO_WITH)
def test_count_zero(harness: Harness, defect: str) -> None:
    """Under cann count == 0 succeeds before every other check; under spec anything but a write."""
    h = harness
    src = h.pageable(16, ops.pattern(9, 16))
    site = defects.site(h, "g_u32", 1, src.address)
    args = defects.valid_args(h, defects.TO_ASYNC, "g_u32", src, 1)
    if defect != "none":
        args = apply_defects(args, site, defect)
    args["count"] = 0
    h.call("memcpy_to_symbol_async", **args)
    h.observe("g_u32")


@pytest.mark.requirement("BOUNDS-END-EXACT", "BOUNDS-PAST-END", "BOUNDS-OVERFLOW")
@given(
    var=st.sampled_from(SMALL_VARS),
    slack=st.integers(-8, 8),
    count=st.integers(1, 32),
    huge=st.booleans(),
)
def test_around_the_bound(acl_suite: Suite, var: str, slack: int, count: int, huge: bool) -> None:
    with acl_suite.harness() as h:
        n = ops.size(h, var)
        count = min(count, n)
        offset = max(0, n - count + slack)
        if huge:
            offset = min(SIZE_MAX, SIZE_MAX - count + 1 + max(slack, 0))
        src = h.pageable(64, ops.pattern(10, 64))
        ops.to_symbol_async(h, var, src, count=count, offset=offset)
        h.observe(var)


WRITES = ["async pinned", "async pageable", "sync"]


@pytest.mark.requirement("BOUNDS-END-EXACT", "EFFECT-BYTES", "EFFECT-NO-STRAY", "TOSYMBOL-SYNC")
@pytest.mark.parametrize("var", ALL_VARS)
@pytest.mark.parametrize("how", WRITES)
def test_writes_at_the_boundaries(harness: Harness, var: str, how: str) -> None:
    """Every valid (count, offset) at the edges size arithmetic gets wrong, on a variable of
    whatever size the backend declares: single bytes at both ends, words aligned and not,
    all of it or all but a byte, page sizes and one either side, counts that are no
    multiple of a page spanning several, at odd offsets, from odd source offsets."""
    h = harness
    n = ops.size(h, var)
    ranges = defects.boundary_ranges(n)
    big = max(c for c, _o in ranges) + 3
    src = h.pinned(big) if how == "async pinned" else h.pageable(big)
    s = h.stream() if how != "sync" else None
    for k, (count, offset) in enumerate(ranges):
        data = ops.pattern(200 + k, count)
        h.write(src, 3, data)  # an odd source offset
        if how == "sync":
            assert ops.to_symbol(h, var, src, count=count, offset=offset, src_offset=3).ok
        else:
            ops.to_symbol_async(h, var, src, count=count, offset=offset, stream=s, src_offset=3)
            ops.sync(h, s)
        # the bytes written, read back where they are; the model judges every other byte
        assert h.observe(var, offset=offset, count=count) == data
    h.observe(var)


READS = ["sync", "async pinned", "async pageable"]


@pytest.mark.requirement("FROMSYMBOL-BYTES", "BOUNDS-END-EXACT")
@pytest.mark.parametrize("var", ALL_VARS)
@pytest.mark.parametrize("how", READS)
def test_reads_at_the_boundaries_agree_with_a_whole_read(
    harness: Harness, var: str, how: str
) -> None:
    """The observer is under test too: a read of part of a variable, at the boundaries,
    synchronous or not, agrees with the same part of a read of the whole variable."""
    h = harness
    n = ops.size(h, var)
    fill = h.pinned(n, ops.pattern(230, n))
    s = copy_and_synchronize(h, var, fill, count=n)
    whole = h.observe(var)
    ranges = defects.boundary_ranges(n)
    big = max(c for c, _o in ranges) + 5
    dst = h.pinned(big) if how == "async pinned" else h.pageable(big)
    for count, offset in ranges:
        read = dict(dst=dst.at(5), dst_max=count, symbol=ops.symbol(h, var), count=count)
        if how == "sync":
            r = h.call("memcpy_from_symbol", **read, offset=offset, kind=ops.D2H)
        else:
            r = h.call(
                "memcpy_from_symbol_async", **read, offset=offset, kind=ops.DEFAULT, stream=s
            )
            ops.sync(h, s)  # the read, judged once complete
        assert r.ok
        assert h.read(dst, 5, count) == whole[offset : offset + count]
