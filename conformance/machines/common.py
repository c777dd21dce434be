"""What the machines share: the harness per example, unique patterns, unblocking."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from hypothesis.stateful import RuleBasedStateMachine

from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.failure import Declined
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.harness.harness import HostBuffer
from acl_conformance.conformance.session import context

F = TypeVar("F", bound=Callable[..., None])


def declinable(rule: F) -> F:
    """A step (a rule without a target bundle) that is simply not taken when it would put
    a masked requirement at stake: the machine goes on with its next step."""

    @functools.wraps(rule)
    def step(self: Any, *args: Any, **kwargs: Any) -> None:
        with contextlib.suppress(Declined):
            rule(self, *args, **kwargs)

    return step  # type: ignore[return-value]


UNBLOCK_DELAY = 0.005
"""Seconds before a timer opens the gates a blocking call waits for."""


@dataclass(frozen=True)
class StreamRef:
    handle: int
    device: int

    def __repr__(self) -> str:
        return f"stream(0x{self.handle:x} on device {self.device})"


class HarnessMachine(RuleBasedStateMachine):
    """A machine with one harness for its whole run (one Hypothesis example)."""

    def __init__(self) -> None:
        super().__init__()
        suite = context.current()
        suite.example_started(type(self).__name__.rsplit("_", 1)[0])
        self._cm = suite.harness()
        self.h: Harness = self._cm.__enter__()
        # A machine checks many things: a masked requirement broken again is set aside.
        self.h.continue_past_masked = True
        self.tag = 1000
        self.read_buffers = 0

    def teardown(self) -> None:
        # Hypothesis calls teardown in a ``finally``: a rule's failure in flight is handed
        # on, so that the clean-up's own failure is raised only after an example that
        # ended without one (``Suite.harness``).
        self._cm.__exit__(*sys.exc_info())

    def unique(self, n: int) -> bytes:
        """n bytes that no other write of this run carries."""
        self.tag += 1
        return ops.pattern(self.tag, n)

    # -- blocking calls ---------------------------------------------------------
    def s(self, handle: int) -> int:
        """A drawn stream handle as the backend can take it: NULL stands for any stream
        when the backend declares no default stream."""
        return self.h.any_stream() if handle == ops.NULL else handle

    def blocked(self, handle: int | None) -> bool:
        """Would a call that waits for ``handle`` (None: the device) block on a closed gate?"""
        model = self.h.model
        if not model.gate_ids():
            return False
        if handle is None:
            return True
        return model.stream_waits_behind_closed_gate(handle, self.h.thread_no())

    def unblock_later(self) -> None:
        """Open every closed gate from a timer, as a user whose call waits would."""
        for g in self.h.model.gate_ids():
            if not self.h.gate_is_open(g):
                self.h.open_later(g, UNBLOCK_DELAY)

    def before_wait(self, handle: int | None) -> None:
        if self.blocked(handle):
            self.unblock_later()

    def is_pageable(self, buf: HostBuffer, offset: int, count: int) -> bool:
        """Is the source ``buf`` + ``offset`` (``count`` bytes) certainly pageable?"""
        return self.h.model.is_pageable(buf.at(offset), count)
