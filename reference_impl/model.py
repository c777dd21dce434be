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
``charging.py`` (which requirement a failure is charged to), ``diagnosis.py`` (the
story that explains wrong bytes), ``tally.py`` (the
checks made and the outcomes seen), ``observation.py`` (bytes read, judged),
``apply_memory.py`` and ``apply.py`` (what a successful call does: one handler per
effect), ``queries.py`` (the public questions the suite may ask), this module (the
calls' entry points) and ``step.py`` (one recorded call, judged).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from . import charging
from .apply import apply
from .calls import CALLS
from .calls import render_call
from .constants import ACL_SUCCESS
from .constants import Capabilities
from .constants import error_name
from .evidence import Tally
from .judgement import Judgement
from .judgement import Violation
from .model_state import PendingRead
from .outcome import AllowedAnswers
from .profiles import Profile
from .profiles import get_profile
from .queries import Queries
from .rules_copies import counts_offset_in_dst_max
from .state import Symbol
from .tally import count_match
from .tally import hygiene

__all__ = ["Judgement", "Model", "PendingRead"]


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
            spec = CALLS[call.name]
            charge = charging.wrong_code(
                charging.WrongCode(
                    call.name,
                    code,
                    call.allowed_answers,
                    dst_max_holds_count=counts_offset_in_dst_max(call.name, call.args),
                    null_stream=call.args.get("stream") == 0,
                    thread_has_device=self.world.current_device(call.thread) is not None,
                )
            )
            return self.screen(
                [
                    Violation(
                        charge.requirement,
                        f"{spec.c_name} returned {error_name(code)} ({code}), which the {self.profile.name} profile does not allow here",
                        call=call,
                        allowed=call.allowed_answers.allowed_codes(),
                        observed=f"{error_name(code)} ({code})",
                        also=charge.also,
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
