"""The bundled simulator: every ACL call of the contract, with CANN's checks in CANN's order.

The class only puts together the call layer (one ``calls_*`` module per API area,
each over the shared state of ``core``).
"""

from __future__ import annotations

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
