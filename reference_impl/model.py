"""The reference model: a profile's rules plus the memory model, step by step.

Use::

    m = Model("cann", Capabilities(devices=2))
    m.add_symbol("g_u32", address, 4)
    j = m.judge("memcpy_to_symbol_async", symbol=..., src=..., count=4,
                offset=0, kind=1, stream=h)
    violations = m.settle(j, code)               # the backend's return code

Every call of the contract goes through ``judge`` (the profile says what is
allowed: a :class:`~.judgement.Judgement`) and ``settle`` (the backend's answer is
judged, and the effect of the alternative it chose is applied); ``step.judge`` does
both for a recorded call, with the bytes it read and the asynchronous reads it
completed.  Reads are judged byte by byte against the memory model
(``observation.py``).  Calls must be reported in an order consistent with real time
(or, for concurrent host threads, in any order where they commute).

The parts, each importing only those before it: ``judgement.py`` (a call as announced,
a violation), ``model_state.py`` (the state and the operations that keep it in step),
``diagnosis.py`` (which requirement wrong bytes are charged to), ``tally.py`` (the
checks made and the outcomes seen), ``observation.py`` (bytes read, judged),
``apply_memory.py`` and ``apply.py`` (what a successful call does: one handler per
effect), ``queries.py`` (the public questions the suite may ask), this module (the
calls' entry points) and ``step.py`` (one recorded call, judged).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .apply import apply
from .calls import CALLS
from .calls import render_call
from .constants import ACL_ERROR_INVALID_PARAM
from .constants import ACL_ERROR_RT_CONTEXT_NULL
from .constants import ACL_ERROR_RT_STREAM_CONTEXT
from .constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from .constants import ACL_SUCCESS
from .constants import Capabilities
from .constants import error_name
from .evidence import Tally
from .judgement import Judgement
from .judgement import Violation
from .judgement import some
from .model_state import PendingRead
from .outcome import AllowedAnswers
from .profiles import Profile
from .profiles import get_profile
from .queries import Queries
from .requirement_ids import CHECK_ORDER
from .requirement_ids import DEVICE_CURRENT
from .requirement_ids import EVENT_CALLS
from .requirement_ids import FROMSYMBOL_DSTMAX
from .requirement_ids import STREAM_NULL_DEFAULT
from .requirement_ids import SYNC_ERROR_REPORTING
from .rules_copies import counts_offset_in_dst_max
from .state import Symbol
from .tally import count_match
from .tally import hygiene

__all__ = ["Judgement", "Model", "PendingRead"]

_EVENT_CALLS = frozenset({"record_event", "stream_wait_event", "synchronize_event"})
"""The event calls whose refusal on valid arguments is EVENT-CALLS' matter first (create
and destroy are charged to it by their rules)."""


def _charge(requirement: str, *readings: str | None) -> tuple[str, tuple[str, ...]]:
    """A wrong answer charged to ``requirement``, with the other ``readings`` of it
    (``requirement`` itself left out)."""
    return requirement, some(*(r for r in readings if r != requirement))


class Model(Queries):
    """The model of what the spec allows, for one backend run."""

    def __init__(
        self,
        profile: str | Profile = "spec",
        capabilities: Capabilities | None = None,
        tally: Tally | None = None,
    ) -> None:
        super().__init__(
            get_profile(profile) if isinstance(profile, str) else profile,
            capabilities or Capabilities(),
            tally,
        )

    # -- set-up -----------------------------------------------------------
    def add_symbol(self, name: str, address: int, size: int) -> Symbol:
        """A fixture variable the backend declares: its host shadow address and size."""
        return self.world.add_symbol(name, address, size)

    def assume_initialized(self) -> None:
        """The backend was initialised (aclInit) before the model was told of its calls."""
        self.world.initialized = True

    def assume_references(self, references: Mapping[int, int]) -> None:
        """The backend holds these aclrtSetDevice references per device from calls made
        before the model was told of them (an instance that served earlier harnesses): the
        resets it takes to end a device's context count them too."""
        for device, n in references.items():
            self.world.refcount[device] = self.world.refcount.get(device, 0) + n

    # -- calls ------------------------------------------------------------
    def judge(self, name: str, thread: int = 0, **args: Any) -> Judgement:
        """Announce a call; the returned judgement knows what the profile allows."""
        if name not in CALLS:
            raise KeyError(f"{name!r} is not a call of the contract")
        text = render_call(name, args, self.world.name_of)
        allowed = self.profile.allowed_answers(self.world, name, thread, args)
        judgement = Judgement(len(self.history) + 1, thread, name, dict(args), text, allowed)
        self.history.append(judgement)
        return judgement

    def settle(self, call: Judgement, code: int, **outputs: Any) -> list[Violation]:
        """Judge the backend's answer to ``call``: return ``code`` and outputs such as
        ``stream=`` or ``observed=`` (the bytes a read left in its destination)."""
        if call.settled:
            raise RuntimeError(f"{call.label} was already settled")
        call.settled = True
        code = int(code)
        alt = call.allowed_answers.match(code)
        if code != ACL_SUCCESS and call.name in ("memcpy_to_symbol_async", "memcpy_to_symbol"):
            self.remember_rejected(call)
        hygiene(self, call, code)
        if alt is None:
            primary = call.allowed_answers.primary
            spec = CALLS[call.name]
            requirement, also = (
                primary.requirement,
                some(*primary.also, *(primary.shadow if code else ())),
            )
            if code and code in primary.order_codes:
                # The code of a check CANN makes later in the same call: the backend made
                # its checks in another order.
                requirement, also = (
                    CHECK_ORDER,
                    some(primary.requirement, *(r for r in primary.also if r != CHECK_ORDER)),
                )
            elif code == ACL_ERROR_INVALID_PARAM and counts_offset_in_dst_max(call.name, call.args):
                # dstMax's code where dstMax holds count: the backend bounded offset +
                # count by it.
                requirement, also = _charge(FROMSYMBOL_DSTMAX, requirement, *also)
            elif (
                code
                and call.name.startswith("synchronize")
                # an event synchronisation refused on a valid event: see below
                and call.name != "synchronize_event"
                # a time-out where none may happen (-1) is the timeout's matter, not an
                # error reported without a failure
                and not (
                    call.name == "synchronize_stream_with_timeout"
                    and code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
                )
                and call.allowed_answers.accepts_success()
                and not call.allowed_answers.accepts_failure()
            ):
                # No device task of the suite fails, so an error from a synchronisation
                # that had to succeed is an error reported without a failure (after a
                # rejected call: the rejection left it behind).
                requirement, also = SYNC_ERROR_REPORTING, some(primary.requirement, *also)
            elif (
                code
                and call.name in _EVENT_CALLS
                and call.allowed_answers.accepts_success()
                and not call.allowed_answers.accepts_failure()
            ):
                # An event call refused on valid arguments: the call's own matter
                # (EVENT-CALLS "succeed on valid arguments"); what it orders or completes is
                # another reading, and a synchronisation may show an error left behind.
                late = (SYNC_ERROR_REPORTING,) if call.name == "synchronize_event" else ()
                requirement, also = _charge(EVENT_CALLS, requirement, *also, *late)
            if (
                code == ACL_ERROR_RT_STREAM_CONTEXT
                and call.args.get("stream") == 0
                and STREAM_NULL_DEFAULT in (requirement, *also)
            ):
                # NULL names the calling thread's current device's default stream, which is
                # never another context's: "a stream of another context" says NULL was taken
                # for another device's default stream (one still named after a switch).
                requirement, also = _charge(STREAM_NULL_DEFAULT, requirement, *also)
            if (
                code == ACL_ERROR_RT_CONTEXT_NULL
                and self.world.current_device(call.thread) is not None
                and call.name not in ("set_device", "reset_device")
            ):
                # "No current context" on a thread that set a device and still has it (a
                # reset of another device does not end this thread's): the backend lost
                # the thread's current device.
                requirement, also = _charge(DEVICE_CURRENT, requirement, *also)
            return self.screen(
                [
                    Violation(
                        requirement,
                        f"{spec.c_name} returned {error_name(code)} ({code}), which the {self.profile.name} profile does not allow here",
                        call=call,
                        allowed=call.allowed_answers.allowed_codes(),
                        observed=f"{error_name(code)} ({code})",
                        also=also,
                    )
                ]
            )
        count_match(self, call, alt, code)
        if alt.effect is None:
            return []
        return self.screen(apply(self, alt.effect, call, dict(outputs)))

    def preview(self, name: str, thread: int = 0, **args: Any) -> AllowedAnswers:
        """What the profile would allow for this call now (nothing is recorded)."""
        return self.profile.allowed_answers(self.world, name, thread, args)

    def masked_stake(self, allowed: AllowedAnswers) -> str | None:
        """The masked requirement a call with these allowed answers puts at stake, if any: a call
        that must be rejected for a reason that is masked (the backend is known to get it
        wrong: it may accept the call and do something the model cannot follow)."""
        if not self.masks or allowed.accepts_success():
            return None
        primary = allowed.primary
        return next((r for r in (primary.requirement, *primary.also) if r in self.masks), None)

    # -- host events ------------------------------------------------------
    def ready_reads(self) -> list[PendingRead]:
        """Asynchronous reads that a synchronisation has covered and that are not yet judged
        (``observation.check_read`` judges each)."""
        return [r for r in self.reads if r.ready and not r.checked]

    def allows(self, device: int, name: str, offset: int, observed: bytes) -> bool:
        """Would the model accept these bytes of ``name`` read now?  Nothing is recorded
        (a second look the suite takes to tell a wrong read from wrong bytes)."""
        var = self.var(device, self.world.symbols_by_name[name])
        obs = np.frombuffer(bytes(observed), dtype=np.uint8)
        return not var.check(offset, obs, lambda w: self.order.blocked(w.task) is None)
