"""Leaving the backend clean for the next test: gates opened, devices drained, every
stream, event, registration and buffer the test made released.

A release call that does not succeed is noted in ``Harness.release_problems``: the
backend may then hold something of the test still, and a backend that serves the next
harness after a reset (``reset.py``) is replaced instead."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

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
            _release_call(h, "open_gate", {"gate": g})
    devices = sorted(h.model.devices_made_current() | h.devices_used)
    for d in devices:
        _release_call(h, "set_device", {"device_id": d})
        _release_call(h, "synchronize_device", {})
    for s in list(h.streams):
        # A stream is destroyed in the context it belongs to.
        device = h.model.stream_device(s)
        if device is not None:
            _release_call(h, "set_device", {"device_id": device})
        _release_call(h, "destroy_stream", {"stream": s})
    for e in list(h.events):
        _release_call(h, "destroy_event", {"event": e})
    for p in h.registrations:
        _release_call(h, "host_unregister", {"ptr": p})
    for b in h.buffers:
        if b.pinned:
            _release_call(h, "free_host", {"host_ptr": b.address})
        else:
            _release_call(h, "free_pageable", {"ptr": b.address})
    if devices:
        _release_call(h, "set_device", {"device_id": devices[0]})


def _release_call(h: Harness, name: str, args: dict[str, Any]) -> None:
    """One call of the clean-up, as host thread 0; one that fails is noted."""
    r = raw(h, name, 0, args, name)
    if not r.ok:
        h.release_problems.append(f"{h.model.render(name, args)} returned {r.code}")
