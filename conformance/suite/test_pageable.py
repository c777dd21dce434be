"""Pageable host memory: the call returns only after the copy is complete."""

from __future__ import annotations

import pytest

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.gating.results import NOT_SUPPORTED
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.suite.suite_helpers import gate_opened_later
from acl_conformance.conformance.suite.suite_helpers import returned_while_closed

VAR = "g_arr256"
DELAY = 0.3
"""Seconds the gate stays closed: a correct backend's call returns after it."""


@pytest.mark.requirement("PAGEABLE-BLOCKS", "PAGEABLE-DRAINS-STREAM", "EFFECT-BYTES")
@pytest.mark.needs(gate=True)
def test_waits_behind_a_closed_gate(harness: Harness) -> None:
    h = harness
    src = h.pageable(64, ops.pattern(40, 64))
    with gate_opened_later(h, DELAY) as (s, g):
        r = ops.to_symbol_async(h, VAR, src, count=64, stream=s)
    if returned_while_closed(r, g):  # the model flags this as well; said here in the test's words
        h.fail("PAGEABLE-BLOCKS", "the pageable copy returned before the gate ahead of it opened")
    assert h.observe(VAR)[:64] == ops.pattern(40, 64)  # there at return, no sync


@pytest.mark.requirement("PAGEABLE-BLOCKS", "EFFECT-BYTES")
@pytest.mark.parametrize("stream", ["NULL", "created"])
def test_bytes_are_there_at_return(harness: Harness, stream: str) -> None:
    h = harness
    src = h.pageable(200, ops.pattern(41, 200))
    if stream == "NULL" and not h.caps.default_stream:
        pytest.skip(f"{NOT_SUPPORTED}the backend declares no default stream")
    s = ops.NULL if stream == "NULL" else h.stream()
    ops.to_symbol_async(h, VAR, src, count=200, offset=56, stream=s)
    assert h.observe(VAR)[56:] == ops.pattern(41, 200)


@pytest.mark.requirement("PAGEABLE-SOURCE-REUSE")
@pytest.mark.parametrize("reuse", ["overwrite", "free"])
def test_source_reused_right_after_the_call(harness: Harness, reuse: str) -> None:
    h = harness
    src = h.pageable(128, ops.pattern(42, 128))
    s = h.stream()
    ops.to_symbol_async(h, VAR, src, count=128, stream=s)
    if reuse == "overwrite":
        h.write(src, 0, ops.pattern(43, 128))
    else:
        h.call("free_pageable", ptr=src.address)
    ops.sync(h, s)
    assert h.observe(VAR)[:128] == ops.pattern(42, 128)


@pytest.mark.requirement("PAGEABLE-DRAINS-STREAM", "STREAM-FIFO")
def test_earlier_copies_of_the_stream_are_complete_at_return(harness: Harness) -> None:
    h = harness
    pinned = h.pinned(64, ops.pattern(44, 64))
    page = h.pageable(64, ops.pattern(45, 64))
    s = h.stream()
    ops.to_symbol_async(h, "g_arr4k", pinned, count=64, stream=s)
    ops.to_symbol_async(h, VAR, page, count=64, stream=s)
    assert h.observe("g_arr4k")[:64] == ops.pattern(44, 64)  # drained before the pageable copy
