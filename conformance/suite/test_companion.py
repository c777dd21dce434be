"""The calls around aclrtMemcpyToSymbolAsync: the other symbol copies, queries, streams, events, memory."""

from __future__ import annotations

import pytest

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.suite.suite_helpers import MEMORIES
from acl_conformance.conformance.suite.suite_helpers import PAGE
from acl_conformance.conformance.suite.suite_helpers import assert_held
from acl_conformance.conformance.suite.suite_helpers import first_page
from acl_conformance.conformance.suite.suite_helpers import gate_opened_later
from acl_conformance.conformance.suite.suite_helpers import host_buffer
from acl_conformance.conformance.suite.suite_helpers import stream_status
from acl_conformance.reference_impl.constants import MemcpyKind
from acl_conformance.reference_impl.constants import StreamStatus

VAR = "g_arr256"


# --- aclrtMemcpyToSymbol ------------------------------------------------------
@pytest.mark.requirement("TOSYMBOL-SYNC", "EFFECT-BYTES")
@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("kind", [ops.H2D, ops.DEFAULT])
def test_memcpy_to_symbol_is_complete_at_return(harness: Harness, memory: str, kind: int) -> None:
    h = harness
    data = ops.pattern(90, 100)
    src = host_buffer(h, memory, 100, data)
    assert ops.to_symbol(h, VAR, src, count=100, offset=10, kind=kind).ok
    h.write(src, 0, ops.pattern(91, 100))  # reusing the source changes nothing
    assert h.observe(VAR)[10:110] == data


@pytest.mark.requirement("TOSYMBOL-SYNC", "PINNED-ASYNC")
@pytest.mark.needs(gate=True)
def test_memcpy_to_symbol_does_not_wait_for_streams(harness: Harness) -> None:
    """aclrtMemcpyToSymbol is in no stream: from page-locked memory too, it is complete when
    it returns, even while a closed gate holds the streams."""
    h = harness
    data = ops.pattern(93, 64)
    src = h.pinned(64, data)
    # a copy that wrongly waits for the stream returns when the timer opens the gate
    with gate_opened_later(h, 3.0, stream=h.any_stream()):
        r = ops.to_symbol(h, VAR, src, count=64, offset=64)
        assert r.ok
        assert h.observe(VAR)[64:128] == data


@pytest.mark.requirement("TOSYMBOL-SYNC", "HYGIENE-NO-WRITE")
def test_memcpy_to_symbol_with_count_zero(harness: Harness) -> None:
    """Its other checks are the async call's (test_hygiene: every call, every defect)."""
    h = harness
    src = h.pageable(64, ops.pattern(92, 64))
    h.call(
        "memcpy_to_symbol",
        symbol=ops.symbol(h, VAR),
        src=src.address,
        count=0,
        offset=0,
        kind=ops.H2D,
    )
    h.observe(VAR)


# --- aclrtMemcpyFromSymbol[Async] -----------------------------------------------
@pytest.mark.requirement("FROMSYMBOL-KINDS")
@pytest.mark.parametrize(
    "kind", [*MemcpyKind, -1, 8, 999], ids=lambda k: getattr(k, "name", str(k))
)
@pytest.mark.parametrize("call", ["sync", "async"])
def test_from_symbol_kinds(harness: Harness, kind: int, call: str) -> None:
    h = harness
    dst = h.pinned(64)
    if call == "sync":
        r = ops.from_symbol(h, dst, VAR, count=16, kind=int(kind))
    else:
        s = h.stream()
        r = ops.from_symbol_async(h, dst, VAR, count=16, kind=int(kind), stream=s)
        ops.sync(h, s)
    assert r.ok == (int(kind) in (ops.D2H, ops.DEFAULT))


@pytest.mark.requirement("FROMSYMBOL-DSTMAX")
@pytest.mark.parametrize("dst_max", [15, 16, 17, 0, 2**31, 2**32 + 15, 2**63, 2**64 - 1])
@pytest.mark.parametrize("call", ["sync", "async"])
@pytest.mark.parametrize("at", ["start", "end"])
def test_from_symbol_dst_max(harness: Harness, dst_max: int, call: str, at: str) -> None:
    """count 16 against dstMax count - 1, count, count + 1, 0 and values past 32 bits, at
    offset 0 and at the variable's last 16 bytes (dstMax bounds dst, not the variable:
    the offset must not enter the comparison)."""
    h = harness
    dst = h.pageable(64, ops.pattern(93, 64))
    offset = 0 if at == "start" else ops.size(h, VAR) - 16
    if call == "sync":
        r = ops.from_symbol(h, dst, VAR, count=16, offset=offset, dst_max=dst_max)
    else:
        r = ops.from_symbol_async(h, dst, VAR, count=16, offset=offset, dst_max=dst_max)
    assert r.ok == (dst_max >= 16)
    if not r.ok:
        assert h.read(dst) == ops.pattern(93, 64)  # a rejected read writes nothing


@pytest.mark.requirement("FROMSYMBOL-BYTES", "PINNED-COMPLETE-AFTER-SYNC")
@pytest.mark.parametrize("memory", MEMORIES)
def test_from_symbol_async_reads_in_stream_order(harness: Harness, memory: str) -> None:
    h = harness
    src = h.pinned(64, ops.pattern(94, 64))
    dst = host_buffer(h, memory, 64)
    s = h.stream()
    # Behind a closed gate where there is one, so that the write has certainly not run
    # when the read is issued: a read made at the call, not in stream order, shows.
    g = h.close_stream_gate(s) if h.caps.gate and memory == "pinned" else None
    ops.to_symbol_async(h, VAR, src, count=64, stream=s)
    ops.from_symbol_async(h, dst, VAR, count=64, stream=s)  # after the write, in the same stream
    if g is not None:
        h.open_stream_gate(g)
    ops.sync(h, s)  # the harness checks the bytes the read left against the model
    assert h.read(dst) == ops.pattern(94, 64)


@pytest.mark.requirement("FROMSYMBOL-BYTES")
def test_from_symbol_with_count_zero(harness: Harness) -> None:
    """Nothing is read and nothing written (its other checks: test_hygiene)."""
    h = harness
    dst = h.pageable(64, ops.pattern(95, 64))
    args = dict(
        dst=dst.address, dst_max=64, symbol=ops.symbol(h, VAR), count=0, offset=0, kind=ops.D2H
    )
    h.call("memcpy_from_symbol", **args)
    assert h.read(dst) == ops.pattern(95, 64)


# --- aclrtGetSymbolAddress / aclrtGetSymbolSize ------------------------------------
@pytest.mark.requirement("GETSYMBOL-ADDRESS", "GETSYMBOL-SIZE", "SYMBOL-SIZE-AS-DECLARED")
def test_address_and_size_of_every_variable(harness: Harness) -> None:
    h = harness
    for name, f in h.fixtures.items():
        addr = h.call("get_symbol_address", symbol=f.address)
        assert addr.ok and addr["dev_ptr"] != 0, name
        size = h.call("get_symbol_size", symbol=f.address)
        assert size.ok and size["size"] == f.size, name


@pytest.mark.requirement("GETSYMBOL-ADDRESS", "GETSYMBOL-SIZE")
@pytest.mark.parametrize(
    "call,flag", [("get_symbol_address", "null_dev_ptr"), ("get_symbol_size", "null_size")]
)
@pytest.mark.parametrize("case", ["NULL symbol", "NULL out", "interior", "unregistered"])
def test_address_and_size_checks(harness: Harness, call: str, flag: str, case: str) -> None:
    h = harness
    args: dict[str, object] = {"symbol": ops.symbol(h, VAR)}
    if case == "NULL symbol":
        args["symbol"] = 0
    elif case == "NULL out":
        args[flag] = True
    elif case == "interior":
        args["symbol"] = ops.symbol(h, VAR) + 8
    else:
        args["symbol"] = h.pageable(16).address
    assert not h.call(call, **args).ok


# --- streams ---------------------------------------------------------------------
@pytest.mark.requirement("STREAM-CALLS")
def test_stream_calls(harness: Harness) -> None:
    h = harness
    assert not h.call("create_stream", null_stream=True).ok
    assert not h.call("destroy_stream", stream=ops.NULL).ok
    dead = ops.destroyed_stream(h)
    assert not h.call("synchronize_stream", stream=dead).ok
    assert not h.call("destroy_stream", stream=dead).ok
    assert not h.call("synchronize_stream", stream=h.adapter.invalid_handle()).ok
    if h.null_stream_usable:
        assert h.call("synchronize_stream", stream=ops.NULL).ok


@pytest.mark.requirement("STREAM-CALLS", "PINNED-COMPLETE-AFTER-SYNC")
def test_destroy_stream_with_pending_copies(harness: Harness) -> None:
    h = harness
    src = h.pinned(64, ops.pattern(96, 64))
    s = h.stream()
    ops.to_symbol_async(h, VAR, src, count=64, stream=s)
    h.call("destroy_stream", stream=s)
    ops.sync_device(h)
    h.observe(VAR)


@pytest.mark.requirement("SYNC-TIMEOUT")
@pytest.mark.needs(gate=True)
def test_synchronize_with_timeout(harness: Harness) -> None:
    h = harness
    s = h.stream()
    assert h.call("synchronize_stream_with_timeout", stream=s, timeout=1000).ok
    h.call("synchronize_stream_with_timeout", stream=s, timeout=0)
    h.call("synchronize_stream_with_timeout", stream=s, timeout=-2)
    g = h.close_stream_gate(s)
    assert not h.call(
        "synchronize_stream_with_timeout", stream=s, timeout=50
    ).ok  # blocked: times out
    h.open_stream_gate(g)
    assert h.call("synchronize_stream_with_timeout", stream=s, timeout=-1).ok


@pytest.mark.requirement("STREAM-QUERY")
@pytest.mark.needs(gate=True)
def test_stream_query(harness: Harness) -> None:
    h = harness
    s = h.stream()
    assert stream_status(h, s) == StreamStatus.ACL_STREAM_STATUS_COMPLETE
    g = h.close_stream_gate(s)
    src = h.pinned(16, ops.pattern(97, 16))
    ops.to_symbol_async(h, VAR, src, count=16, stream=s)
    assert_held(h, s, g)
    h.open_stream_gate(g)
    ops.sync(h, s)
    assert stream_status(h, s) == StreamStatus.ACL_STREAM_STATUS_COMPLETE
    assert not h.call("stream_query", stream=h.adapter.invalid_handle()).ok


# --- events ----------------------------------------------------------------------
@pytest.mark.requirement("EVENT-CALLS")
@pytest.mark.needs(events=True)
def test_event_calls(harness: Harness) -> None:
    h = harness
    assert not h.call("create_event", null_event=True).ok
    e = ops.event(h)
    s = h.stream()
    h.call("synchronize_event", event=e)  # never recorded: returns at once
    assert ops.record(h, e, s).ok
    assert h.call("synchronize_event", event=e).ok
    assert ops.wait(h, s, e).ok
    for call, args in [
        ("record_event", {"event": 0, "stream": s}),
        ("stream_wait_event", {"stream": s, "event": 0}),
        ("synchronize_event", {"event": 0}),
        ("destroy_event", {"event": 0}),
    ]:
        assert not h.call(call, **args).ok, call
    assert h.call("destroy_event", event=e).ok


@pytest.mark.requirement("EVENT-CALLS")
@pytest.mark.needs(events=True)
def test_an_event_outlives_the_stream_it_was_recorded_on(harness: Harness) -> None:
    """A record that completed before its stream was destroyed is still the event's: the
    event is a valid handle of its own, so synchronising it and making another stream wait
    for it succeed (nothing was pending when the stream went, so the text's silence on a
    destroy with tasks pending does not enter)."""
    h = harness
    e = ops.event(h)
    s = h.stream()
    assert ops.record(h, e, s).ok
    ops.sync(h, s)
    assert h.call("destroy_stream", stream=s).ok
    assert h.call("synchronize_event", event=e).ok
    other = h.stream()
    assert ops.wait(h, other, e).ok
    ops.sync(h, other)
    assert ops.record(h, e, other).ok  # recorded again on a live stream
    assert h.call("synchronize_event", event=e).ok


# --- host memory -------------------------------------------------------------------
@pytest.mark.requirement("HOST-MEMORY-CALLS")
def test_host_memory_calls(harness: Harness) -> None:
    h = harness
    r = h.call("malloc_host", size=0)
    if r.ok and r["host_ptr"]:
        h.call("free_host", host_ptr=r["host_ptr"])
    assert not h.call("malloc_host", size=64, null_host_ptr=True).ok
    p = h.pinned(PAGE)
    assert p.address % 64 == 0 or h.profile == "spec"
    assert not h.call("host_register", ptr=p.address, size=PAGE).ok  # already page-locked
    assert not h.call("host_unregister", ptr=h.pageable(64).address).ok


@pytest.mark.requirement("HOST-MEMORY-CALLS", "PINNED-REGISTERED")
@pytest.mark.needs(host_register=True)
def test_host_register_calls(harness: Harness) -> None:
    h = harness
    buf = h.pageable(3 * PAGE)
    page = buf.at(first_page(buf))
    h.call("host_register", ptr=page + 64, size=PAGE)  # misaligned: cann rejects
    assert h.call("host_register", ptr=page, size=PAGE).ok
    assert not h.call("host_register", ptr=page, size=PAGE).ok  # already registered
    assert h.call("host_unregister", ptr=page).ok
    assert not h.call("host_unregister", ptr=page).ok


# --- devices and process ----------------------------------------------------------
@pytest.mark.requirement("DEVICE-CALLS")
def test_device_calls(harness: Harness) -> None:
    h = harness
    assert h.call("get_device_count")["count"] == h.caps.devices
    assert h.call("get_device")["device_id"] == 0
    assert not h.call("set_device", device_id=h.caps.devices).ok
    assert not h.call("set_device", device_id=-1).ok
    if h.caps.devices > 1:
        with h.on_device(1):
            assert h.call("get_device")["device_id"] == 1


@pytest.mark.requirement("INIT-CALLS")
def test_repeated_init(fresh_harness: Harness) -> None:
    h = fresh_harness
    assert not h.call("init", config_path=None).ok or h.profile == "spec"
    h.call("get_version_str")


REGISTER_SIZES = [1, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE, 3 * PAGE - 1]


@pytest.mark.requirement("HOST-MEMORY-CALLS", "PINNED-REGISTERED")
@pytest.mark.needs(host_register=True)
@pytest.mark.parametrize("size", REGISTER_SIZES)
@pytest.mark.parametrize("misaligned", [False, True], ids=["aligned", "misaligned"])
def test_host_register_sizes_and_alignment(harness: Harness, size: int, misaligned: bool) -> None:
    """Sizes of a page and one either side of it, several pages, one byte; the pointer
    aligned to 4 KiB or not (CANN rejects a misaligned one).  Whatever it answers, the
    memory then behaves as its registration says, and unregistering undoes it."""
    h = harness
    buf = h.pageable(4 * PAGE, ops.pattern(640, 4 * PAGE))
    at = first_page(buf) + (64 if misaligned else 0)
    r = h.call("host_register", ptr=buf.at(at), size=size)
    ops.write_variable(h, VAR, buf, count=16, src_offset=at)
    assert h.observe(VAR)[:16] == ops.pattern(640, 4 * PAGE)[at : at + 16]
    if r.ok:
        assert h.call("host_unregister", ptr=buf.at(at)).ok
