"""A bug in a call most tests use, and bugs that other requirements observe (issue 21,
item 2): the whole suite runs against the backend, as a vendor runs it, and exactly the
requirements the bug breaks fail; every other requirement is decided (none ``unknown``),
none is charged as a bystander.

- ``null-stream-rejected-everywhere``: every call that takes a stream rejects NULL.  Most
  tests copy on the NULL stream or synchronise it; once STREAM-NULL-DEFAULT has failed,
  the steps that do not care which stream they use take a stream of their own, and a
  refusal on NULL is charged to STREAM-NULL-DEFAULT whatever call it was (a sync, a query,
  an event, a read), not to the sync's, query's, event's or read's own requirement.
- ``from-ignores-offset-zero-filled``: a read that lies (aclrtMemcpyFromSymbol ignores its
  offset) on a backend whose variables start zero-filled, as CANN's do, so that the wrong
  bytes look like a copy that did not land: charged to the read only.
- ``from-both-ignore-offset``: both From reads ignore their offset (an independent C
  library's bug, issue 34); an asynchronous read into page-locked memory that finds at
  offset 0 what its destination already held looks like a read that did not run:
  charged to the read only, not to the synchronisation that covered it.
- ``pageable-skips-the-drain``: a pageable copy that does not drain its stream: charged to
  the drain only, not to the pageable call's blocking, nor, with several host threads, to
  CONCURRENCY-THREADS.

Each run is the whole suite with a quarter of the standard Hypothesis settings profile's
examples per test (as tests/test_variants.py runs the legal variants).
"""

from __future__ import annotations

import pytest
from model_scenarios_support import PIN
from model_scenarios_support import after
from model_scenarios_support import copy
from model_scenarios_support import observe
from world import PAGEABLE
from world import call
from world import make_world

from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.command_line import selfcheck
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.session import context

CASES = [
    ("null-stream-rejected-everywhere", "spec", ["STREAM-NULL-DEFAULT"]),
    ("null-stream-rejected-everywhere", "cann", ["STREAM-NULL-DEFAULT"]),
    ("from-ignores-offset-zero-filled", "spec", ["FROMSYMBOL-BYTES"]),
    ("from-both-ignore-offset", "cann", ["FROMSYMBOL-BYTES"]),
    ("pageable-skips-the-drain", "cann", ["PAGEABLE-DRAINS-STREAM"]),
]


@pytest.mark.parametrize("name,profile,breaks", CASES, ids=[f"{n}-{p}" for n, p, _ in CASES])
def test_only_what_the_bug_breaks_fails_and_the_rest_is_decided(
    name: str, profile: str, breaks: list[str]
) -> None:
    v = BY_NAME[name]
    assert v.is_mutant(profile) and v.catches[profile] == breaks[0]
    r = selfcheck.check(v, profile, timeout=600, examples=25)
    assert r.result in ("caught", "survived"), r.detail  # the run finished
    assert r.failed_requirements == sorted(breaks), (
        f"{name} under {profile}: requirements not passing {r.failed_requirements} "
        f"(expected to fail: {breaks}); failing tests {r.failing_tests[:5]}; {r.detail}"
    )
    assert r.ok, r.detail


# -- the charges, one call at a time (the model alone) ---------------------------------

REFUSED = 107000  # ACL_ERROR_RT_PARAM_INVALID


@pytest.mark.parametrize("profile", ["spec", "cann"])
@pytest.mark.parametrize(
    "name,args,cited",
    [
        ("synchronize_stream", {}, "SYNC-ERROR-REPORTING"),
        ("stream_query", {}, "STREAM-QUERY"),
        ("launch_gate", {}, "STREAM-NULL-DEFAULT"),
    ],
)
def test_a_refusal_on_the_null_stream_names_the_default_stream(
    profile: str, name: str, args: dict[str, int], cited: str
) -> None:
    w = make_world(profile)
    (v,) = call(w.model, name, REFUSED, stream=0, **args)
    assert v.requirement == cited
    assert "STREAM-NULL-DEFAULT" in (v.requirement, *v.also)
    # on a stream of its own the same refusal is the call's alone
    if name != "launch_gate":
        (v,) = call(w.model, name, REFUSED, stream=w.stream, **args)
        assert "STREAM-NULL-DEFAULT" not in (v.requirement, *v.also)


def test_event_calls_and_a_timed_sync_on_the_null_stream_name_the_default_stream() -> None:
    """(Under spec a synchronisation with a timeout may fail with any code.)"""
    w = make_world("cann")
    (v,) = call(w.model, "synchronize_stream_with_timeout", REFUSED, stream=0, timeout=-1)
    assert "STREAM-NULL-DEFAULT" in v.also
    w.ok("create_event", outputs={"event": 0x900})
    for name in ("record_event", "stream_wait_event"):
        (v,) = call(w.model, name, REFUSED, event=0x900, stream=0)
        assert "STREAM-NULL-DEFAULT" in (v.requirement, *v.also), name


def test_a_backend_without_a_default_stream_is_not_charged_for_it() -> None:
    w = make_world("spec", default_stream=False)
    assert call(w.model, "synchronize_stream", REFUSED, stream=0) == []


def test_a_pageable_copy_that_skips_the_drain_is_charged_to_the_drain() -> None:
    w = make_world("cann")
    w.ok("launch_gate", stream=w.stream, outputs={"gate": 3})
    (v,) = copy(w, src=PAGEABLE)
    assert (v.requirement, v.also) == ("PAGEABLE-DRAINS-STREAM", ("PAGEABLE-BLOCKS",))
    assert v.early is not None  # the second look checks its bytes with the gate closed


def test_with_the_drain_masked_a_pageable_copy_does_not_complete_its_stream() -> None:
    """A backend known not to drain may run an earlier copy of the stream after the
    pageable one: the earlier copy's bytes on top are then no failure of anything."""
    w = make_world("cann")
    w.model.masks = frozenset({"PAGEABLE-DRAINS-STREAM"})
    assert copy(w, count=8) == []  # pinned, pending
    assert copy(w, src=PAGEABLE, count=8) == []
    pinned_on_top = after("g_arr256", 0, PIN[:8])
    assert observe(w, "g_arr256", pinned_on_top) == set()


# -- a query that finds the stream busy after a promise said it was complete -----------

NOT_READY, COMPLETE = 1, 0


def test_a_busy_query_after_a_pageable_copy_is_charged_to_the_drain() -> None:
    """A pageable copy that did not drain its stream leaves an earlier copy running: the
    query that then finds the stream busy shows the drain broken first (the query may be
    wrong too: the other reading)."""
    w = make_world("cann")
    assert copy(w, count=8) == []  # pinned, pending
    assert copy(w, src=PAGEABLE, count=8) == []
    (v,) = call(w.model, "stream_query", 0, outputs={"status": NOT_READY}, stream=w.stream)
    assert v.requirement == "PAGEABLE-DRAINS-STREAM"
    assert "STREAM-QUERY" in v.also
    assert v.requery == w.stream  # a second look tells the two readings apart


def test_under_spec_the_same_busy_query_fails_no_must() -> None:
    """Under spec the drain is a SHOULD: a backend that does not drain is legal, and the
    busy query it then answers is charged to the drain, not to a MUST."""
    w = make_world("spec")
    assert copy(w, count=8) == []
    assert copy(w, src=PAGEABLE, count=8) == []
    (v,) = call(w.model, "stream_query", 0, outputs={"status": NOT_READY}, stream=w.stream)
    assert v.requirement == "PAGEABLE-DRAINS-STREAM"


def test_a_busy_query_after_a_synchronisation_is_charged_to_the_synchronisation() -> None:
    w = make_world("cann")
    assert copy(w, count=8) == []
    w.ok("synchronize_stream", stream=w.stream)
    (v,) = call(w.model, "stream_query", 0, outputs={"status": NOT_READY}, stream=w.stream)
    assert v.requirement == "PINNED-COMPLETE-AFTER-SYNC"
    assert "STREAM-QUERY" in v.also


def test_a_busy_query_after_a_complete_one_is_the_query_s() -> None:
    """Nothing issued since the stream last said it was complete: busy now contradicts the
    query's own answer."""
    w = make_world("cann")
    assert copy(w, count=8) == []
    assert call(w.model, "stream_query", 0, outputs={"status": COMPLETE}, stream=w.stream) == []
    (v,) = call(w.model, "stream_query", 0, outputs={"status": NOT_READY}, stream=w.stream)
    assert v.requirement == "STREAM-QUERY"


def test_a_busy_query_on_a_stream_that_never_had_a_task_is_the_query_s() -> None:
    w = make_world("cann")
    (v,) = call(w.model, "stream_query", 0, outputs={"status": NOT_READY}, stream=w.stream)
    assert v.requirement == "STREAM-QUERY"
    assert v.requery is None


# -- the second look at a busy query, on a backend --------------------------------------

VARIANTS = "acl_conformance.adapters.variants:variant"


def _busy_query(variant: str, profile: str, pageable: bool) -> ConformanceFailure:
    """A pinned copy on a stream, then a pageable copy on it (or its synchronisation), then
    a query of the stream: the failure the harness charges."""
    suite = context.Suite(
        adapter_name=VARIANTS,
        # lazy: the pinned copy runs only once something asks for it (the drain would)
        adapter_options={"name": variant, "schedule": "lazy"},
        profile=profile,
    )
    with pytest.raises(ConformanceFailure) as e, suite.harness() as h:
        s = h.stream()
        ops.to_symbol_async(h, "g_arr256", h.pinned(16), count=16, stream=s)
        if pageable:
            ops.to_symbol_async(h, "g_arr256", h.pageable(16), count=16, offset=32, stream=s)
        else:
            ops.sync(h, s)
        h.call("stream_query", stream=s)
    return e.value


def test_a_stream_still_busy_after_a_pageable_copy_is_charged_to_the_drain() -> None:
    f = _busy_query("pageable-skips-the-drain", "cann", pageable=True)
    assert f.requirement == "PAGEABLE-DRAINS-STREAM", f
    assert "STREAM-QUERY" in f.also


def test_a_query_that_stays_busy_after_a_synchronisation_is_charged_to_the_query() -> None:
    f = _busy_query("query-busy-once-used", "cann", pageable=False)
    assert f.requirement == "STREAM-QUERY", f
    assert "PINNED-COMPLETE-AFTER-SYNC" in f.also
