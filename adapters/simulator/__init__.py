"""The bundled simulator backend: an independent in-process implementation of the ACL calls.

It shares constants (error numbers, kinds) with ``reference_impl`` and no logic.

Modules, one job each:

- ``cabi``: what a Python integer becomes as a C argument (size_t, int32, pointers);
- ``layout``: the fixture variables, their shadow addresses, device offsets and initial pattern;
- ``symbols``: the symbol table (exact shadow address -> variable);
- ``hostmem``: the simulated host address space, pinned memory and registrations;
- ``streams``: streams, their worker threads and the schedules (eager, lazy, random);
- ``events``: events (records and waits) and the stream gate;
- ``devices``: devices, contexts and each host thread's current device;
- ``options``: the simulator's options, from values or strings;
- ``core``: the simulator's state and the lookups every call shares;
- ``calls_process``, ``calls_streams``, ``calls_events``, ``calls_hostmem``,
  ``calls_symbols``: the ACL call layer by API area, with CANN's checks in CANN's order;
  the order of checks and the codes are those of cann-runtime-facts.md (sections 2, 4,
  5 and 7), and where the facts leave a behaviour open, the choice made is marked
  ``Choice:`` in the method's docstring;
- ``simulator``: the ``Simulator`` class, which combines them.
"""

from .simulator import Simulator
from .simulator import SimulatorClosed
from .simulator import __version__

__all__ = ["Simulator", "SimulatorClosed", "__version__"]
