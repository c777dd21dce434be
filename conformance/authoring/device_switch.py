"""The current device and the NULL stream across aclrtSetDevice switches.

ACL's current device (its context) is per host thread, and NULL as a stream means the
default stream of the device current in the calling thread *at the call*: after a
switch it names the new device's default stream, never the one of the device NULL was
first used on.  ``null_across_switches`` walks one thread along a path of devices
(0, 1, 0 by default) and uses NULL at each step; ``with_device`` is the step one of
several host threads takes on a device of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager

from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.harness import Harness

from . import ops

PATH = (0, 1, 0)
"""Device 0, then 1, then 0 again."""


@contextmanager
def _after_a_switch(h: Harness, charge: bool, came_from: int, to: int) -> Iterator[None]:
    """A failure inside the block, a step on the NULL stream right after switching from
    ``came_from`` to ``to``, is charged to STREAM-NULL-DEFAULT: the same step passed on
    the first device (the model's own reading is kept in the text).  ``charge`` False:
    the caller charges it (several host threads)."""
    if not charge:
        yield
        return
    with h.unclassified():
        try:
            yield
        except ConformanceFailure as f:
            raise h.classify(
                f.under(
                    "STREAM-NULL-DEFAULT",
                    f"with NULL as the stream after aclrtSetDevice({to}) switched from "
                    f"device {came_from}",
                )
            ) from None


def null_across_switches(
    h: Harness, var: str, tag: int, path: Sequence[int] = PATH, charge: bool = True
) -> None:
    """One host thread sets each device of ``path`` in turn and, at each step, asks which
    device is current, copies into ``var`` on the NULL stream, synchronises the device and
    reads ``var`` back there.  With a stream gate, the first device's default stream is
    held by a closed gate all along: a NULL that still named it after a switch would leave
    the copy behind that gate, so the read after the device sync shows it missing.  The
    gate opens at the end, and the copies made behind it are read on the first device.
    ``var`` must have a baseline on every device of ``path``."""
    n = ops.size(h, var)
    first = path[0]
    h.call("set_device", device_id=first)
    gate = h.close_stream_gate(ops.NULL) if h.caps.gate else None
    came_from = first
    for step, device in enumerate(path):
        h.call("set_device", device_id=device)
        h.call("get_device")  # the model knows which device this thread set last
        switched = step > 0 and device != came_from
        with _after_a_switch(h, charge and switched, came_from, device):
            src = h.pinned(n, ops.pattern(tag + step, n))
            ops.to_symbol_async(h, var, src, count=n, stream=ops.NULL)
            if gate is None or device != first:
                ops.sync_device(h)
                h.observe(var)
        came_from = device
    if gate is not None:
        h.call("set_device", device_id=first)
        h.open_stream_gate(gate)
        ops.sync(h, ops.NULL)
        h.observe(var)


def with_device(h: Harness, device: int, var: str, tag: int, back_to: int | None) -> None:
    """One host thread's step among several: set ``device``, check that it is current,
    copy into ``var`` on the NULL stream, synchronise it and read ``var`` there; then
    set ``back_to`` (if given) and check that again.  Run by threads on different devices
    at once, no thread's choice may show in another's."""
    n = ops.size(h, var)
    h.call("set_device", device_id=device)
    h.call("get_device")
    src = h.pinned(n, ops.pattern(tag, n))
    ops.to_symbol_async(h, var, src, count=n, stream=ops.NULL)
    ops.sync(h, ops.NULL)
    h.observe(var)
    if back_to is not None and back_to != device:
        h.call("set_device", device_id=back_to)
        h.call("get_device")
