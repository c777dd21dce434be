"""The contract every backend meets: one method per ACL call, close to the C API.

Each method is the snake_case name of the C call (see
``acl_conformance.reference_impl.calls.CALLS`` for the C function each stands
for) and returns the ``aclError`` integer, plus the call's outputs where C has
out-parameters: ``create_stream() -> (code, stream)``.  Arguments and outputs
are plain integers (stream, event and gate handles; host addresses; device
addresses), bytes and strings, so that

- NULL (0), a destroyed handle, garbage, an interior pointer or an
  unregistered host address can be passed on purpose, and
- every call is a record (name, arguments, result) that can be logged, sent
  over a pipe, replayed and printed as C.

A backend declares its :class:`Capabilities` and its fixture variables (the
device variables it holds: a real backend cannot declare new ones at run time).

The suite always talks to a backend through ``Traced`` (``traced.py``), which
records the trace of calls.  A call of the contract is a row of ``CALLS`` and an
abstract method here, nothing more: ``Traced`` is made from the two, and its
import checks that they are the same set of calls.  (This module imports nothing
of the model but its constants: the simulator builds on it.)
"""

from __future__ import annotations

from abc import ABC
from abc import abstractmethod
from dataclasses import dataclass

# Capabilities is the one description of what a backend offers, and what the model assumes
# of it: it lives with the constants so that the contract imports no model logic.
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED
from acl_conformance.reference_impl.constants import Capabilities as Capabilities


class CallTimeout(Exception):
    """Raised by an adapter that enforces its own time limit on a call (a backend in
    another process, say) when the call did not answer in time: the suite reports
    TIMEOUT.  Any other exception from an adapter call is reported as CRASH."""


@dataclass(frozen=True)
class FixtureVariable:
    """A device variable the backend holds: its name, declared size and host shadow address."""

    name: str
    size: int
    address: int
    """The host shadow address, ``&var`` in C: what aclrtMemcpyToSymbolAsync takes as symbol."""


class Adapter(ABC):
    """One backend.  Every method returns the aclError code first."""

    name: str = "adapter"

    isolation: str = "run"
    """How long one instance of the backend may serve the suite: ``"run"`` (one per worker
    process: every test of the worker, each example and shrink step), ``"reset"`` (one per
    worker too, brought back to a known state through the contract after every harness:
    what it made released, the variables it wrote rewritten and read back; a fresh
    instance after a crash, a hang, a failed reset, or a failure that fresh instances do
    not reproduce), ``"test"`` (a fresh instance for each test), ``"example"`` (a fresh one
    for every harness: each Hypothesis example and shrink step).  A backend whose state
    outlives a test (a per-process table that fills up, a leak) must not fail a later
    test: such a backend asks for more isolation, at the cost of starting it more often
    (see ``conformance/session/context.py``)."""

    calls_may_hang: bool = True
    """Whether a call can fail to return (a real runtime, a driver, a third-party backend).
    The suite then makes every call in a worker thread of its own with a time limit, so
    a hang becomes TIMEOUT.  An in-process backend whose calls only ever wait for the
    suite's own gates (the bundled simulator) says False and is called directly."""

    # -- identity and declarations ------------------------------------------
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    @abstractmethod
    def fixtures(self) -> list[FixtureVariable]:
        """The device variables, in the order they are laid out in device memory (so that
        the suite knows each one's neighbour)."""

    @abstractmethod
    def invalid_handle(self) -> int:
        """A non-zero integer that is neither a live stream nor a live event, and that
        the backend can be handed without crashing (for CANN: readable memory holding
        a wrong magic)."""

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release everything (threads, processes).  Idempotent."""

    # -- process and devices -----------------------------------------------
    @abstractmethod
    def init(self, config_path: str | None = None) -> int: ...

    @abstractmethod
    def finalize(self) -> int: ...

    @abstractmethod
    def get_version_str(self) -> tuple[int, str]: ...

    @abstractmethod
    def set_device(self, device_id: int) -> int: ...

    @abstractmethod
    def get_device(self) -> tuple[int, int]: ...

    @abstractmethod
    def reset_device(self, device_id: int) -> int: ...

    @abstractmethod
    def get_device_count(self) -> tuple[int, int]: ...

    @abstractmethod
    def synchronize_device(self) -> int: ...

    # -- streams ------------------------------------------------------------
    @abstractmethod
    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        """``null_stream``: pass NULL as the output pointer."""

    @abstractmethod
    def destroy_stream(self, stream: int) -> int: ...

    @abstractmethod
    def synchronize_stream(self, stream: int) -> int: ...

    @abstractmethod
    def synchronize_stream_with_timeout(self, stream: int, timeout: int) -> int: ...

    @abstractmethod
    def stream_query(self, stream: int) -> tuple[int, int]:
        """(code, aclrtStreamStatus)."""

    # -- events -------------------------------------------------------------
    @abstractmethod
    def create_event(self, null_event: bool = False) -> tuple[int, int]: ...

    @abstractmethod
    def record_event(self, event: int, stream: int) -> int: ...

    @abstractmethod
    def stream_wait_event(self, stream: int, event: int) -> int: ...

    @abstractmethod
    def synchronize_event(self, event: int) -> int: ...

    @abstractmethod
    def destroy_event(self, event: int) -> int: ...

    # -- host memory --------------------------------------------------------
    @abstractmethod
    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        """aclrtMallocHost: (code, address of page-locked memory)."""

    @abstractmethod
    def free_host(self, host_ptr: int) -> int: ...

    @abstractmethod
    def malloc_pageable(self, size: int) -> tuple[int, int]:
        """Ordinary (pageable) host memory, as malloc gives: (0, address), or an error."""

    @abstractmethod
    def free_pageable(self, ptr: int) -> int: ...

    @abstractmethod
    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        """aclrtHostRegisterV2(ptr, size, flag): page-lock pageable memory."""

    @abstractmethod
    def host_unregister(self, ptr: int) -> int: ...

    @abstractmethod
    def write_host(self, dst: int, data: bytes) -> int:
        """Store ``data`` at host address ``dst`` (memcpy on the host side)."""

    @abstractmethod
    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        """Load ``count`` bytes from host address ``src``."""

    # -- symbols ------------------------------------------------------------
    @abstractmethod
    def get_symbol_address(self, symbol: int, null_dev_ptr: bool = False) -> tuple[int, int]: ...

    @abstractmethod
    def get_symbol_size(self, symbol: int, null_size: bool = False) -> tuple[int, int]: ...

    @abstractmethod
    def memcpy_to_symbol_async(
        self, symbol: int, src: int, count: int, offset: int, kind: int, stream: int
    ) -> int: ...

    @abstractmethod
    def memcpy_to_symbol(
        self, symbol: int, src: int, count: int, offset: int, kind: int
    ) -> int: ...

    @abstractmethod
    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int: ...

    @abstractmethod
    def memcpy_from_symbol_async(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int, stream: int
    ) -> int: ...

    # -- the stream gate ----------------------------------------------------
    @abstractmethod
    def launch_gate(self, stream: int) -> tuple[int, int]:
        """Enqueue on ``stream`` a host task that blocks it until ``open_gate``: (code, gate)."""

    @abstractmethod
    def open_gate(self, gate: int) -> int: ...


CONTRACT_CALLS: tuple[str, ...] = tuple(
    name
    for name, member in vars(Adapter).items()
    if getattr(member, "__isabstractmethod__", False)
    and name not in ("capabilities", "fixtures", "invalid_handle")
)
"""The names of the ACL (and helper) calls of the contract."""
