"""Backends whose state outlives a harness: legal in each harness taken alone, but a
suite that lets one instance serve many harnesses meets what the earlier ones left.

They declare ``isolation = "reset"``, as the ``cann`` adapter does by default: the suite
resets one instance between harnesses and must not fail them for the leftovers (issue
10's rule): a failure on a reused instance is run again on fresh ones, and the run is
recovered (``conformance/session/attempts.py``).
"""

from __future__ import annotations

import threading
from typing import Any

from acl_conformance.adapters.simulator import Simulator

ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008
"""CANN's code for "no stream resource" (rt_error_codes.h)."""

STREAM_TABLE_SIZE = 64
"""Stream creations an instance of :class:`StreamTableFills` allows.  One harness of the
suite creates at most 9 streams (measured over a whole ci run on the simulator), and a
whole run about 1150, so that only an instance serving many harnesses reaches it."""


class StreamTableFills(Simulator):
    """aclrtCreateStream fails with 207008 (ACL_ERROR_RT_NO_STREAM_RESOURCE) once the
    instance has created 64 streams, destroyed ones included: a per-process table that
    fills up as the suite runs (no harness alone comes near it)."""

    isolation = "reset"

    def __init__(self, isolation: str = "reset", **options: Any) -> None:
        """``isolation``: what the instance asks for (``run``: the control, one instance
        for every harness with no reset and no recheck); other options go to the
        simulator."""
        super().__init__(**options)
        self.isolation = isolation
        self._created = 0
        self._count_lock = threading.Lock()

    def create_stream(self, null_stream: bool = False) -> tuple[int, int]:
        with self._count_lock:
            if self._created >= STREAM_TABLE_SIZE:
                return ACL_ERROR_RT_NO_STREAM_RESOURCE, 0
            code, stream = super().create_stream(null_stream)
            if code == 0:
                self._created += 1
            return code, stream
