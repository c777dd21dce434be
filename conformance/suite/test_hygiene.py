"""Failure hygiene: a rejected call writes nothing, enqueues nothing, and the stream still works."""

from __future__ import annotations

import pytest

from acl_conformance.conformance import ops
from acl_conformance.conformance.harness import Harness
from acl_conformance.conformance.results import NOT_SUPPORTED
from acl_conformance.reference_impl.constants import ERROR_NAMES, SIZE_MAX, StreamStatus

VAR = "g_arr256"
REJECTIONS = ["kind", "bounds", "overflow", "interior", "NULL src", "bad stream"]


def rejected_call(h: Harness, why: str, stream: int, src_address: int) -> dict[str, int]:
    args = dict(
        symbol=ops.symbol(h, VAR), src=src_address, count=32, offset=0, kind=ops.H2D, stream=stream
    )
    if why == "kind":
        args["kind"] = ops.D2H
    elif why == "bounds":
        args["offset"] = 240
    elif why == "overflow":
        args["offset"] = SIZE_MAX - 1
    elif why == "interior":
        args["symbol"] += 1
    elif why == "NULL src":
        args["src"] = 0
    elif why == "bad stream":
        args["stream"] = h.adapter.invalid_handle()
    return args


@pytest.mark.requirement(
    "HYGIENE-NO-WRITE", "HYGIENE-NO-ENQUEUE", "HYGIENE-STREAM-USABLE", "SYNC-ERROR-REPORTING"
)
@pytest.mark.parametrize("why", REJECTIONS)
@pytest.mark.parametrize("memory", ["pinned", "pageable"])
def test_rejected_call_leaves_no_trace(harness: Harness, why: str, memory: str) -> None:
    h = harness
    src = (
        h.pinned(64, ops.pattern(70, 64))
        if memory == "pinned"
        else h.pageable(64, ops.pattern(70, 64))
    )
    s = h.stream()
    assert not h.call("memcpy_to_symbol_async", **rejected_call(h, why, s, src.address)).ok
    q = h.call("stream_query", stream=s)  # nothing was enqueued: the idle stream is complete
    assert q["status"] == StreamStatus.ACL_STREAM_STATUS_COMPLETE
    assert ops.sync(h, s).ok
    h.observe(VAR)
    good = h.pinned(32, ops.pattern(71, 32))
    assert ops.to_symbol_async(
        h, VAR, good, count=32, offset=100, stream=s
    ).ok  # the stream still works
    assert ops.sync(h, s).ok
    assert h.observe(VAR)[100:132] == ops.pattern(71, 32)


@pytest.mark.requirement("HYGIENE-NO-ENQUEUE", "HYGIENE-NO-WRITE")
@pytest.mark.needs(gate=True)
@pytest.mark.parametrize("why", REJECTIONS[:4])
def test_rejected_call_behind_a_gate_enqueues_nothing(harness: Harness, why: str) -> None:
    h = harness
    src = h.pinned(64, ops.pattern(72, 64))
    s = h.stream()
    g = h.gate(s)
    assert not h.call("memcpy_to_symbol_async", **rejected_call(h, why, s, src.address)).ok
    h.open(g)
    ops.sync(h, s)
    h.observe(VAR)


@pytest.mark.requirement("RETURN-CODES")
@pytest.mark.parametrize("why", REJECTIONS)
def test_codes_are_acl_errors(harness: Harness, why: str) -> None:
    h = harness
    src = h.pageable(64, ops.pattern(73, 64))
    r = h.call("memcpy_to_symbol_async", **rejected_call(h, why, h.any_stream(), src.address))
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
