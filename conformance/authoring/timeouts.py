"""The timeouts of aclrtSynchronizeStreamWithTimeout by class, and one wait with a
timeout against an idle or a busy stream (the life cycle the clause test and the machine
rule share).

What each value means (acl_rt.h:2822; cann-runtime-facts.md section 4): -1 waits for as
long as it takes (never times out); a positive value is a limit in milliseconds (a
stream that finishes near it may or may not time out: timing is open); 0 is rejected by
CANN's runtime (107000) and left open by the text; below -1 is rejected (107000).
"""

from __future__ import annotations

import threading

from hypothesis import strategies as st

from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.reference_impl.record import CallRecord

FOREVER = -1
"""Wait for as long as it takes."""
LONG = 1000
"""A limit far longer than a timer takes to open a gate (a correct backend never reaches it)."""

TIMEOUT_CLASSES: dict[str, int] = {
    "forever": FOREVER,
    "zero": 0,
    "1 ms": 1,
    "20 ms": 20,
    "long": LONG,
    "below -1": -2,
}
"""One timeout of each class, by name."""

OPEN_DELAY = 0.05
"""How long a timer waits before it opens the gate that holds a waiting call (s): long
enough that a call which does not wait returns while the gate is still closed."""


def waits_out(timeout: int) -> bool:
    """Would a correct backend wait out a closed gate with ``timeout`` (as long as the
    timer that opens it takes)?  -1 and long limits: yes; short, zero and invalid: no."""
    return timeout == FOREVER or timeout >= LONG


def timeouts() -> st.SearchStrategy[int]:
    """Every class of timeout."""
    return st.sampled_from(list(TIMEOUT_CLASSES.values()))


def sync_with_timeout(
    h: Harness, stream: int, timeout: int, gate: int | None = None, delay: float = OPEN_DELAY
) -> CallRecord:
    """aclrtSynchronizeStreamWithTimeout(stream, timeout), judged by the model.

    ``gate``: a closed gate ahead of ``stream``'s tasks (a busy stream).  With a timeout a
    correct backend waits out (``waits_out``), a timer opens the gate after ``delay``, so
    that a correct backend returns 0 once it opens and a backend that does not wait is
    seen returning while it is still closed; the gate is open when this returns.  With a
    short, zero or invalid timeout the gate stays closed through the call (the call must
    time out or reject), and stays closed after it."""
    timer: threading.Timer | None = None
    if gate is not None and waits_out(timeout) and not h.gate_is_open(gate):
        timer = h.open_later(gate, delay)
    record = h.call("synchronize_stream_with_timeout", stream=stream, timeout=timeout)
    if timer is not None and gate is not None:
        h.settle_timer(timer, gate)
    return record
