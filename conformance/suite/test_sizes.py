"""Sizes where backends switch paths: copies at and around 4 KiB, 64 KiB, 1 MiB, 2 MiB and
the largest fixture variable.

Real runtimes change how they copy at such sizes (a page, a staging buffer, a DMA
descriptor's limit, a huge page): a pageable copy handed to a staging thread that returns
early, a page-locked copy split into chunks that loses its tail, a length that wraps in a
24-bit field.  Each test here makes one copy call from one memory (pinned, pageable,
registered) at every size of ``size_plan``, one byte under, at and one byte over each
threshold, some at odd offsets in the variable and in host memory.  Each copy is followed
at once by a write to its host source (To), a stream query and a synchronous read of the
bytes written and one byte either side (for a page-locked copy, of its last bytes, then
of all of them once its stream is synchronised): a copy that returned before it was
complete, that reads its source late, that drops a tail or wraps its length shows there.
A pageable asynchronous copy is made behind a stream gate that a timer opens, so that one
that returns without waiting for its stream shows whatever its timing.  A page-locked
copy may run at any time until a synchronisation and may take bytes the host wrote
meanwhile: the model accepts every value a byte could hold, so these tests only assert
what every legal backend must do.

The sizes come from what the backend declares: the largest of the fixture variables
(``g_arr16m`` in the bundled backends), and for each count the smallest variable it fits
in.  The thresholds themselves are where real runtimes switch, not properties of the
backend.
"""

from __future__ import annotations

import pytest

from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.authoring.sizes import Copy
from acl_conformance.conformance.authoring.sizes import host_memory
from acl_conformance.conformance.authoring.sizes import overwrite_source
from acl_conformance.conformance.authoring.sizes import read_around
from acl_conformance.conformance.authoring.sizes import read_tail
from acl_conformance.conformance.authoring.sizes import size_plan
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.conformance.suite.suite_helpers import ALL_VARS
from acl_conformance.conformance.suite.suite_helpers import gate_opened_later

GATE_DELAY = 0.01
"""Seconds a stream gate holds a pageable copy: a correct backend returns after it."""


def plan_and_memory(h: Harness, memory: str) -> tuple[list[Copy], HostBuffer, int]:
    """The test's copies (``size_plan`` over the suite's variables), and host memory of
    ``memory`` for all of them, as (plan, buffer, offset of its first byte to use).  (A
    backend without aclrtHostRegister never gets here with "registered": the parameter's
    ``needs`` mark skips the test as not supported.)"""
    plan = size_plan(h, ALL_VARS)
    buf, base = host_memory(h, memory, max(c.count + c.host_offset for c in plan))
    return plan, buf, base


def _tag(k: int) -> int:
    """The pattern tag of the ``k``-th copy of a test (two more follow it: the bytes
    written over its source after it)."""
    return 700 + 3 * k


REGISTERED = pytest.param(
    "registered",
    marks=[pytest.mark.needs(host_register=True), pytest.mark.requirement("PINNED-REGISTERED")],
    id="registered",
)
MEMORIES = ["pinned", "pageable", REGISTERED]
PAGE_LOCKED = ["pinned", REGISTERED]


@pytest.mark.requirement(
    "PAGEABLE-BLOCKS", "PAGEABLE-SOURCE-REUSE", "EFFECT-BYTES", "EFFECT-NO-STRAY", "STREAM-QUERY"
)
@pytest.mark.needs(gate=True)
def test_pageable_copy_around_the_thresholds(harness: Harness) -> None:
    """aclrtMemcpyToSymbolAsync from pageable memory at each size of the plan, behind a
    stream gate that a timer opens: it returns only after the gate and the copy
    (PAGEABLE-BLOCKS), with its bytes there at return however the host changes its source
    next (PAGEABLE-SOURCE-REUSE)."""
    h = harness
    plan, src, base = plan_and_memory(h, "pageable")
    s = h.stream()
    for k, c in enumerate(plan):
        at = base + c.host_offset
        data = ops.pattern(_tag(k), c.count)
        h.write(src, at, data)
        with gate_opened_later(h, GATE_DELAY, stream=s):
            r = ops.to_symbol_async(h, c.var, src, c.count, c.offset, stream=s, src_offset=at)
        overwrite_source(h, src, at, c.count, _tag(k) + 1)
        h.call("stream_query", stream=s)
        got = read_around(h, c)
        assert r.ok, f"aclrtMemcpyToSymbolAsync of {c} returned {r.code}"
        assert got == data, f"a pageable copy of {c}: wrong bytes at return"


@pytest.mark.requirement(
    "PINNED-COMPLETE-AFTER-SYNC",
    "PINNED-SOURCE-WINDOW",
    "EFFECT-BYTES",
    "EFFECT-NO-STRAY",
    "STREAM-QUERY",
)
@pytest.mark.parametrize("memory", PAGE_LOCKED)
def test_page_locked_copy_around_the_thresholds(harness: Harness, memory: str) -> None:
    """aclrtMemcpyToSymbolAsync from page-locked memory (aclrtMallocHost, or registered:
    PINNED-REGISTERED) at each size of the plan: complete after the stream's
    synchronisation, each byte a value its source byte held until then, the host's write
    right after the call included (PINNED-COMPLETE-AFTER-SYNC, PINNED-SOURCE-WINDOW)."""
    h = harness
    plan, src, base = plan_and_memory(h, memory)
    s = h.stream()
    for k, c in enumerate(plan):
        at = base + c.host_offset
        h.write(src, at, ops.pattern(_tag(k), c.count))
        r = ops.to_symbol_async(h, c.var, src, c.count, c.offset, stream=s, src_offset=at)
        overwrite_source(h, src, at, c.count, _tag(k) + 1)
        h.call("stream_query", stream=s)
        # not yet synchronised: only the tail is read (the model accepts what it held,
        # or any value its source byte held since the call)
        read_tail(h, c)
        assert r.ok, f"aclrtMemcpyToSymbolAsync of {c} returned {r.code}"
        ops.sync(h, s)
        read_around(h, c)  # each byte: its source byte at the call, or the host's write


@pytest.mark.requirement("TOSYMBOL-SYNC", "EFFECT-BYTES", "EFFECT-NO-STRAY")
@pytest.mark.parametrize("memory", MEMORIES)
def test_sync_copy_around_the_thresholds(harness: Harness, memory: str) -> None:
    """aclrtMemcpyToSymbol at each size of the plan: complete at return whatever the
    memory of its source, and unchanged by a write to the source right after."""
    h = harness
    plan, src, base = plan_and_memory(h, memory)
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
@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("call", FROM_CALLS)
def test_read_around_the_thresholds(harness: Harness, call: str, memory: str) -> None:
    """aclrtMemcpyFromSymbol[Async] at each size of the plan, into a destination filled
    afresh before each read: the synchronous read, and the asynchronous one into pageable
    memory, have the bytes there at return; the asynchronous one into page-locked memory
    after the stream's synchronisation.  The variable's bytes are whatever the backend
    holds (the model knows them)."""
    h = harness
    plan, dst, base = plan_and_memory(h, memory)
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
