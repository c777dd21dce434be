"""The real-CANN backend, and any backend with the ACL C ABI: the conformance agent.

- ``agent/``: the agent (``agent.cpp``, the file holding ``main`` and the fixture
  ``__gm__`` variables) and its ``CMakeLists.txt`` (CANN's ASC toolchain, or a plain
  build against any ACL library);
- ``include/``: ``acl/acl.h`` (the subset of CANN's public API the agent uses) and
  ``acl_conformance/register.h`` (the registration function of plain builds);
- ``double/``: a C test double of the ACL ABI, with planted bugs and faults;
- ``build``: builds all of these with the system compiler (or CMake) into a cache;
- ``client``: the agent process and the protocol (``PROTOCOL.md``);
- ``pool``: warm spare agents, so that a fresh agent per example costs little;
- ``forkserver``: fresh agents as forks of one that has started (for the double);
- ``adapter``: the ``cann`` adapter (options are listed there).
"""

from .adapter import CannAdapter, create
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
