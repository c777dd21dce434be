"""Every return-code rule of both profiles, call by call.

``cann`` must give CANN's exact code (facts sections 2, 4 and 7); ``spec``
must accept any non-zero code where the text demands a rejection, and accept
both success and rejection where the text is silent.
"""

from __future__ import annotations

from typing import Any

import pytest
from world import PAGEABLE, PINNED, W, make_world

from acl_conformance.reference_impl.constants import INT32_MAX, SIZE_MAX
from acl_conformance.reference_impl.outcome import Outcome

SUCCESS, REJECT, EITHER = "success", "reject", "either"
SOME_ERRORS = (1, 100000, 107000, 999999)


def codes(outcome: Outcome) -> set[int] | None:
    """The explicit codes an outcome allows, or None if it allows any error."""
    out: set[int] = set()
    for alt in outcome.alternatives:
        if alt.codes.values is None:
            return None
        out |= alt.codes.values
    return out


def spec_class(outcome: Outcome) -> str:
    ok = outcome.accepts_success()
    err = all(
        c in alt.codes
        for alt in outcome.alternatives
        if alt.codes.values is None
        for c in SOME_ERRORS
    )
    any_err = any(alt.codes.values is None for alt in outcome.alternatives)
    if ok and any_err and err:
        return EITHER
    if ok and not any_err:
        return SUCCESS
    if not ok and any_err:
        return REJECT
    return f"odd: {outcome.allowed_codes()}"


def base_to(w: W, **over: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(
        symbol=w.sym["g_arr256"], src=PINNED, count=16, offset=0, kind=1, stream=w.stream
    )
    args.update(over)
    return args


DESTROYED = 0x999


def world_with_dead_stream(profile: str) -> W:
    w = make_world(profile)
    w.ok("create_stream", outputs={"stream": DESTROYED})
    w.ok("destroy_stream", stream=DESTROYED)
    return w


TO_CASES: list[tuple[str, dict[str, Any], set[int], str, str]] = [
    # (case, overrides, cann codes, spec class, requirement of the primary alternative)
    ("H2D", {}, {0}, SUCCESS, "KIND-ACCEPTED"),
    ("DEFAULT", {"kind": 4}, {0}, SUCCESS, "KIND-ACCEPTED"),
    *[(f"kind {k}", {"kind": k}, {100000}, REJECT, "KIND-REJECTED") for k in (0, 2, 3, 5, 6, 7)],
    *[
        (f"kind {k}", {"kind": k}, {100000}, REJECT, "KIND-OUT-OF-ENUM")
        for k in (-1, 8, 999, INT32_MAX)
    ],
    ("end exact", {"offset": 240}, {0}, SUCCESS, "BOUNDS-END-EXACT"),
    ("whole variable", {"count": 256}, {0}, SUCCESS, "BOUNDS-END-EXACT"),
    ("one past the end", {"offset": 241}, {100000}, REJECT, "BOUNDS-PAST-END"),
    ("offset at the end", {"offset": 256, "count": 1}, {100000}, REJECT, "BOUNDS-PAST-END"),
    ("count one too many", {"count": 257}, {100000}, REJECT, "BOUNDS-PAST-END"),
    ("offset SIZE_MAX", {"offset": SIZE_MAX, "count": 1}, {500001}, REJECT, "BOUNDS-OVERFLOW"),
    ("sum wraps to 0", {"offset": 2, "count": SIZE_MAX - 1}, {500001}, REJECT, "BOUNDS-OVERFLOW"),
    (
        "sum exactly SIZE_MAX",
        {"offset": 1, "count": SIZE_MAX - 1},
        {100000},
        REJECT,
        "BOUNDS-PAST-END",
    ),
    ("symbol NULL", {"symbol": 0}, {100000}, REJECT, "SYMBOL-NULL"),
    ("symbol unregistered", {"symbol": PAGEABLE}, {107043}, REJECT, "SYMBOL-UNREGISTERED"),
    ("src NULL", {"src": 0}, {100000}, REJECT, "SRC-NULL"),
    ("stream NULL", {"stream": 0}, {0}, SUCCESS, "STREAM-NULL-DEFAULT"),
    ("stream destroyed", {"stream": DESTROYED}, {107017}, REJECT, "STREAM-INVALID-HANDLE"),
    ("stream garbage", {"stream": 0xDEAD}, {107017}, REJECT, "STREAM-INVALID-HANDLE"),
    ("foreign stream, pinned", {"stream": 0x300}, {107003}, EITHER, "STREAM-FOREIGN-DEVICE"),
    (
        "foreign stream, pageable",
        {"stream": 0x300, "src": PAGEABLE},
        {0, 107003},
        EITHER,
        "KIND-ACCEPTED",
    ),
    ("pageable src", {"src": PAGEABLE}, {0}, SUCCESS, "KIND-ACCEPTED"),
    # count == 0 first: everything else wrong still succeeds under cann
    ("count 0", {"count": 0}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, NULL symbol", {"count": 0, "symbol": 0}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, NULL src", {"count": 0, "src": 0}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, bad kind", {"count": 0, "kind": 2}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, bad stream", {"count": 0, "stream": 0xDEAD}, {0}, EITHER, "COUNT-ZERO"),
    ("count 0, offset past end", {"count": 0, "offset": 10_000}, {0}, EITHER, "COUNT-ZERO"),
]

ORDER_CASES: list[tuple[str, dict[str, Any], int, str]] = [
    # several wrong arguments: the first failing check in CANN's order decides
    ("NULL symbol before NULL src", {"symbol": 0, "src": 0}, 100000, "SYMBOL-NULL"),
    ("NULL src before kind", {"src": 0, "kind": 2}, 100000, "SRC-NULL"),
    ("kind before lookup", {"kind": 2, "symbol": PAGEABLE}, 100000, "KIND-REJECTED"),
    (
        "lookup before overflow",
        {"symbol": PAGEABLE, "offset": SIZE_MAX},
        107043,
        "SYMBOL-UNREGISTERED",
    ),
    ("overflow before stream", {"offset": SIZE_MAX, "stream": 0xDEAD}, 500001, "BOUNDS-OVERFLOW"),
    ("bounds before stream", {"offset": 250, "stream": 0xDEAD}, 100000, "BOUNDS-PAST-END"),
    (
        "bad stream before foreign check",
        {"stream": 0xDEAD, "src": PINNED},
        107017,
        "STREAM-INVALID-HANDLE",
    ),
]


@pytest.mark.parametrize("case", TO_CASES, ids=lambda c: c[0])
def test_to_symbol_async_cann(case: tuple[str, dict[str, Any], set[int], str, str]) -> None:
    _name, over, cann_codes, _spec, req = case
    w = world_with_dead_stream("cann")
    outcome = w.allowed("memcpy_to_symbol_async", **base_to(w, **over))
    assert codes(outcome) == cann_codes, outcome.allowed_codes()
    assert outcome.primary.requirement == req


@pytest.mark.parametrize("case", TO_CASES, ids=lambda c: c[0])
def test_to_symbol_async_spec(case: tuple[str, dict[str, Any], set[int], str, str]) -> None:
    _name, over, _cann, spec, req = case
    w = world_with_dead_stream("spec")
    outcome = w.allowed("memcpy_to_symbol_async", **base_to(w, **over))
    assert spec_class(outcome) == spec, outcome.allowed_codes()
    assert req in {a.requirement for a in outcome.alternatives}


@pytest.mark.parametrize("case", ORDER_CASES, ids=lambda c: c[0])
def test_cann_order_of_checks(case: tuple[str, dict[str, Any], int, str]) -> None:
    _name, over, code, req = case
    w = world_with_dead_stream("cann")
    outcome = w.allowed("memcpy_to_symbol_async", **base_to(w, **over))
    assert codes(outcome) == {code}
    assert outcome.primary.requirement == req
    spec = world_with_dead_stream("spec").allowed("memcpy_to_symbol_async", **base_to(w, **over))
    assert spec_class(spec) == REJECT


def test_interior_pointer() -> None:
    for profile in ("cann", "spec"):
        w = make_world(profile)
        for k in (1, 2, 255):
            outcome = w.allowed(
                "memcpy_to_symbol_async", **base_to(w, symbol=w.sym["g_arr256"] + k)
            )
            assert outcome.primary.requirement == "SYMBOL-INTERIOR"
            assert (
                (codes(outcome) == {107043}) if profile == "cann" else spec_class(outcome) == REJECT
            )
        # one past the end of a variable's shadow is the next variable, or nothing
        after = w.sym["g_arr4k"] + 4096
        assert (
            w.allowed("memcpy_to_symbol_async", **base_to(w, symbol=after)).primary.requirement
            == "SYMBOL-UNREGISTERED"
        )


def test_no_current_device() -> None:
    """A thread that never called aclrtSetDevice: 107002, or CANN's implicit default device."""
    w = make_world("cann")
    outcome = w.allowed("memcpy_to_symbol_async", thread=7, **base_to(w, stream=0))
    assert codes(outcome) == {0, 107002}
    w = make_world("spec")
    assert (
        spec_class(w.allowed("memcpy_to_symbol_async", thread=7, **base_to(w, stream=0))) == EITHER
    )


def test_null_stream_without_default_stream_capability() -> None:
    w = make_world("spec", default_stream=False)
    outcome = w.allowed("memcpy_to_symbol_async", **base_to(w, stream=0))
    assert spec_class(outcome) == EITHER
    assert {a.requirement for a in outcome.alternatives} == {"STREAM-NULL-DEFAULT"}
    w = make_world("cann", default_stream=False)
    assert codes(w.allowed("memcpy_to_symbol_async", **base_to(w, stream=0))) == {0}


@pytest.mark.parametrize("profile", ["cann", "spec"])
def test_unknown_source_memory_is_undefined(profile: str) -> None:
    """A src that is no buffer the suite allocated: anything goes (the suite never does this)."""
    w = make_world(profile)
    outcome = w.allowed("memcpy_to_symbol_async", **base_to(w, src=0x1234))
    assert outcome.accepts_success() and outcome.accepts_failure()


# --- the synchronous copy ------------------------------------------------------
@pytest.mark.parametrize(
    "over,cann_codes,spec",
    [
        ({}, {0}, SUCCESS),
        ({"kind": 2}, {100000}, REJECT),
        ({"kind": 999}, {100000}, REJECT),
        ({"offset": 241}, {100000}, REJECT),
        ({"offset": SIZE_MAX}, {500001}, REJECT),
        ({"symbol": 0}, {100000}, REJECT),
        ({"src": 0}, {100000}, REJECT),
        ({"count": 0, "src": 0}, {0}, EITHER),
    ],
)
def test_to_symbol_sync(over: dict[str, Any], cann_codes: set[int], spec: str) -> None:
    for profile in ("cann", "spec"):
        w = make_world(profile)
        args = base_to(w, **over)
        del args["stream"]
        outcome = w.allowed("memcpy_to_symbol", **args)
        assert outcome.primary.requirement == "TOSYMBOL-SYNC"
        if profile == "cann":
            assert codes(outcome) == cann_codes
        else:
            assert spec_class(outcome) == spec


# --- the reads -------------------------------------------------------------------
def base_from(w: W, **over: Any) -> dict[str, Any]:
    args: dict[str, Any] = dict(
        dst=PINNED,
        dst_max=64,
        symbol=w.sym["g_arr256"],
        count=16,
        offset=0,
        kind=2,
        stream=w.stream,
    )
    args.update(over)
    return args


FROM_CASES: list[tuple[dict[str, Any], set[int], str, str]] = [
    ({}, {0}, SUCCESS, "FROMSYMBOL-BYTES"),
    ({"kind": 4}, {0}, SUCCESS, "FROMSYMBOL-BYTES"),
    *[({"kind": k}, {100000}, REJECT, "FROMSYMBOL-KINDS") for k in (0, 1, 3, 5, 6, 7, -1, 8, 999)],
    ({"dst_max": 15}, {100000}, REJECT, "FROMSYMBOL-DSTMAX"),
    ({"dst_max": 16}, {0}, SUCCESS, "FROMSYMBOL-DSTMAX"),  # dstMax == count: its edge
    ({"dst_max": 17}, {0}, SUCCESS, "FROMSYMBOL-BYTES"),
    ({"dst_max": 15, "kind": 1}, {100000}, REJECT, "FROMSYMBOL-DSTMAX"),
    ({"dst": 0}, {100000}, REJECT, "FROMSYMBOL-BYTES"),
    ({"symbol": 0}, {100000}, REJECT, "FROMSYMBOL-BYTES"),
    ({"symbol": PAGEABLE}, {107043}, REJECT, "FROMSYMBOL-BYTES"),
    ({"offset": 241}, {100000}, REJECT, "FROMSYMBOL-BYTES"),
    ({"offset": SIZE_MAX, "count": 1}, {500001}, REJECT, "FROMSYMBOL-BYTES"),
    ({"count": 0, "dst": 0, "kind": 9}, {0}, EITHER, "FROMSYMBOL-BYTES"),
]


@pytest.mark.parametrize("async_", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("case", FROM_CASES, ids=lambda c: repr(c[0]))
def test_from_symbol(case: tuple[dict[str, Any], set[int], str, str], async_: bool) -> None:
    over, cann_codes, spec, req = case
    for profile in ("cann", "spec"):
        w = make_world(profile)
        args = base_from(w, **over)
        if not async_:
            del args["stream"]
        outcome = w.allowed("memcpy_from_symbol_async" if async_ else "memcpy_from_symbol", **args)
        assert outcome.primary.requirement == req
        if profile == "cann":
            assert codes(outcome) == cann_codes
        else:
            assert spec_class(outcome) == spec


def test_from_symbol_async_stream_rules() -> None:
    w = world_with_dead_stream("cann")
    assert codes(w.allowed("memcpy_from_symbol_async", **base_from(w, stream=DESTROYED))) == {
        107017
    }
    assert codes(w.allowed("memcpy_from_symbol_async", **base_from(w, stream=0x300))) == {107003}
    assert codes(
        w.allowed("memcpy_from_symbol_async", **base_from(w, stream=0x300, dst=PAGEABLE))
    ) == {0, 107003}
    assert codes(w.allowed("memcpy_from_symbol_async", **base_from(w, stream=0))) == {0}


# --- symbol queries ---------------------------------------------------------------
@pytest.mark.parametrize(
    "call,null_flag,req",
    [
        ("get_symbol_address", "null_dev_ptr", "GETSYMBOL-ADDRESS"),
        ("get_symbol_size", "null_size", "GETSYMBOL-SIZE"),
    ],
)
def test_symbol_queries(call: str, null_flag: str, req: str) -> None:
    w = make_world("cann")
    s = w.sym["g_u64"]
    assert codes(w.allowed(call, symbol=s)) == {0}
    assert codes(w.allowed(call, symbol=0)) == {100000}
    assert codes(w.allowed(call, symbol=s, **{null_flag: True})) == {100000}
    assert codes(w.allowed(call, symbol=0, **{null_flag: True})) == {100000}
    assert codes(w.allowed(call, symbol=s + 1)) == {107043}
    assert codes(w.allowed(call, symbol=PAGEABLE)) == {107043}
    assert w.allowed(call, symbol=PAGEABLE).primary.requirement == req
    sp = make_world("spec")
    assert spec_class(sp.allowed(call, symbol=PAGEABLE)) == REJECT
    assert spec_class(sp.allowed(call, symbol=sp.sym["g_u64"])) == SUCCESS


# --- streams ------------------------------------------------------------------------
def test_stream_calls_cann() -> None:
    w = world_with_dead_stream("cann")
    assert codes(w.allowed("create_stream")) == {0}
    assert codes(w.allowed("create_stream", null_stream=True)) == {100000}
    assert codes(w.allowed("destroy_stream", stream=0)) == {100000}
    assert codes(w.allowed("destroy_stream", stream=DESTROYED)) == {107017}
    assert codes(w.allowed("destroy_stream", stream=0xDEAD)) == {107017}
    assert codes(w.allowed("destroy_stream", stream=w.stream)) == {0}
    assert codes(w.allowed("destroy_stream", stream=0x300)) is None  # another device's: open
    assert codes(w.allowed("synchronize_stream", stream=0)) == {0}
    assert codes(w.allowed("synchronize_stream", stream=w.stream)) == {0}
    assert codes(w.allowed("synchronize_stream", stream=DESTROYED)) == {107017}
    assert codes(w.allowed("synchronize_stream", stream=0x300)) == {0, 107003}
    assert codes(w.allowed("stream_query", stream=0xDEAD)) == {107017}
    assert codes(w.allowed("stream_query", stream=w.stream)) == {0}


def test_sync_timeout_cann() -> None:
    w = world_with_dead_stream("cann")
    s = w.stream
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-2)) == {107000}
    # timeout < -1 is checked at the ACL layer, before the handle
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=0xDEAD, timeout=-2)) == {
        107000
    }
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=0xDEAD, timeout=0)) == {107017}
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=0)) == {107000}
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-1)) == {0, 507046}
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=100)) == {0, 507046}
    w.ok("launch_gate", stream=s, outputs={"gate": 1})
    assert codes(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=100)) == {507046}
    assert (
        w.allowed("synchronize_stream_with_timeout", stream=s, timeout=100).primary.requirement
        == "SYNC-TIMEOUT"
    )


def test_sync_timeout_spec() -> None:
    w = make_world("spec")
    s = w.stream
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=0)) == EITHER
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=-5)) == EITHER
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=50)) == EITHER
    w.ok("launch_gate", stream=s, outputs={"gate": 1})
    assert spec_class(w.allowed("synchronize_stream_with_timeout", stream=s, timeout=50)) == REJECT


@pytest.mark.parametrize("profile", ["cann", "spec"])
def test_blocking_calls_cannot_succeed_behind_a_closed_gate(profile: str) -> None:
    w = make_world(profile)
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 5})
    for call, args in [
        ("synchronize_stream", {"stream": w.stream}),
        ("synchronize_device", {}),
    ]:
        outcome = w.allowed(call, **args)
        assert not outcome.accepts_success(), call
        assert outcome.primary.requirement == "PINNED-COMPLETE-AFTER-SYNC"
    assert w.allowed("synchronize_stream", stream=w.other_stream).accepts_success()
    w.ok("open_gate", gate=5)
    assert w.allowed("synchronize_stream", stream=w.stream).accepts_success()


# --- events -----------------------------------------------------------------------
def test_event_calls() -> None:
    w = make_world("cann")
    assert codes(w.allowed("create_event")) == {0}
    assert codes(w.allowed("create_event", null_event=True)) == {100000}
    w.ok("create_event", outputs={"event": 0xE1})
    for call, args in [
        ("record_event", {"event": 0, "stream": w.stream}),
        ("stream_wait_event", {"stream": w.stream, "event": 0}),
        ("synchronize_event", {"event": 0}),
        ("destroy_event", {"event": 0}),
    ]:
        assert codes(w.allowed(call, **args)) == {100000}, call
    assert codes(w.allowed("record_event", event=0xE1, stream=0xDEAD)) == {107017}
    assert codes(w.allowed("record_event", event=0xE1, stream=w.stream)) == {0}
    assert codes(w.allowed("record_event", event=0xBAD, stream=w.stream)) is None
    # never recorded: nothing to wait for; success or an error, no effect either way
    unrecorded = w.allowed("synchronize_event", event=0xE1)
    assert unrecorded.accepts_success() and unrecorded.accepts_failure()
    w.ok("record_event", event=0xE1, stream=w.stream)
    assert codes(w.allowed("synchronize_event", event=0xE1)) == {0}
    w.ok("destroy_event", event=0xE1)
    assert codes(w.allowed("synchronize_event", event=0xE1)) is None
    assert not w.allowed("synchronize_event", event=0xE1).accepts_success()


# --- host memory ----------------------------------------------------------------------
def test_host_memory_calls_cann() -> None:
    w = make_world("cann")
    assert codes(w.allowed("malloc_host", size=0)) == {100000}
    assert codes(w.allowed("malloc_host", size=64, null_host_ptr=True)) == {100000}
    assert codes(w.allowed("malloc_host", size=64)) == {0}
    bad = w.model.expect("malloc_host", size=64).settle(0, host_ptr=0x7000_0000_0010)
    assert [v.requirement for v in bad] == ["HOST-MEMORY-CALLS"]  # not 64-byte aligned
    assert codes(w.allowed("free_host", host_ptr=PINNED)) == {0}
    assert codes(w.allowed("free_host", host_ptr=PAGEABLE)) is None
    # aclrtHostRegisterV2
    assert codes(w.allowed("host_register", ptr=PAGEABLE, size=4096)) == {0}
    assert codes(w.allowed("host_register", ptr=PAGEABLE + 64, size=4096)) is None  # misaligned
    assert not w.allowed("host_register", ptr=PAGEABLE + 64, size=4096).accepts_success()
    assert not w.allowed("host_register", ptr=PINNED, size=4096).accepts_success()
    assert not w.allowed("host_register", ptr=0, size=4096).accepts_success()
    w.ok("host_register", ptr=PAGEABLE, size=4096)
    assert not w.allowed("host_register", ptr=PAGEABLE, size=4096).accepts_success()
    assert codes(w.allowed("host_unregister", ptr=PAGEABLE + 4096)) == {507911}
    assert codes(w.allowed("host_unregister", ptr=PAGEABLE)) == {0}


def test_host_memory_calls_spec() -> None:
    w = make_world("spec")
    assert spec_class(w.allowed("malloc_host", size=0)) == EITHER
    assert spec_class(w.allowed("host_register", ptr=PAGEABLE + 64, size=4096)) == EITHER
    assert w.model.expect("malloc_host", size=64).settle(0, host_ptr=0x7000_0000_0010) == []
    assert spec_class(w.allowed("host_unregister", ptr=PAGEABLE)) == REJECT


# --- devices, init ------------------------------------------------------------------
def test_device_calls() -> None:
    for profile in ("cann", "spec"):
        w = make_world(profile)
        assert codes(w.allowed("set_device", device_id=1)) == {0}
        assert not w.allowed("set_device", device_id=2).accepts_success()
        assert not w.allowed("set_device", device_id=-1).accepts_success()
        assert not w.allowed("get_device", thread=3).accepts_success()
        assert w.model.expect("get_device").settle(0, device_id=0) == []
        assert [v.requirement for v in w.model.expect("get_device").settle(0, device_id=1)] == [
            "DEVICE-CALLS"
        ]
        assert w.model.expect("get_device_count").settle(0, count=2) == []
        assert [v.requirement for v in w.model.expect("get_device_count").settle(0, count=1)] == [
            "DEVICE-CALLS"
        ]
        assert not w.allowed("reset_device", device_id=5).accepts_success()


def test_init_calls() -> None:
    w = make_world("cann")
    assert codes(w.allowed("init", config_path=None)) == {100002}
    w.ok("finalize")
    assert codes(w.allowed("finalize")) == {100037}
    w = make_world("spec")
    assert spec_class(w.allowed("init", config_path=None)) == EITHER


# --- settle -------------------------------------------------------------------------
def test_settle_reports_the_requirement_and_what_was_allowed() -> None:
    w = make_world("cann")
    (v,) = w.model.expect("memcpy_to_symbol_async", **base_to(w, kind=2)).settle(107000)
    assert v.requirement == "KIND-REJECTED"
    assert "ACL_ERROR_INVALID_PARAM (100000)" in v.allowed
    assert "ACL_ERROR_RT_PARAM_INVALID (107000)" in v.observed
    assert (
        "aclrtMemcpyToSymbolAsync(&g_arr256, pinned0, 16, 0, ACL_MEMCPY_DEVICE_TO_HOST, stream1)"
        in v.call
    )
    text = v.render()
    assert text.startswith("[KIND-REJECTED]") and "allowed:" in text


@pytest.mark.parametrize("profile", ["spec", "cann"])
@pytest.mark.parametrize(
    ("over", "cited", "also"),
    [
        ({}, "KIND-ACCEPTED", ()),
        ({"offset": 240}, "BOUNDS-END-EXACT", ()),
        ({"stream": 0}, "STREAM-NULL-DEFAULT", ()),
        ({"stream": 0, "offset": 240}, "STREAM-NULL-DEFAULT", ("BOUNDS-END-EXACT",)),
    ],
)
def test_a_refused_valid_copy_names_every_requirement_it_could_break(
    profile: str, over: dict[str, Any], cited: str, also: tuple[str, ...]
) -> None:
    w = make_world(profile)
    (v,) = w.model.expect("memcpy_to_symbol_async", **base_to(w, **over)).settle(100000)
    assert (v.requirement, v.also) == (cited, also)


@pytest.mark.parametrize("code", SOME_ERRORS)
def test_spec_accepts_any_rejection_code(code: int) -> None:
    w = make_world("spec")
    assert w.model.expect("memcpy_to_symbol_async", **base_to(w, offset=300)).settle(code) == []
    (v,) = w.model.expect("memcpy_to_symbol_async", **base_to(w, offset=300)).settle(0)
    assert v.requirement == "BOUNDS-PAST-END"


def test_expectation_settles_once() -> None:
    w = make_world("cann")
    exp = w.model.expect("get_device_count")
    exp.settle(0, count=2)
    with pytest.raises(RuntimeError, match="already settled"):
        exp.settle(0, count=2)
