"""Sizes where backends switch paths: copies at and around 4 KiB, 64 KiB, 1 MiB, 2 MiB and
the largest fixture variable.

Real runtimes change how they copy at such sizes (a page, a staging buffer, a DMA
descriptor's limit, a huge page): a pageable copy handed to a staging thread that returns
early, a page-locked copy split into chunks that loses its tail, a length that wraps in a
24-bit field.  Each test here makes one copy call from one memory (pinned, pageable,
registered) at every size of ``size_plan``, one byte under, at and one byte over each
threshold, some at odd offsets in the variable and in host memory.  Each copy is followed
at once by a write to its host source (To), a stream query and a synchronous read of the
bytes written and one byte either side: a copy that returned before it was complete, that
reads its source late, that drops a tail or wraps its length shows there.  A page-locked
copy may run at any time until a synchronisation and may take bytes the host wrote
meanwhile: the model accepts every value a byte could hold, so these tests only assert
what every legal backend must do.

The sizes come from what the backend declares: the largest of the fixture variables
(``g_arr16m`` in the bundled backends), and for each count the smallest variable it fits
in.  The thresholds themselves are where real runtimes switch, not properties of the
backend.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.gating.results import NOT_SUPPORTED
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.conformance.suite.suite_helpers import ALL_VARS
from acl_conformance.conformance.suite.suite_helpers import PAGE
from acl_conformance.conformance.suite.suite_helpers import first_page
from acl_conformance.conformance.suite.suite_helpers import gate_opened_later

THRESHOLDS = (4 << 10, 64 << 10, 1 << 20, 2 << 20)
"""Counts at which real runtimes switch copy paths: a page, a staging buffer or DMA
chunk, a large page, two of them."""
SPOT = 4096
"""Bytes overwritten at each end of a source right after a To copy (all of it when the
copy is no longer than two spots): a copy that reads its source late, whole or in
chunks from the start, takes some of them."""
GATE_DELAY = 0.01
"""Seconds a stream gate holds a pageable copy: a correct backend returns after it."""
MEMORIES = ("pinned", "pageable", "registered")
"""Where the host side of a copy lies: aclrtMallocHost, malloc, or malloc'd memory
page-locked with aclrtHostRegister."""


@dataclass(frozen=True)
class Copy:
    """One copy of the plan: ``count`` bytes at ``offset`` of ``var``, from (or to)
    ``host_offset`` of the test's host buffer."""

    var: str
    count: int
    offset: int
    host_offset: int

    def __str__(self) -> str:
        return f"{self.count} bytes at offset {self.offset} of {self.var}"


def size_plan(h: Harness) -> list[Copy]:
    """The copies of a test, smallest first: for each threshold T, T - 1 bytes at offset 1,
    T at offset 0 and T + 1 at offset 3, each into the smallest variable it fits in; then
    the whole of the largest variable and all of it but its first byte.  A copy at an odd
    offset in the variable comes from (or goes to) an odd offset in host memory."""
    sizes = {name: h.fixtures[name].size for name in ALL_VARS}
    largest = max(sizes, key=lambda name: sizes[name])
    top = sizes[largest]
    wanted = [(t + d, o) for t in THRESHOLDS for d, o in ((-1, 1), (0, 0), (1, 3))]
    wanted += [(top, 0), (top - 1, 1)]
    plan: dict[tuple[int, int], Copy] = {}
    for count, offset in wanted:
        if count < 1 or count + offset > top:
            continue
        var = min((n for n in sizes if sizes[n] >= count + offset), key=lambda n: sizes[n])
        plan.setdefault((count, offset), Copy(var, count, offset, offset & 1))
    return sorted(plan.values(), key=lambda c: (c.count, c.offset))


def host_memory(h: Harness, memory: str, size: int) -> tuple[HostBuffer, int]:
    """At least ``size`` bytes of ``memory`` host memory, as (buffer, offset of the first
    byte to use).  "registered": a malloc buffer page-locked with aclrtHostRegisterV2 from
    its first page boundary, over whole pages (the registration's alignment)."""
    if memory == "pinned":
        return h.pinned(size), 0
    if memory == "pageable":
        return h.pageable(size), 0
    if not h.caps.host_register:
        pytest.skip(f"{NOT_SUPPORTED}the backend declares no aclrtHostRegister")
    pages = (size + PAGE - 1) // PAGE
    buf = h.pageable((pages + 1) * PAGE)
    start = first_page(buf)
    r = h.call("host_register", ptr=buf.at(start), size=pages * PAGE)
    if not r.ok:
        h.fail(
            "PINNED-REGISTERED",
            f"aclrtHostRegisterV2 of {pages} pages ({pages * PAGE} bytes), 4 KiB aligned, "
            f"failed with {r.code}",
        )
    return buf, start


def read_around(h: Harness, c: Copy) -> bytes:
    """Read back (aclrtMemcpyFromSymbol) the bytes ``c`` wrote and one byte either side
    where the variable has them; returns the bytes ``c`` wrote."""
    size = ops.size(h, c.var)
    lo = max(0, c.offset - 1)
    hi = min(size, c.offset + c.count + 1)
    got = h.observe(c.var, offset=lo, count=hi - lo)
    return got[c.offset - lo : c.offset - lo + c.count]


def overwrite_source(h: Harness, src: HostBuffer, at: int, count: int, tag: int) -> None:
    """The host writes new bytes over the source right after the call: at both ends
    (``SPOT`` bytes each), or over all of it when it is short."""
    if count <= 2 * SPOT:
        h.write(src, at, ops.pattern(tag, count))
        return
    h.write(src, at, ops.pattern(tag, SPOT))
    h.write(src, at + count - SPOT, ops.pattern(tag + 1, SPOT))


def _tag(k: int) -> int:
    """The pattern tag of the ``k``-th copy of a test (two per copy: its bytes, the
    bytes written over its source after it)."""
    return 700 + 3 * k


REGISTERED = pytest.param(
    "registered", marks=pytest.mark.needs(host_register=True), id="registered"
)
TO_MEMORIES = ["pinned", "pageable", REGISTERED]


@pytest.mark.requirement(
    "PAGEABLE-BLOCKS",
    "PAGEABLE-SOURCE-REUSE",
    "PINNED-COMPLETE-AFTER-SYNC",
    "PINNED-SOURCE-WINDOW",
    "PINNED-REGISTERED",
    "EFFECT-BYTES",
    "EFFECT-NO-STRAY",
    "STREAM-QUERY",
)
@pytest.mark.needs(gate=True)
@pytest.mark.parametrize("memory", TO_MEMORIES)
def test_async_copy_around_the_thresholds(harness: Harness, memory: str) -> None:
    """aclrtMemcpyToSymbolAsync at each size of the plan.  A pageable copy, behind a stream
    gate that a timer opens, returns only after the gate and the copy (PAGEABLE-BLOCKS),
    with its bytes there at return however the host changes its source next
    (PAGEABLE-SOURCE-REUSE).  A page-locked one (pinned, registered: PINNED-REGISTERED) is
    complete after the synchronisation, each byte a value its source byte held until then
    (PINNED-COMPLETE-AFTER-SYNC, PINNED-SOURCE-WINDOW)."""
    h = harness
    plan = size_plan(h)
    src, base = host_memory(h, memory, max(c.count + c.host_offset for c in plan))
    s = h.stream()
    for k, c in enumerate(plan):
        at = base + c.host_offset
        data = ops.pattern(_tag(k), c.count)
        h.write(src, at, data)
        if memory == "pageable":
            with gate_opened_later(h, GATE_DELAY, stream=s):
                r = ops.to_symbol_async(h, c.var, src, c.count, c.offset, stream=s, src_offset=at)
            overwrite_source(h, src, at, c.count, _tag(k) + 1)
            h.call("stream_query", stream=s)
            got = read_around(h, c)
            assert r.ok, f"aclrtMemcpyToSymbolAsync of {c} returned {r.code}"
            assert got == data, f"a pageable copy of {c}: wrong bytes at return"
            continue
        r = ops.to_symbol_async(h, c.var, src, c.count, c.offset, stream=s, src_offset=at)
        overwrite_source(h, src, at, c.count, _tag(k) + 1)
        h.call("stream_query", stream=s)
        # not yet synchronised: only the last byte is read (the model accepts what it
        # held, or any value its source byte held since the call)
        h.observe(c.var, offset=c.offset + c.count - 1, count=1)
        assert r.ok, f"aclrtMemcpyToSymbolAsync of {c} returned {r.code}"
        ops.sync(h, s)
        read_around(h, c)  # each byte: its source byte at the call, or the host's write


@pytest.mark.requirement("TOSYMBOL-SYNC", "EFFECT-BYTES", "EFFECT-NO-STRAY")
@pytest.mark.parametrize("memory", TO_MEMORIES)
def test_sync_copy_around_the_thresholds(harness: Harness, memory: str) -> None:
    """aclrtMemcpyToSymbol at each size of the plan: complete at return whatever the
    memory of its source, and unchanged by a write to the source right after."""
    h = harness
    plan = size_plan(h)
    src, base = host_memory(h, memory, max(c.count + c.host_offset for c in plan))
    s = h.any_stream()
    for k, c in enumerate(plan):
        at = base + c.host_offset
        data = ops.pattern(_tag(k), c.count)
        h.write(src, at, data)
        r = ops.to_symbol(h, c.var, src, c.count, c.offset, src_offset=at)
        overwrite_source(h, src, at, c.count, _tag(k) + 1)
        h.call("stream_query", stream=s)
        got = read_around(h, c)
        assert r.ok, f"aclrtMemcpyToSymbol of {c} returned {r.code}"
        assert got == data, f"aclrtMemcpyToSymbol of {c}: wrong bytes at return"


FROM_CALLS = [defects.FROM_ASYNC, defects.FROM_SYNC]


@pytest.mark.requirement("FROMSYMBOL-BYTES", "PINNED-COMPLETE-AFTER-SYNC", "STREAM-QUERY")
@pytest.mark.parametrize("memory", TO_MEMORIES)
@pytest.mark.parametrize("call", FROM_CALLS)
def test_read_around_the_thresholds(harness: Harness, call: str, memory: str) -> None:
    """aclrtMemcpyFromSymbol[Async] at each size of the plan, into a destination filled
    afresh before each read: the synchronous read, and the asynchronous one into pageable
    memory, have the bytes there at return; the asynchronous one into page-locked memory
    after the stream's synchronisation.  The variable's bytes are whatever the backend
    holds (the model knows them)."""
    h = harness
    plan = size_plan(h)
    dst, base = host_memory(h, memory, max(c.count + c.host_offset for c in plan))
    asynchronous = call == defects.FROM_ASYNC
    s = h.stream()
    for k, c in enumerate(plan):
        at = base + c.host_offset
        h.write(dst, at, ops.pattern(_tag(k), c.count))
        args = dict(dst=dst.at(at), dst_max=c.count, symbol=ops.symbol(h, c.var), count=c.count)
        if asynchronous:
            r = h.call(call, **args, offset=c.offset, kind=ops.DEFAULT, stream=s)
        else:
            r = h.call(call, **args, offset=c.offset, kind=ops.D2H)
        h.call("stream_query", stream=s)
        if asynchronous and memory != "pageable":
            ops.sync(h, s)  # the read, judged once complete
        # the harness read the destination back where the read is complete and the model
        # judged those bytes against the variable's
        assert r.ok, f"{call} of {c} returned {r.code}"
