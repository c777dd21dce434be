"""The model's public queries: what the suite's machines, tests and reproducer may ask.

The model (model.py) inherits them; they only read its state (``model_state.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .calls import render_call
from .judgement import Judgement
from .memory import distinct_values
from .model_state import ModelState


class Queries(ModelState):
    """Read-only questions about the model's state, in the spec's words."""

    def gate_ids(self) -> list[int]:
        """The gates that are closed now."""
        return [g.gid for g in self.order.gates]

    def last_call(self) -> Judgement | None:
        """The most recent call announced (None before any)."""
        return self.history[-1] if self.history else None

    def current_device(self, thread: int = 0) -> int | None:
        """Host ``thread``'s current device (None before it called aclrtSetDevice)."""
        return self.world.current_device(thread)

    def device_references(self, device: int) -> int:
        """How many aclrtSetDevice calls on ``device`` no aclrtResetDevice has undone yet:
        the resets it takes to end the device's context."""
        return max(0, self.world.refcount.get(device, 0))

    def devices_made_current(self) -> set[int]:
        """The devices that are some host thread's current device now."""
        return {d for d in self.world.current.values() if d is not None}

    def stream_device(self, stream: int) -> int | None:
        """The device of ``stream``, a stream the backend created and that is not destroyed
        (None for any other handle, NULL included)."""
        s = self.world.streams.get(stream)
        return s.device if s is not None and s.alive else None

    def symbol_at(self, address: int) -> tuple[str, int] | None:
        """The fixture variable whose symbol (host shadow address) is ``address``: its name
        and declared size (None when no variable starts there)."""
        sym = self.world.symbols.get(address)
        return (sym.name, sym.size) if sym is not None else None

    def render(self, name: str, args: Mapping[str, Any]) -> str:
        """The call ``name(**args)`` in C form, handles and addresses by their names."""
        return render_call(name, args, self.world.name_of)

    def is_pageable(self, address: int, count: int) -> bool:
        """Is [address, address + count) host memory the suite allocated that this
        profile certainly treats as pageable (a copy from it returns only once complete)?
        False for page-locked memory, memory that may be either, and unknown addresses."""
        rng = self.world.host_range(address, count)
        return rng.known and not self.profile.pinned_path(rng)[0]

    def reads_at_return(self, name: str, args: Mapping[str, Any]) -> bool:
        """Does call ``name(**args)``, if it succeeds, leave the bytes it read in its
        destination when it returns: a synchronous read, or an asynchronous one into memory
        this profile certainly treats as pageable (the caller reads them back and settles
        the call with ``observed=``)."""
        return name == "memcpy_from_symbol" or (
            name == "memcpy_from_symbol_async" and self.is_pageable(args["dst"], args["count"])
        )

    def stream_waits_behind_closed_gate(self, stream: int, thread: int = 0) -> bool:
        """Would a call that waits for ``stream`` (NULL: the default stream of ``thread``'s
        current device) wait for a gate that is closed now: one in the stream, or one an
        event wait made it follow?  False for a handle that is no live stream."""
        if stream == 0:
            s = self.world.default_streams.get(self.current_device(thread) or 0)
        else:
            s = self.world.streams.get(stream)
        return s is not None and self.order.closed_gate_before(s.queue.frontier) is not None

    def event_waits_behind_closed_gate(self, event: int) -> bool:
        """Would aclrtSynchronizeEvent on ``event`` wait for a gate that is closed now (its
        latest record follows one)?  False for an event never recorded or not live."""
        e = self.world.live_event(event)
        return (
            e is not None
            and e.captured is not None
            and self.order.closed_gate_before(e.captured) is not None
        )

    def streams_behind_first_gate(self) -> tuple[int, list[int]] | None:
        """The oldest gate still closed and the created streams it stands in, which can
        report nothing but NOT_READY until it opens; None when every gate is open."""
        if not self.order.gates:
            return None
        g = self.order.gates[0]
        held = [
            s.handle for s in self.world.streams.values() if s.alive and s.queue.key == g.task.queue
        ]
        return g.gid, held

    def read_allowed(
        self, call: Judgement
    ) -> list[tuple[int, int, list[np.ndarray] | None]] | None:
        """What synchronous read ``call`` (the last one judged) allowed, per segment:
        (start, end, values), a byte allowed where some array of ``values`` has it (None:
        any byte; the read then gave the variable's new contents).  None when the last read
        judged was another, or there was none."""
        if self.last_read is None or self.last_read[0] is not call:
            return None
        return [(a, b, distinct_values(values)) for a, b, values in self.last_read[1]]
