"""Leaving the backend clean for the next test: stream gates opened, devices drained,
every stream, event, registration and buffer the test made released.

The clean-up calls are judged like every other call of the suite: they go through the
harness's one path (``Harness.call``: the backend, then the model), so that a clean-up
call that hangs is a hang charged to the requirement its success stands for, one that
raises is a crash, and one whose answer the profile does not allow is a failure, each
raised to the test whose harness it was (``Harness.release``).  A clean-up call that is
not made (the run declines it: it hung earlier, or a masked requirement is at stake) or
that is refused with a code the profile allows is returned as a problem (the harness
keeps them in ``Harness.release_problems``): the backend may then hold something of the
test still, and a backend that serves the next harness after a reset (``reset.py``) is
replaced instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl.record import CallRecord

from .failure import Declined
from .ledger import Ledger
from .stream_gates import StreamGates

Call = Callable[[str, dict[str, Any]], CallRecord]
"""Make one call through the harness's judged path (``Harness.call``)."""


def release(
    call: Call, open_gate: Callable[[int], None], gates: StreamGates, ledger: Ledger, model: Model
) -> list[str]:
    """Open gates, drain, free what the test made, as the calling host thread; the
    clean-up calls that were not made or did not succeed, in C form with their codes.
    A failure of a call (a hang, a crash, an answer the profile does not allow) is raised.

    Every device the test used is drained before anything is released: a buffer
    freed under a pending copy is a use-after-free (a backend may crash on it),
    and a copy still in flight would land in the next test's variables.
    """
    problems: list[str] = []

    def make(name: str, args: dict[str, Any]) -> None:
        try:
            r = call(name, args)
        except Declined as d:
            # Not made: it would hang again, or it puts a masked requirement at stake;
            # the instance is not trusted to be clean.
            problems.append(f"{model.render(name, args)} not made: {d}")
            return
        if not r.ok:
            problems.append(f"{model.render(name, args)} returned {r.code}")

    for g in list(gates.launched):
        try:
            open_gate(g)
        except Declined as exc:
            problems.append(f"stream gate {g} not opened: {exc}")
    devices = sorted(model.devices_made_current() | ledger.devices_used)
    for d in devices:
        make("set_device", {"device_id": d})
        make("synchronize_device", {})
    for s in list(ledger.streams):
        # A stream is destroyed in the context it belongs to.
        device = model.stream_device(s)
        if device is not None:
            make("set_device", {"device_id": device})
        make("destroy_stream", {"stream": s})
    for e in list(ledger.events):
        make("destroy_event", {"event": e})
    for p in list(ledger.registrations):
        make("host_unregister", {"ptr": p})
    for b in list(ledger.buffers):
        if b.pinned:
            make("free_host", {"host_ptr": b.address})
        else:
            make("free_pageable", {"ptr": b.address})
    if devices:
        make("set_device", {"device_id": devices[0]})
    return problems
