"""Failure hygiene: a rejected call writes nothing, enqueues nothing, and the stream still works.

Every defect of the table (conformance/authoring/defects.py) on every call it applies to: the
call is rejected, no byte of the variable or of the host buffer changes, the stream
stays complete, and everything on it still behaves afterwards (copies, reads,
queries, synchronisations, events).
"""

from __future__ import annotations

import pytest

from acl_conformance.conformance.authoring import defects
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.gating.results import NOT_SUPPORTED
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.suite.suite_helpers import MEMORIES
from acl_conformance.conformance.suite.suite_helpers import apply_defects
from acl_conformance.conformance.suite.suite_helpers import host_buffer
from acl_conformance.conformance.suite.suite_helpers import pattern_buffer
from acl_conformance.conformance.suite.suite_helpers import stream_status
from acl_conformance.reference_impl.constants import ERROR_NAMES
from acl_conformance.reference_impl.constants import StreamStatus

VAR = "g_arr256"
COUNT = 32
TO_ASYNC = [d.name for d in defects.for_call(defects.TO_ASYNC)]


def _site(h: Harness, var: str = VAR, count: int = COUNT) -> defects.Site:
    return defects.site(h, var, min(count, ops.size(h, var)), h.pageable(64).address)


@pytest.mark.requirement(
    "HYGIENE-NO-WRITE", "HYGIENE-NO-ENQUEUE", "HYGIENE-STREAM-USABLE", "SYNC-ERROR-REPORTING"
)
@pytest.mark.parametrize("defect", TO_ASYNC)
@pytest.mark.parametrize("memory", MEMORIES)
def test_rejected_call_leaves_no_trace(harness: Harness, defect: str, memory: str) -> None:
    h = harness
    src = pattern_buffer(h, memory, 70, 64)
    s = h.stream()
    site = _site(h)
    args = defects.valid_args(h, defects.TO_ASYNC, VAR, src, site.count, stream=s)
    assert not h.call(defects.TO_ASYNC, **apply_defects(args, site, defect)).ok
    # nothing was enqueued: the idle stream is complete
    assert stream_status(h, s) == StreamStatus.ACL_STREAM_STATUS_COMPLETE
    assert ops.sync(h, s).ok
    h.observe(VAR)
    # Everything on the stream still behaves: a copy, a read, an event, a bounded sync.
    n = ops.size(h, VAR)
    good = h.pinned(32, ops.pattern(71, 32))
    at = n // 3
    assert ops.to_symbol_async(h, VAR, good, count=min(32, n - at), offset=at, stream=s).ok
    dst = h.pinned(n)
    assert ops.from_symbol_async(h, dst, VAR, count=n, stream=s).ok
    if h.caps.events:
        e = ops.event(h)
        assert ops.record(h, e, s).ok
        assert h.call("synchronize_event", event=e).ok
    assert h.call("synchronize_stream_with_timeout", stream=s, timeout=-1).ok
    assert h.observe(VAR)[at : at + 32] == ops.pattern(71, min(32, n - at))


@pytest.mark.requirement("HYGIENE-NO-ENQUEUE", "HYGIENE-NO-WRITE")
@pytest.mark.needs(gate=True)
@pytest.mark.parametrize("defect", TO_ASYNC)
def test_rejected_call_behind_a_gate_enqueues_nothing(harness: Harness, defect: str) -> None:
    h = harness
    src = h.pinned(64, ops.pattern(72, 64))
    s = h.stream()
    g = h.close_stream_gate(s)
    site = _site(h)
    args = defects.valid_args(h, defects.TO_ASYNC, VAR, src, site.count, stream=s)
    assert not h.call(defects.TO_ASYNC, **apply_defects(args, site, defect)).ok
    h.open_stream_gate(g)
    ops.sync(h, s)
    h.observe(VAR)


CALL_DEFECTS = [(c, d.name) for c in sorted(defects.COPIES) for d in defects.for_call(c)]


@pytest.mark.requirement("HYGIENE-NO-WRITE", "FROMSYMBOL-BYTES", "TOSYMBOL-SYNC")
@pytest.mark.parametrize("call,defect", CALL_DEFECTS, ids=[f"{c}-{d}" for c, d in CALL_DEFECTS])
def test_every_call_rejects_every_defect(harness: Harness, call: str, defect: str) -> None:
    """The four copy calls share the checks of the symbol, the bound, the kind and the
    stream: each rejects each defect, and neither the variable nor the host memory
    changes (a read that fails writes nothing into its destination)."""
    h = harness
    fill = ops.pattern(74, 64)
    buf = host_buffer(h, "pinned" if call in defects.STREAMED else "pageable", 64, fill)
    site = _site(h, count=16)
    args = apply_defects(defects.valid_args(h, call, VAR, buf, site.count), site, defect)
    assert not h.call(call, **args).ok
    ops.sync_device(h)
    h.observe(VAR)
    assert h.read(buf) == fill


@pytest.mark.requirement("RETURN-CODES")
@pytest.mark.parametrize("defect", TO_ASYNC)
def test_codes_are_acl_errors(harness: Harness, defect: str) -> None:
    h = harness
    src = h.pageable(64, ops.pattern(73, 64))
    site = _site(h)
    args = defects.valid_args(h, defects.TO_ASYNC, VAR, src, site.count)
    r = h.call(defects.TO_ASYNC, **apply_defects(args, site, defect))
    assert r.code != 0
    if h.profile == "cann":
        assert r.code in ERROR_NAMES, f"{r.code} is not an aclError value CANN defines"
    assert ops.to_symbol_async(h, VAR, src, count=8).code == 0


@pytest.mark.requirement("PRODUCT-NOT-SUPPORTED")
def test_symbol_calls_are_supported(harness: Harness) -> None:
    """A product without the symbol APIs answers 207000: reported as not supported."""
    h = harness
    code, _size = h.adapter.get_symbol_size(ops.symbol(h, VAR))
    if code == 207000:
        pytest.skip(
            f"{NOT_SUPPORTED}aclrtGetSymbolSize returned ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000)"
        )
    assert h.call("get_symbol_size", symbol=ops.symbol(h, VAR)).ok
    h.passed("PRODUCT-NOT-SUPPORTED")
