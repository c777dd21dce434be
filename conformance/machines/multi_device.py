"""Machine (b): two devices, switching between them, one instance of each variable per device."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import Bundle
from hypothesis.stateful import initialize
from hypothesis.stateful import precondition
from hypothesis.stateful import rule

from acl_conformance.conformance.authoring import device_reset
from acl_conformance.conformance.authoring import device_switch
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.harness import HostBuffer

from .common import HarnessMachine
from .common import StreamRef
from .common import declinable

VARS = ("g_u32", "g_u64", "g_struct24", "g_arr256")


class MultiDeviceMachine(HarnessMachine):
    """Copies and reads on whichever device is current, with streams of either device."""

    streams = Bundle("streams")
    buffers = Bundle("buffers")

    def __init__(self) -> None:
        super().__init__()
        self.device = 0
        self.n_streams = 0
        self.switched = False
        self.was_reset = False

    @initialize(target=buffers)
    def buffer(self) -> HostBuffer:
        for d in (0, 1):
            self.h.baseline(*VARS, device=d)
        return self.h.pinned(1024, self.unique(1024))

    @initialize(target=buffers)
    def pageable_buffer(self) -> HostBuffer:
        return self.h.pageable(1024, self.unique(1024))

    @rule(device=st.sampled_from([0, 1]))
    @declinable
    def set_device(self, device: int) -> None:
        self.h.call("set_device", device_id=device)
        self.device = device

    @precondition(lambda self: self.n_streams < 4)
    @rule(target=streams)
    def create_stream(self) -> StreamRef:
        self.n_streams += 1
        return StreamRef(self.h.stream(), self.device)

    @rule(
        stream=st.one_of(st.none(), streams),
        var=st.sampled_from(VARS),
        buf=buffers,
        data=st.data(),
    )
    @declinable
    def copy(
        self, stream: StreamRef | None, var: str, buf: HostBuffer, data: st.DataObject
    ) -> None:
        """A copy on the current device; the stream may belong to the other one."""
        n = ops.size(self.h, var)
        count = data.draw(st.integers(1, n), label="count")
        offset = data.draw(st.integers(0, n - count), label="offset")
        self.h.write(buf, 0, self.unique(count))
        handle = self.s(ops.NULL) if stream is None else stream.handle
        ops.to_symbol_async(self.h, var, buf, count=count, offset=offset, stream=handle)

    @rule(stream=st.one_of(st.none(), streams))
    @declinable
    def synchronize(self, stream: StreamRef | None) -> None:
        if stream is None:
            ops.sync(self.h)
        else:
            with self.h.on_device(stream.device):
                ops.sync(self.h, stream.handle)

    @rule(device=st.sampled_from([0, 1]))
    @declinable
    def synchronize_device(self, device: int) -> None:
        with self.h.on_device(device):
            ops.sync_device(self.h)

    @rule(var=st.sampled_from(VARS), device=st.sampled_from([0, 1]))
    @declinable
    def observe(self, var: str, device: int) -> None:
        self.h.observe(var, device=device)

    @rule(var=st.sampled_from(VARS))
    @declinable
    def address(self, var: str) -> None:
        self.h.call("get_symbol_address", symbol=ops.symbol(self.h, var))

    @precondition(lambda self: not self.switched)
    @rule(var=st.sampled_from(VARS))
    @declinable
    def null_across_switches(self, var: str) -> None:
        """Device 0, 1, then 0 again in this thread, the NULL stream used at each step
        (device_switch.py): NULL must always name the current device's default stream."""
        self.switched = True
        if not self.h.null_stream_usable:
            return
        self.tag += len(device_switch.PATH)
        device_switch.null_across_switches(self.h, var, self.tag)
        self.device = device_switch.PATH[-1]

    # Once per example: a whole life cycle each time, and the example budget is shared.
    @precondition(lambda self: not self.was_reset)
    @rule(device=st.sampled_from([0, 1]))
    @declinable
    def reset_life_cycle(self, device: int) -> None:
        """Bytes of their own to every variable the machine uses on both devices, ``device``
        reset and set again: the other's instances untouched, the reset one's its own
        (conformance/authoring/device_reset.py).  Every variable: one the machine wrote
        and the cycle did not would hold bytes a wrong reset could change unseen until a
        later read, with no reading of the reset's to tell why."""
        self.was_reset = True
        self.tag = device_reset.reset_then_set_again(self.h, VARS, (0, 1), device, self.tag + 1)
        self.device = device
