"""The real-CANN backend, and any backend with the ACL C ABI: the conformance agent.

- ``agent/``: the agent (``agent.cpp``, the file holding ``main`` and the fixture
  ``__gm__`` variables) and its ``CMakeLists.txt`` (CANN's ASC toolchain, or a plain
  build against any ACL library);
- ``include/``: ``acl/acl.h`` (the subset of CANN's public API the agent uses) and
  ``acl_conformance/register.h`` (the registration function of plain builds);
- ``double/``: a C test double of the ACL ABI, with planted bugs and faults;
- ``build``: builds all of these with the system compiler (or CMake) into a cache;
- ``exports``: the functions the agent needs of a library, and the check that it has them;
- ``options``: the adapter's options (listed there), parsed and validated;
- ``backend``: which agent the options ask for (found or built), and its environment;
- ``devices``: each pytest-xdist worker's agent starts on a device of its own;
- ``wire``: the protocol's codec (``PROTOCOL.md``), derived from ``CALLS``;
- ``process``: the agent's process, how it is killed and how its end is told;
- ``client``: one agent process and its callers (answers, time limits, crashes);
- ``pool``: warm spare agents, so that a fresh agent per example costs little;
- ``forkserver``: fresh agents as forks of one that has started (for the double);
- ``adapter``: the ``cann`` adapter, forwarding each contract call to the agent.

docs/cann-backend.md is the guide for a vendor running the suite against a library.
"""

from .adapter import CannAdapter
from .adapter import create
from .build import BuildError
from .client import AgentProcess
from .options import Options
from .process import AgentDied
from .wire import ProtocolError

__all__ = [
    "AgentDied",
    "AgentProcess",
    "BuildError",
    "CannAdapter",
    "Options",
    "ProtocolError",
    "create",
]
