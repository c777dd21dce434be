"""The bundled simulator: every ACL call of the contract, with CANN's checks in CANN's order.

The class only puts together the call layer (one ``calls_*`` module per API area,
each over the shared state of ``core``) and adds white-box access for the
simulator's own tests.
"""

from __future__ import annotations

import threading

from .calls_events import EventCalls
from .calls_hostmem import HostMemoryCalls
from .calls_process import ProcessCalls
from .calls_streams import StreamCalls
from .calls_symbols import SymbolCalls
from .core import SimulatorClosed
from .core import __version__

__all__ = ["Simulator", "SimulatorClosed", "__version__"]


class Simulator(ProcessCalls, StreamCalls, EventCalls, HostMemoryCalls, SymbolCalls):
    """The bundled backend: an independent, in-process implementation of the ACL calls."""

    name = "sim"
    calls_may_hang = False
    """In-process, and its calls only ever wait for streams, whose gates the suite opens."""

    # -- white-box access for the simulator's own tests (not part of the contract) ----
    def snapshot(self, device: int) -> bytes:
        """The whole device image of ``device`` (guards included) as it is now; the initial
        image if the device has no context."""
        ctx = self._devices.context_of(device)
        return (ctx.memory if ctx is not None else self.layout.image()).tobytes()

    def worker_threads(self) -> list[threading.Thread]:
        """The worker threads of the streams that are still live."""
        with self._lock:
            streams = list(self._live_streams)
        return [t for s in streams if (t := s.thread) is not None and t.is_alive()]
