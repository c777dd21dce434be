"""Leaving the backend clean for the next test: stream gates opened, devices drained,
every stream, event, registration and buffer the test made released.

A release call that does not succeed is returned as a problem (the harness keeps them in
``Harness.release_problems``): the backend may then hold something of the test still, and
a backend that serves the next harness after a reset (``reset.py``) is replaced instead."""

from __future__ import annotations

from typing import Any

from acl_conformance.reference_impl import Model

from .backend_calls import BackendCalls
from .failure import BackendCrash
from .failure import BackendTimeout
from .ledger import Ledger
from .stream_gates import StreamGates


def release(backend: BackendCalls, gates: StreamGates, ledger: Ledger, model: Model) -> list[str]:
    """Open gates, drain, free what the test made, as host thread 0; the clean-up calls
    that did not succeed, in C form with their codes.

    Every device the test used is drained before anything is released: a buffer
    freed under a pending copy is a use-after-free (a backend may crash on it),
    and a copy still in flight would land in the next test's variables.
    """
    problems: list[str] = []

    def call(name: str, args: dict[str, Any]) -> None:
        hung = backend.would_hang(name, args)
        if hung is not None:
            # It would hang again: not made, and the instance is not trusted to be clean.
            problems.append(f"{model.render(name, args)} not made: the backend hung on it earlier")
            return
        r = backend.raw(name, 0, args, name)
        if not r.ok:
            problems.append(f"{model.render(name, args)} returned {r.code}")

    if backend.poisoned:
        return problems
    try:
        for g in _closed_gates(gates):
            call("open_gate", {"gate": g})
        devices = sorted(model.devices_made_current() | ledger.devices_used)
        for d in devices:
            call("set_device", {"device_id": d})
            call("synchronize_device", {})
        for s in list(ledger.streams):
            # A stream is destroyed in the context it belongs to.
            device = model.stream_device(s)
            if device is not None:
                call("set_device", {"device_id": device})
            call("destroy_stream", {"stream": s})
        for e in list(ledger.events):
            call("destroy_event", {"event": e})
        for p in ledger.registrations:
            call("host_unregister", {"ptr": p})
        for b in ledger.buffers:
            if b.pinned:
                call("free_host", {"host_ptr": b.address})
            else:
                call("free_pageable", {"ptr": b.address})
        if devices:
            call("set_device", {"device_id": devices[0]})
    except (BackendCrash, BackendTimeout):
        pass  # the backend stopped answering: the harness is poisoned, the run says so
    return problems


def _closed_gates(gates: StreamGates) -> list[int]:
    """The launched gates still closed, each now claimed for the clean-up to open."""
    return [g for g in list(gates.launched) if gates.claim(g)]
