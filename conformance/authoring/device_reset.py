"""A device reset while other devices hold instances of the variables, carried to its
second and third step.

Distinct bytes go to every variable on every device; one device is reset
(aclrtResetDevice, as many times as it was set, from another device's context, so that
its context ends) and set again (aclrtSetDevice).  Every other device's instances must
be untouched (DEVICE-INSTANCE); the reset device's may hold anything
(DEVICE-RESET-CONTENTS: the text does not say, and what is read becomes the new start),
but they must be its own: bytes written to them afterwards show on it and on no other
device (DEVICE-INSTANCE).

Every call goes through the harness, so the model judges each one, the reads included.
"""

from __future__ import annotations

from collections.abc import Sequence

from acl_conformance.conformance.harness.harness import Harness

from . import ops


def write_everywhere(h: Harness, names: Sequence[str], devices: Sequence[int], tag: int) -> int:
    """Bytes of their own to every variable of ``names`` on every device of ``devices``
    (aclrtMemcpyToSymbol, complete at return), after an aclrtSynchronizeDevice on each so
    that no earlier copy lands over them; returns the next unused pattern tag."""
    for d in devices:
        with h.on_device(d):
            ops.sync_device(h)
            for var in names:
                n = ops.size(h, var)
                ops.write_variable(h, var, h.pageable(n, ops.pattern(tag, n)), count=n)
                tag += 1
    return tag


def observe_everywhere(h: Harness, names: Sequence[str], devices: Sequence[int]) -> None:
    """Read every variable of ``names`` on every device of ``devices`` (judged by the model)."""
    for d in devices:
        for var in names:
            h.observe(var, device=d)


def reset_then_set_again(
    h: Harness, names: Sequence[str], devices: Sequence[int], target: int, tag: int
) -> int:
    """The life cycle of the module docstring with ``target`` reset, among ``devices``
    (two or more); ``tag`` picks the patterns.  ``target`` is current on return; returns
    the next unused pattern tag."""
    if len(devices) < 2 or target not in devices:
        raise ValueError(f"a reset among two devices or more, of one of them: {target} {devices}")
    tag = write_everywhere(h, names, devices, tag)
    observe_everywhere(h, names, devices)  # every write landed, before any reset
    other = next(d for d in devices if d != target)
    h.call("set_device", device_id=other)
    for _ in range(h.model.device_references(target)):
        h.call("reset_device", device_id=target)
    # Another device's reset leaves this thread's current device as it was: a read made
    # now, with no aclrtSetDevice between, reads ``other``'s instance (DEVICE-CURRENT).
    # A read, not a copy: a copy here would hide what the reset did to ``other``.
    h.observe(names[0], device=other)
    h.call("set_device", device_id=target)
    # The reset device first (anything is accepted, and becomes its new start), then
    # the others: untouched.
    observe_everywhere(h, names, [target, *(d for d in devices if d != target)])
    # The reset device's instances are its own: bytes written there show nowhere else.
    tag = write_everywhere(h, names, [target], tag)
    observe_everywhere(h, names, [d for d in devices if d != target])
    return tag
