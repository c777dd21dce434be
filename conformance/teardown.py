"""Leaving the backend clean for the next test: gates opened, devices drained, every
stream, event, registration and buffer the test made released."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import gates
from .backend_calls import raw
from .failure import BackendCrash
from .failure import BackendTimeout

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness


def close(h: Harness) -> None:
    """Open gates, drain, free what the test made; then let go of its workers and records.

    Every device the test used is drained before anything is released: a buffer
    freed under a pending copy is a use-after-free (a backend may crash on it),
    and a copy still in flight would land in the next test's variables.
    """
    h.releaser.stop()
    try:
        if not h.poisoned:
            _release(h)
    except (BackendCrash, BackendTimeout):
        pass
    finally:
        for w in h.workers.values():
            w.close()
        h.workers.clear()
        # The adapter lives on into the next test: let go of this test's records (a
        # failure kept its own copy), or a session would hold every byte it wrote.
        with h.adapter.lock:
            del h.adapter.trace[h.trace_start :]


def _release(h: Harness) -> None:
    for g in h.gates:
        if gates.claim(h, g):
            raw(h, "open_gate", 0, {"gate": g}, "open_gate")
    devices = sorted(h.model.devices_made_current() | h.devices_used)
    for d in devices:
        raw(h, "set_device", 0, {"device_id": d}, "set_device")
        raw(h, "synchronize_device", 0, {}, "synchronize_device")
    for s in list(h.streams):
        # A stream is destroyed in the context it belongs to.
        device = h.model.stream_device(s)
        if device is not None:
            raw(h, "set_device", 0, {"device_id": device}, "set_device")
        raw(h, "destroy_stream", 0, {"stream": s}, "destroy_stream")
    for e in list(h.events):
        raw(h, "destroy_event", 0, {"event": e}, "destroy_event")
    for p in h.registrations:
        raw(h, "host_unregister", 0, {"ptr": p}, "host_unregister")
    for b in h.buffers:
        raw(
            h,
            "free_host" if b.pinned else "free_pageable",
            0,
            {"host_ptr": b.address} if b.pinned else {"ptr": b.address},
            "free",
        )
    if devices:
        raw(h, "set_device", 0, {"device_id": devices[0]}, "set_device")
