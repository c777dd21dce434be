"""What one harness made on the backend and what it wrote there: the host buffers,
streams, events, registrations and devices to release at close
(``teardown.py``), and the copies to symbols a reset must undo (``reset.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from acl_conformance.reference_impl.record import CallRecord

from .host_memory import HostBuffer


@dataclass(frozen=True)
class Written:
    """A copy to a symbol that the backend accepted: what it may have written."""

    device: int | None
    """The calling thread's current device (None when the harness cannot tell)."""
    symbol: int
    offset: int
    count: int


@dataclass
class Ledger:
    """What a harness made, wrote and reset through successful calls."""

    buffers: list[HostBuffer] = field(default_factory=list)
    """Host buffers allocated through the backend (the test's and the suite's scratch)."""
    streams: list[int] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    registrations: list[int] = field(default_factory=list)
    """Host ranges registered and not unregistered (undone at close: a registration may
    outlive the free of its memory and reach the next test)."""
    devices_used: set[int] = field(default_factory=set)
    thread_devices: dict[int, int] = field(default_factory=dict)
    """Per host thread: the device its latest successful aclrtSetDevice made current."""
    devices_reset: set[int] = field(default_factory=set)
    """Devices a successful aclrtResetDevice reset."""
    writes: list[Written] = field(default_factory=list)
    """Every copy to a symbol the backend accepted (what a reset must undo)."""

    def remember(
        self,
        name: str,
        args: dict[str, Any],
        result: CallRecord,
        thread: int,
        stream_alive: Callable[[int], bool],
    ) -> None:
        """Note what a successful call made, undid or wrote.  ``stream_alive``: whether a
        stream still exists (after a device reset, the model knows which are left)."""
        if not result.ok:
            return
        if name in ("memcpy_to_symbol_async", "memcpy_to_symbol"):
            if args.get("count"):
                # Where the copy went: the thread's current device as the backend accepted
                # it (None: not known, any device).
                self.writes.append(
                    Written(
                        self.thread_devices.get(thread),
                        args["symbol"],
                        args["offset"],
                        args["count"],
                    )
                )
        elif name == "host_register":
            self.registrations.append(int(args["ptr"]))
        elif name == "host_unregister" and args["ptr"] in self.registrations:
            self.registrations.remove(args["ptr"])
        elif name == "set_device":
            self.devices_used.add(int(args["device_id"]))
            self.thread_devices[thread] = int(args["device_id"])
        elif name == "reset_device":
            self.devices_reset.add(int(args["device_id"]))
            self.thread_devices.pop(thread, None)
            # The device's streams died with it.
            self.streams = [s for s in self.streams if stream_alive(s)]
        elif name == "create_stream" and "stream" in result.outputs:
            self.streams.append(int(result.outputs["stream"]))
        elif name == "destroy_stream" and args["stream"] in self.streams:
            self.streams.remove(args["stream"])
        elif name == "create_event" and "event" in result.outputs:
            self.events.append(int(result.outputs["event"]))
        elif name == "destroy_event" and args["event"] in self.events:
            self.events.remove(args["event"])
        elif name in ("free_host", "free_pageable"):
            # The test freed a buffer itself: it is not freed again at close.
            ptr = args["host_ptr" if name == "free_host" else "ptr"]
            self.buffers = [b for b in self.buffers if b.address != ptr]
