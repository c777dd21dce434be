"""Every return-code rule of both profiles, call by call.

``cann`` must give CANN's exact code (facts sections 2, 4 and 7); ``spec``
must accept any non-zero code where the text demands a rejection, and accept
both success and rejection where the text is silent."""

from __future__ import annotations

from typing import Any

import pytest
from profile_rules_support import DESTROYED
from profile_rules_support import EITHER
from profile_rules_support import FROM_CASES
from profile_rules_support import ORDER_CASES
from profile_rules_support import REJECT
from profile_rules_support import SUCCESS
from profile_rules_support import TO_CASES
from profile_rules_support import base_from
from profile_rules_support import base_to
from profile_rules_support import codes
from profile_rules_support import spec_class
from profile_rules_support import world_with_dead_stream
from world import PAGEABLE
from world import make_world

from acl_conformance.reference_impl.constants import SIZE_MAX


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
