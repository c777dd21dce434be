"""Work still pending at a sync: every synchronising call meets a deep queue that is still
running when the call is made.

A closed stream gate holds dozens of page-locked copies; a timer opens it only after the
call has been issued (hip-tests' delay kernel, as a gate).  A correct backend returns
after the gate opened, with every copy landed; a slow one (waiting for more than it must,
or serialising) is as correct.  A backend that does not wait for a deep queue returns
while the gate is still closed: the model allows no success then, and charges it to the
call's promise of completion (PINNED-COMPLETE-AFTER-SYNC, SYNC-TIMEOUT for the call with
a time limit, STREAM-CALLS for a destroy under cann); the read after it would show the
copies missing.

Where the gate opened before the call was even issued (a loaded machine held the test
back for the whole delay), the call met no closed gate and proved nothing either way: the
scenario runs again with a longer delay (and after the last, the test is skipped:
the check did not happen).
"""

from __future__ import annotations

import pytest

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.gating.results import NOT_SUPPORTED
from acl_conformance.conformance.harness.harness import Harness

VAR = "g_arr4k"
DEPTH = 40
"""Copies behind the gate: with the gate, more than the depths (2, 8, 32) past which a
queue might be taken for empty."""
COPY = 64
"""Bytes per copy, each to a range of its own: the read after the call tells which ran."""
DELAYS = (0.15, 0.6, 2.0)
"""Seconds until the timer opens the gate, try after try: long enough for the call to be
issued well before (a backend that returns at once does so in microseconds), short enough
for a correct backend that waits it out."""

SYNCS = [
    pytest.param("stream", marks=pytest.mark.requirement("PINNED-COMPLETE-AFTER-SYNC")),
    pytest.param("device", marks=pytest.mark.requirement("PINNED-COMPLETE-AFTER-SYNC")),
    pytest.param(
        "event",
        marks=pytest.mark.requirement("PINNED-COMPLETE-AFTER-SYNC", "EVENT-CALLS"),
    ),
    pytest.param("timeout", marks=pytest.mark.requirement("SYNC-TIMEOUT")),
    pytest.param("destroy", marks=pytest.mark.requirement("STREAM-CALLS")),
]


def _deep_queue_then(h: Harness, how: str, delay: float, tag: int) -> bool:
    """DEPTH copies behind a closed gate on a new stream, a timer that opens the gate
    after ``delay`` seconds, then the call ``how`` (judged by the model), then a read of
    every byte.  True if the call was issued while the gate was still closed."""
    s = h.stream()
    src = h.pinned(DEPTH * COPY, ops.pattern(tag, DEPTH * COPY))
    g = h.close_stream_gate(s)
    for k in range(DEPTH):
        ops.to_symbol_async(h, VAR, src, count=COPY, offset=COPY * k, stream=s, src_offset=COPY * k)
    e = ops.event(h) if how == "event" else None
    if e is not None:
        ops.record(h, e, s)
    timer = h.open_later(g, delay)
    met_closed = not h.gate_is_open(g)
    # Judged by the model: no success while the gate is closed (a destroy under spec
    # excepted), and what a success promises is complete.
    if how == "stream":
        ops.sync(h, s)
    elif how == "device":
        ops.sync_device(h)
    elif how == "event":
        h.call("synchronize_event", event=e)
    elif how == "timeout":  # far longer than the delay
        h.call("synchronize_stream_with_timeout", stream=s, timeout=30_000)
    else:
        h.call("destroy_stream", stream=s)
    h.settle_timer(timer, g)
    # Every copy landed (after a success; after a destroy under spec, any of them may
    # have: the text does not say that a destroy waits).
    h.observe(VAR)
    return met_closed


@pytest.mark.needs(gate=True)
@pytest.mark.parametrize("how", SYNCS)
def test_sync_waits_for_a_deep_running_queue(harness: Harness, how: str) -> None:
    h = harness
    if how == "event" and not h.caps.events:
        pytest.skip(f"{NOT_SUPPORTED}the backend declares no events")
    for i, delay in enumerate(DELAYS):
        if _deep_queue_then(h, how, delay, 700 + i):
            return
    # Not a failure of the backend, and not a pass either: the check did not happen.
    pytest.skip(
        f"the gate's timer fired before the call was issued {len(DELAYS)} times (last "
        f"after {DELAYS[-1]:g} s): the machine is too loaded for this check"
    )
