"""The simulator's event calls and the stream gate: what makes one stream wait for something.

Checks, codes and ``Choice:`` marks: as the package docstring says for every calls_ module.
"""

from __future__ import annotations

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INTERNAL_ERROR
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INVALID_HANDLE
from acl_conformance.reference_impl.constants import ACL_SUCCESS

from . import cabi
from .core import SimulatorCore
from .events import Event
from .events import Gate
from .streams import Wait


class EventCalls(SimulatorCore):
    """The event calls, and the gate (a blocking host task on a stream)."""

    def create_event(self, null_event: bool = False) -> tuple[int, int]:
        """aclrtCreateEvent: NULL output 100000; no current device 107002."""
        self._check_open()
        code, ctx = self._create_context(null_event)
        if ctx is None:
            return code, 0
        with self._lock:
            handle = next(self._handles)
            event = Event(handle, ctx.device)
            self._objects[handle] = event
            ctx.events[handle] = event
        return ACL_SUCCESS, handle

    def record_event(self, event: int, stream: int) -> int:
        """aclrtRecordEvent: NULL event 100000; then the event handle (107017), then the
        stream (NULL = default; 107002, 107017), then 107003 for another context's stream.
        Choice: an event may be recorded on a stream of another device than the event's."""
        self._check_open()
        code, evt = self._event_arg(event)
        if evt is None:
            return code
        code, strm = self._submit_stream(stream)
        if strm is None:
            return code
        return ACL_SUCCESS if evt.record(strm) else ACL_ERROR_RT_INVALID_HANDLE

    def stream_wait_event(self, stream: int, event: int) -> int:
        """aclrtStreamWaitEvent: NULL event 100000; then the stream (NULL = default;
        107002, 107017), then the event (107017), then 107003 for another context's
        stream.  The wait captures the event's most recent record now; an event never
        recorded makes the wait a no-op (nothing is enqueued)."""
        self._check_open()
        if cabi.pointer(event) == 0:
            return ACL_ERROR_INVALID_PARAM
        code, strm, ctx = self._stream(stream)
        if strm is None:
            return code
        code, evt = self._event_arg(event)  # read only after the stream resolves
        if evt is None:
            return code
        code = self.submit_check(strm, ctx)
        if code:
            return code
        record = evt.latest()
        if record is None:
            return ACL_SUCCESS
        source, seq = record.stream, record.seq

        def wait() -> None:
            source.wait_for(seq)

        return ACL_SUCCESS if strm.enqueue(wait) is not None else ACL_ERROR_RT_INVALID_HANDLE

    def synchronize_event(self, event: int) -> int:
        """aclrtSynchronizeEvent: wait for the latest record; never recorded: returns 0."""
        self._check_open()
        code, evt = self._event_arg(event)
        if evt is None:
            return code
        record = evt.latest()
        if record is None:
            return ACL_SUCCESS
        result = record.stream.wait_for(record.seq)
        return ACL_SUCCESS if result is Wait.DONE else ACL_ERROR_RT_INTERNAL_ERROR

    def destroy_event(self, event: int) -> int:
        """aclrtDestroyEvent: NULL 100000; not a live event 107017.  Pending waits on it
        still complete (they hold the record they captured)."""
        self._check_open()
        handle = cabi.pointer(event)
        if handle == 0:
            return ACL_ERROR_INVALID_PARAM
        with self._lock:
            obj = self._objects.get(handle)
            if not isinstance(obj, Event):
                return ACL_ERROR_RT_INVALID_HANDLE
            del self._objects[handle]
        # The device table's lock is never taken while holding ours (set_device takes
        # them in the other order), hence two steps.
        ctx = self._devices.context_of(obj.device)
        if ctx is not None:
            with self._lock:
                ctx.events.pop(handle, None)
        return ACL_SUCCESS

    # -- the stream gate ----------------------------------------------------
    def launch_gate(self, stream: int) -> tuple[int, int]:
        """aclrtLaunchHostFunc with a blocking host function: the stream (NULL = default;
        107002, 107017), then 107003 for another context's stream.  With
        ``host_funcs_serial`` the gate holds its device's host function lock while it runs,
        so a closed gate holds the gates of the device's other streams."""
        self._check_open()
        code, strm = self._submit_stream(stream)
        if strm is None:
            return code, 0
        with self._lock:
            gate = Gate(next(self._gate_ids))
            self._gates[gate.id] = gate
        task = gate.task
        if self.options.host_funcs_serial:
            lock = self._host_func_locks[strm.device]

            def task() -> None:
                with lock:
                    gate.task()

        if strm.enqueue(task) is None:
            return ACL_ERROR_RT_INVALID_HANDLE, 0
        return ACL_SUCCESS, gate.id

    def open_gate(self, gate: int) -> int:
        """Open a gate: 0 (also when already open, or after ``close``); 100000 for an id
        that is no gate."""
        with self._lock:
            g = self._gates.get(int(gate))
        if g is None:
            return ACL_ERROR_INVALID_PARAM
        g.open()
        return ACL_SUCCESS
