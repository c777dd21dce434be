"""An event's life cycle past its first record: recorded again after more work, recorded
again while a wait for it is still pending, recorded on a stream that is then destroyed.

Each function runs one whole life cycle on streams of its own, every call judged by the
model (the bytes too: each ends with an observation), so a test or a machine rule can
call it in one step.  What a wait follows is the record that was the event's latest when
aclrtStreamWaitEvent was called: a later record does not move a wait already issued, and a
later wait follows the new record (CANN: the wait captures the record's task at the call;
the simulator and the model alike).  Streams of the backend may hold tasks of the caller;
these functions use only streams they create, so nothing they wait for is held by a gate
they did not close.
"""

from __future__ import annotations

from acl_conformance.conformance.harness.harness import Harness

from . import ops

LIFE_CYCLES = ("recorded again", "recorded again while a wait is pending", "stream destroyed")
"""The life cycles of this module, by name (what a machine rule draws)."""

SLOT = 64
"""Bytes of each copy; the variable must hold two slots."""


def recorded_again(h: Harness, var: str, tag: int, offset: int = 0) -> None:
    """Record e on s1 behind a closed gate, s2 waits for it and copies; more work on s1
    behind a second gate, e recorded again, s3 waits and copies.  s2 must follow the first
    record only, s3 the second: with the second gate still closed, s3's copy cannot have
    run, and once it opens, s3's copy lands on top of s1's second copy."""
    a, b, c, d = (h.pinned(SLOT, ops.pattern(tag + k, SLOT)) for k in range(4))
    lo, hi = offset, offset + SLOT
    s1, s2, s3 = h.stream(), h.stream(), h.stream()
    e = ops.event(h)
    g = h.close_stream_gate(s1)
    ops.to_symbol_async(h, var, a, count=SLOT, offset=lo, stream=s1)
    ops.record(h, e, s1)
    ops.wait(h, s2, e)  # s2 follows the first record: after a
    ops.to_symbol_async(h, var, b, count=SLOT, offset=lo, stream=s2)
    g2 = h.close_stream_gate(s1)
    ops.to_symbol_async(h, var, c, count=SLOT, offset=hi, stream=s1)
    ops.record(h, e, s1)  # recorded again, after c
    ops.wait(h, s3, e)  # s3 follows the second record: after c
    ops.to_symbol_async(h, var, d, count=SLOT, offset=hi, stream=s3)
    h.open_stream_gate(g)
    ops.sync(h, s2)
    h.observe(var)  # d is behind g2 through the second record: it cannot have run
    h.open_stream_gate(g2)
    ops.sync(h, s3)
    h.observe(var)  # b on top of a, d on top of c
    _end(h, s1, s2, s3, event=e)


def recorded_again_while_waited(h: Harness, var: str, tag: int, offset: int = 0) -> None:
    """Record e on s1 behind a closed gate; s2, held by a gate of its own, waits for e and
    copies; e is recorded again on an idle s3 while s2's wait has not started.  The wait
    still follows the first record: once s2's gate opens, its copy waits for s1's gate,
    and lands on top of s1's copy."""
    a, b = (h.pinned(SLOT, ops.pattern(tag + k, SLOT)) for k in range(2))
    s1, s2, s3 = h.stream(), h.stream(), h.stream()
    e = ops.event(h)
    g1 = h.close_stream_gate(s1)
    ops.to_symbol_async(h, var, a, count=SLOT, offset=offset, stream=s1)
    ops.record(h, e, s1)
    g2 = h.close_stream_gate(s2)
    ops.wait(h, s2, e)  # pending: s2 is held by g2
    ops.to_symbol_async(h, var, b, count=SLOT, offset=offset, stream=s2)
    ops.record(h, e, s3)  # recorded again meanwhile; s3 has nothing to wait for
    h.open_stream_gate(g2)
    h.watch(var, seconds=0.02)  # b follows a, behind g1: it cannot have run
    h.open_stream_gate(g1)
    ops.sync(h, s2)
    h.observe(var)  # b on top of a
    _end(h, s1, s2, s3, event=e)


def recorded_then_destroyed(h: Harness, var: str, tag: int, offset: int = 0) -> None:
    """Record e on s1 behind a closed gate, then destroy s1 (its gate opens from a timer:
    a destroy may wait for the stream's tasks), then synchronise e: the copy e captured
    has landed when that returns, whatever became of the stream."""
    a = h.pinned(SLOT, ops.pattern(tag, SLOT))
    s1 = h.stream()
    e = ops.event(h)
    g = h.close_stream_gate(s1)
    ops.to_symbol_async(h, var, a, count=SLOT, offset=offset, stream=s1)
    ops.record(h, e, s1)
    timer = h.open_later(g, 0.02)
    h.call("destroy_stream", stream=s1)
    h.call("synchronize_event", event=e)
    h.observe(var)  # a is complete: the event captured it
    h.settle_timer(timer, g)
    h.call("destroy_event", event=e)


def run(h: Harness, how: str, var: str, tag: int, offset: int = 0) -> None:
    """The life cycle named ``how`` (one of LIFE_CYCLES)."""
    {
        LIFE_CYCLES[0]: recorded_again,
        LIFE_CYCLES[1]: recorded_again_while_waited,
        LIFE_CYCLES[2]: recorded_then_destroyed,
    }[how](h, var, tag, offset)


def _end(h: Harness, *streams: int, event: int) -> None:
    """Destroy what the life cycle made (everything on them is complete by now)."""
    for s in streams:
        ops.sync(h, s)
        h.call("destroy_stream", stream=s)
    h.call("destroy_event", event=event)
