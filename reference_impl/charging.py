"""Which requirement a failure is charged to, and which are its other readings.

Every path that finds a backend wrong gathers the facts it can establish (the call and
its code, what the profile allowed, the story that explains wrong bytes, what a second
look saw, how a call that never answered stood, the run's other failures) and asks this
module for the decision: a :class:`Charge`, the requirement, the other readings of the
same observation (``also``) and, in words, why.  Nothing here reads the model's state,
calls a backend or keeps anything: each function is a rule of the decision table
documented in docs/design.md ("The judgement, and how a failure is charged"), and
tests/test_charging.py tries each one.

The rules, by the path that asks:

- a wrong return code (``Model.settle``): :func:`wrong_code`; what a refusal on the NULL
  stream is charged to, given to the allowed answers by the profile
  (``runtime_checks.on_null_stream``): :func:`refused_on_null`;
- wrong bytes (``diagnosis.diagnose``, one story each): :func:`ran_past_gate`,
  :func:`other_instance`, :func:`reset_elsewhere`, :func:`overwritten`,
  :func:`known_complete_missing`, :func:`ran_late`, :func:`pageable_source_reused`,
  :func:`rejected_wrote`, :func:`stray`, :func:`unexplained_bytes`; and what a copy's own
  call promises (:func:`own_promise`);
- a wrong answer seen by a handler (``apply.py``, ``apply_memory.py``,
  ``observation.py``): :func:`pageable_not_blocking`, :func:`busy_stream`,
  :func:`reported_device`, :func:`unwritten_read`; and the requirement a promise of
  completion stands for, which a copy found missing later is charged to
  (:func:`pageable_promise`, :func:`sync_promise`);
- a second look (``conformance/harness/second_look.py``): :func:`drained_or_not`,
  :func:`busy_or_lying`, :func:`read_late_or_wrong`, :func:`late_or_lost`,
  :func:`racing_read`, :func:`the_read_lies`;
- a call that never returned or raised, wherever the suite made it
  (``Harness._charge_no_answer``): :func:`no_answer`;
- a failure that only arises in a context a test sets up (``ConformanceFailure.under``):
  :func:`in_context`;
- the run's failures together (``reports/aggregate.py``): :func:`in_the_run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .catalogue import Level
from .catalogue import requirement as catalogue_entry
from .constants import ACL_ERROR_INVALID_PARAM
from .constants import ACL_ERROR_RT_CONTEXT_NULL
from .constants import ACL_ERROR_RT_STREAM_CONTEXT
from .constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from .constants import ACL_SUCCESS
from .judgement import some
from .outcome import AllowedAnswers
from .requirement_ids import CHECK_ORDER
from .requirement_ids import DEVICE_CALLS
from .requirement_ids import DEVICE_CURRENT
from .requirement_ids import DEVICE_INSTANCE
from .requirement_ids import EFFECT_BYTES
from .requirement_ids import EFFECT_NEIGHBOURS
from .requirement_ids import EFFECT_NO_STRAY
from .requirement_ids import EVENT_CALLS
from .requirement_ids import FROMSYMBOL_BYTES
from .requirement_ids import FROMSYMBOL_DSTMAX
from .requirement_ids import HYGIENE_NO_ENQUEUE
from .requirement_ids import HYGIENE_NO_WRITE
from .requirement_ids import PAGEABLE_BLOCKS
from .requirement_ids import PAGEABLE_DRAINS_STREAM
from .requirement_ids import PAGEABLE_SOURCE_REUSE
from .requirement_ids import PINNED_COMPLETE_AFTER_SYNC
from .requirement_ids import PINNED_REGISTERED
from .requirement_ids import STREAM_EVENT_ORDER
from .requirement_ids import STREAM_FIFO
from .requirement_ids import STREAM_NULL_DEFAULT
from .requirement_ids import STREAM_QUERY
from .requirement_ids import SYNC_ERROR_REPORTING
from .requirement_ids import SYNC_TIMEOUT
from .requirement_ids import TOSYMBOL_SYNC


@dataclass(frozen=True)
class Charge:
    """The decision: the requirement a failure is charged to (None: no requirement, the
    suite's own set-up), the other requirements the same observation could equally be
    charged to, and why, in words."""

    requirement: str | None
    also: tuple[str, ...] = ()
    why: str = ""


def _others(requirement: str | None, *readings: str | None) -> tuple[str, ...]:
    """The ``readings``, each once, in order, without None and without ``requirement``."""
    return some(*(r for r in readings if r != requirement))


# -- a wrong return code ---------------------------------------------------------

_EVENT_CALLS = frozenset({"record_event", "stream_wait_event", "synchronize_event"})
"""The event calls whose refusal on valid arguments is EVENT-CALLS' matter first (create
and destroy are charged to it by their rules)."""


@dataclass(frozen=True)
class WrongCode:
    """The facts of a call that returned a code the profile does not allow."""

    call: str
    """The contract's name of the call."""
    code: int
    answers: AllowedAnswers
    """What the profile allowed; a mismatch is reported against its primary answer."""
    dst_max_holds_count: bool = False
    """A FromSymbol read whose count fits dstMax but whose offset + count does not
    (``rules_copies.counts_offset_in_dst_max``)."""
    null_stream: bool = False
    """The call names the NULL stream."""
    thread_has_device: bool = False
    """The calling thread set a device and still has it current."""


def wrong_code(f: WrongCode) -> Charge:
    """A refused or wrong return code: charged to the primary answer's requirement (its
    other readings, and for an error code the checks it passes that a backend could get
    wrong), unless the code itself says more.  In order, the first that applies: a code of
    a check CANN makes later in the same call (CHECK-ORDER); dstMax's code where dstMax
    holds the count (FROMSYMBOL-DSTMAX: offset + count was bounded by it); an error from a
    synchronisation that had to succeed (SYNC-ERROR-REPORTING); an event call refused on
    valid arguments (EVENT-CALLS).  Then, whatever the first charge: "a stream of another
    context" for NULL where STREAM-NULL-DEFAULT is a reading (it is the charge), and "no
    current context" on a thread that has one (DEVICE-CURRENT)."""
    primary = f.answers.primary
    code, name = f.code, f.call
    requirement: str | None = primary.requirement
    also = some(*primary.also, *(primary.shadow if code else ()))
    why = "the answer the profile expects first was not given"
    must_succeed = f.answers.accepts_success() and not f.answers.accepts_failure()
    if code and code in primary.order_codes:
        requirement = CHECK_ORDER
        also = some(primary.requirement, *(r for r in primary.also if r != CHECK_ORDER))
        why = "the code of a check CANN makes later in the same call: the checks were made in another order"
    elif code == ACL_ERROR_INVALID_PARAM and f.dst_max_holds_count:
        requirement, also = FROMSYMBOL_DSTMAX, _others(FROMSYMBOL_DSTMAX, requirement, *also)
        why = "dstMax's code where dstMax holds count: offset + count was bounded by it"
    elif (
        code
        and name.startswith("synchronize")
        # an event synchronisation refused on a valid event: see below
        and name != "synchronize_event"
        # a time-out where none may happen (-1) is the timeout's matter, not an error
        # reported without a failure
        and not (
            name == "synchronize_stream_with_timeout" and code == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
        )
        and must_succeed
    ):
        # No device task of the suite fails, so an error from a synchronisation that had
        # to succeed is an error reported without a failure (after a rejected call: the
        # rejection left it behind).
        requirement, also = SYNC_ERROR_REPORTING, some(primary.requirement, *also)
        why = "no device task of the suite fails: a synchronisation that had to succeed reported an error"
    elif code and name in _EVENT_CALLS and must_succeed:
        # What the event call orders or completes is another reading, and a
        # synchronisation may show an error left behind.
        late = (SYNC_ERROR_REPORTING,) if name == "synchronize_event" else ()
        requirement, also = EVENT_CALLS, _others(EVENT_CALLS, requirement, *also, *late)
        why = "an event call refused on valid arguments"
    if (
        code == ACL_ERROR_RT_STREAM_CONTEXT
        and f.null_stream
        and STREAM_NULL_DEFAULT in (requirement, *also)
    ):
        # NULL names the calling thread's current device's default stream, never another
        # context's: NULL was taken for another device's default stream.
        requirement, also = STREAM_NULL_DEFAULT, _others(STREAM_NULL_DEFAULT, requirement, *also)
        why = "NULL, the current device's default stream, was taken for a stream of another context"
    if (
        code == ACL_ERROR_RT_CONTEXT_NULL
        and f.thread_has_device
        and name not in ("set_device", "reset_device")
    ):
        # A reset of another device does not end this thread's current device.
        requirement, also = DEVICE_CURRENT, _others(DEVICE_CURRENT, requirement, *also)
        why = "no current context on a thread that set a device and still has it: the thread's current device was lost"
    return Charge(requirement, also, why)


def refused_on_null(first: Charge) -> Charge:
    """What a refusal of a call that had to succeed, made on the NULL stream by a backend
    that declares a default stream, is charged to (``runtime_checks.on_null_stream`` gives
    the allowed answers these readings): STREAM-NULL-DEFAULT (NULL not taken as the default
    stream) is another reading of whatever else it breaks (``first``), and the charge where
    it breaks nothing else (the suite's own stream gate)."""
    why = "NULL may not have been taken as the default stream"
    if first.requirement is None:
        return Charge(STREAM_NULL_DEFAULT, first.also, why)
    return Charge(first.requirement, tuple(dict.fromkeys((*first.also, STREAM_NULL_DEFAULT))), why)


# -- wrong bytes: the stories diagnosis finds ----------------------------------------

_OWN_PROMISE = {"pageable": PAGEABLE_BLOCKS, "sync": TOSYMBOL_SYNC}
"""What a copy's own call promises: complete at its return."""


def _story(requirement: str, also: tuple[str, ...] = (), why: str = "") -> Charge:
    """The charge of a story that explains wrong bytes: ``also`` without ``requirement``
    (a promise of completion may be both the charge and the copy's own)."""
    return Charge(requirement, tuple(r for r in also if r != requirement), why)


def own_promise(mode: str, recorded: str | None = None) -> str | None:
    """The requirement under which a copy's own call promised it complete at its return:
    the one recorded for it (a pageable copy's, see :func:`pageable_not_blocking`), else
    by its mode (pageable: PAGEABLE-BLOCKS, synchronous: TOSYMBOL-SYNC; page-locked: none)."""
    return recorded or _OWN_PROMISE.get(mode)


def ran_past_gate(through_event: bool) -> Charge:
    """A copy that could not have run yet (behind a closed gate) shows: the order that
    held it back is broken, an event's (STREAM-EVENT-ORDER) when the gate is in another
    stream, else its stream's (STREAM-FIFO)."""
    if through_event:
        return _story(
            STREAM_EVENT_ORDER,
            why="a copy ran before the event it waits for (recorded behind a closed gate)",
        )
    return _story(
        STREAM_FIFO,
        why="a copy ran before a task ahead of it in its stream (a closed gate) had finished",
    )


def other_instance(write: str, mode: str) -> Charge:
    """The bytes were written to the variable's instance on another device (by ``write``,
    a copy of ``mode``): DEVICE-INSTANCE; a copy that should have been complete at its
    return and ran later, once another device was current, lands there too (its own
    promise is another reading)."""
    return _story(
        DEVICE_INSTANCE,
        some(own_promise(mode)),
        f"the bytes were written to the same variable on another device ({write})",
    )


def reset_elsewhere(reset: str) -> Charge:
    """The variable changed when another device was reset (``reset``): DEVICE-INSTANCE."""
    return _story(
        DEVICE_INSTANCE,
        why=f"the variable changed when another device was reset ({reset}): the bytes are "
        "what a reset brings, or what the variable held before its copies",
    )


@dataclass(frozen=True)
class Overwritten:
    """The facts of an overwritten copy whose bytes show through."""

    old: str
    """The copy that shows, in C form."""
    own: str | None
    """What its own call promised (:func:`own_promise`), if anything."""
    hider: str | None = None
    """The copy known complete that should hide it, in C form (None: none found)."""
    hider_promise: str | None = None
    """The promise that made the hiding copy known complete."""
    hider_own: str | None = None
    """What the hiding copy's own call promised."""
    known_before_hider: bool = False
    """The old copy was known complete before the hiding one was issued."""
    promise: str | None = None
    """The promise that made the old copy known complete."""
    promised_by: str | None = None
    """The call that made that promise, in C form, when not the old copy's own."""
    same_stream: bool = False
    """The two copies are in one stream."""


def overwritten(f: Overwritten) -> Charge:
    """An overwritten copy shows through: it ran late, after a copy that should hide it.
    Known complete before that copy was issued, the promise that said so was false (that
    promise; STREAM-FIFO another reading in one stream); else the order between them was
    broken (STREAM-FIFO in one stream, STREAM-EVENT-ORDER across an event).  Other
    readings: the copy's own call promised completion at its return, or the hiding copy
    never ran though a call said it had."""
    if f.hider is None:
        return _story(STREAM_FIFO, some(f.own), f"an overwritten copy ({f.old}) shows through")
    others = some(f.own, f.hider_promise, f.hider_own)
    if f.known_before_hider:
        fifo = (STREAM_FIFO,) if f.same_stream else ()
        return _story(
            f.promise or PINNED_COMPLETE_AFTER_SYNC,
            some(*others, *fifo),
            f"{f.old} was known complete"
            + (f" (because {f.promised_by} returned)" if f.promised_by is not None else "")
            + f" before {f.hider} was issued, yet its bytes are on top",
        )
    if f.same_stream:
        return _story(
            STREAM_FIFO,
            others,
            f"{f.old} ran after {f.hider}, which was issued after it on the same stream",
        )
    return _story(
        STREAM_EVENT_ORDER, others, f"{f.old} ran after {f.hider}, which an event ordered after it"
    )


def order_may_be_lost_copy(c: Charge) -> bool:
    """An older copy shows where a newer one known complete should be: charged to a broken
    order (``c``), bytes still missing after a second look may as well be the newer copy
    writing nothing; when charged to a broken promise instead (the older one was known
    complete before the other was issued), running after it takes that promise broken as
    well, and the lost copy is the reading a second look charges."""
    return c.requirement in (STREAM_FIFO, STREAM_EVENT_ORDER)


def known_complete_missing(
    write: str, promise: str | None, promised_by: str | None, own: str | None
) -> Charge:
    """A copy known complete (``write``) did not land: charged to the promise that made it
    known complete (``promise``, by the call ``promised_by`` when not its own; a
    synchronisation when none is recorded); its own call's promise is another reading."""
    return _story(
        promise or PINNED_COMPLETE_AFTER_SYNC,
        some(own),
        f"a copy known complete ({write}) did not land"
        + (f": it was known complete because {promised_by} returned" if promised_by else ""),
    )


def ran_late(write: str, promise: str | None, promised_by: str | None) -> Charge:
    """A page-locked copy (``write``) shows what its source held only after it was known
    complete: it ran late, charged to the promise that said it was complete, as a copy
    known complete that did not land would be."""
    return _story(
        promise or PINNED_COMPLETE_AFTER_SYNC,
        why=f"the bytes are what the source of {write} held after it was known complete"
        + (f" (because {promised_by} returned)" if promised_by is not None else "")
        + ": it ran late",
    )


def pageable_source_reused() -> Charge:
    """The bytes are a pageable source as changed after the call returned:
    PAGEABLE-SOURCE-REUSE; a copy that read its source late ran late (PAGEABLE-BLOCKS)."""
    return _story(
        PAGEABLE_SOURCE_REUSE,
        (PAGEABLE_BLOCKS,),
        "the bytes are the pageable source as changed after the call returned",
    )


def rejected_wrote(call: str) -> Charge:
    """The bytes are those of a rejected call (``call``): HYGIENE-NO-WRITE."""
    return _story(HYGIENE_NO_WRITE, why=f"the bytes are those of a rejected call ({call})")


def stray(variable_copied: bool, others_copied: bool) -> Charge:
    """Bytes changed where no copy may have written: outside every copy's range of a
    variable that was copied to, or where no other variable was (EFFECT-NO-STRAY); a
    variable no copy targeted, beside others that were (EFFECT-NEIGHBOURS)."""
    if variable_copied or not others_copied:
        return _story(EFFECT_NO_STRAY, why="bytes outside every copy's range changed")
    return _story(EFFECT_NEIGHBOURS, why="a variable no copy targeted changed")


def unexplained_bytes() -> Charge:
    """No story fits: the copies' effect is wrong (EFFECT-BYTES)."""
    return _story(EFFECT_BYTES, why="the bytes match no copy that may have run")


# -- wrong answers seen by the handlers ----------------------------------------------


def pageable_not_blocking(
    profile: str, registered_once: bool, likelier: frozenset[str], *readings: str
) -> Charge:
    """A pageable copy that did not block as it must, charged from ``readings`` in order.
    From a source registered once and unregistered since, the copy acted page-locked:
    where PINNED-REGISTERED ("after aclrtHostUnregister it is pageable again") is a MUST
    under ``profile`` it is the charge; where it is not (spec: the text does not name
    aclrtHostRegister), the memory is the text's malloc memory and the pageable requirement
    is the charge, PINNED-REGISTERED another reading.  Where the pageable requirement is
    ``likelier`` (masked or known to fail: copies from memory never registered do not
    block either), it stays the charge."""
    why = "the pageable copy returned before it was complete"
    if not registered_once or readings[0] in likelier:
        return Charge(
            readings[0],
            (*readings[1:], *([PINNED_REGISTERED] if registered_once else [])),
            why,
        )
    if catalogue_entry(PINNED_REGISTERED).level(profile) is Level.MUST:
        return Charge(PINNED_REGISTERED, readings, why + ": its source was unregistered")
    return Charge(readings[0], (*readings[1:], PINNED_REGISTERED), why)


def pageable_promise(profile: str, registered_once: bool, likelier: frozenset[str]) -> str:
    """The requirement under which a pageable copy's own call promises it complete at its
    return (a copy found missing later is charged to it): PAGEABLE-BLOCKS, or what a
    pageable copy that did not block is charged to (:func:`pageable_not_blocking`)."""
    charge = pageable_not_blocking(profile, registered_once, likelier, PAGEABLE_BLOCKS)
    return charge.requirement or PAGEABLE_BLOCKS


def sync_promise(call: str) -> str:
    """The requirement a stream synchronisation's promise of completion stands for (a copy
    found missing after it is charged to it): SYNC-TIMEOUT for the one with a time-out,
    else PINNED-COMPLETE-AFTER-SYNC."""
    if call == "synchronize_stream_with_timeout":
        return SYNC_TIMEOUT
    return PINNED_COMPLETE_AFTER_SYNC


def busy_stream(after_rejection: bool, after_sync_copy: bool, promises: Sequence[str]) -> Charge:
    """aclrtStreamQuery reported a stream busy where it may not be: charged, in order, to a
    rejected call that left a task behind (busy after a rejection: HYGIENE-NO-ENQUEUE), a
    synchronous copy queued on the stream (busy after one: TOSYMBOL-SYNC), the promises
    that said its tasks were complete (a drain that SHOULD happen under spec is not a MUST
    of the query), then the query (STREAM-QUERY); the later ones are other readings."""
    causes = [
        *([HYGIENE_NO_ENQUEUE] if after_rejection else []),
        *([TOSYMBOL_SYNC] if after_sync_copy else []),
        *promises,
        STREAM_QUERY,
    ]
    return Charge(causes[0], tuple(dict.fromkeys(causes[1:])), "the stream was reported busy")


def reported_device(another_threads: bool) -> Charge:
    """aclrtGetDevice reported a device other than the one this thread set: another host
    thread's choice says the current device is not per thread (DEVICE-CURRENT, the call's
    own matter another reading); otherwise the call misreported (DEVICE-CALLS)."""
    if another_threads:
        return Charge(DEVICE_CURRENT, (DEVICE_CALLS,), "the device another thread set")
    return Charge(DEVICE_CALLS, (DEVICE_CURRENT,), "not the device this thread set last")


def unwritten_read(promise: str | None) -> Charge:
    """An asynchronous read known complete left its destination as it was: charged to the
    promise that made it known complete (a synchronisation when none is recorded); a read
    that wrote nothing, or read the wrong place and found there what the destination held,
    is another reading (FROMSYMBOL-BYTES)."""
    return Charge(
        promise or PINNED_COMPLETE_AFTER_SYNC,
        (FROMSYMBOL_BYTES,),
        "the asynchronous read had not written its destination",
    )


# -- after a second look ---------------------------------------------------------------


def _recharged(first: Charge, to: str, why: str) -> Charge:
    """``first`` charged to ``to`` instead, what it cited now another reading."""
    return Charge(
        to, tuple(dict.fromkeys(r for r in (first.requirement, *first.also) if r and r != to)), why
    )


def drained_or_not(first: Charge, bytes_there: bool) -> Charge:
    """A pageable copy returned while a gate ahead of it was closed; with the gate still
    closed, its bytes are there (``bytes_there``): it copied without draining its stream,
    and ``first`` stands.  Not there: it did not wait for its own copy either, and a charge
    to the drain becomes PAGEABLE-BLOCKS (another charge, PINNED-REGISTERED, stands)."""
    if bytes_there:
        return Charge(
            first.requirement,
            first.also,
            "with the gate still closed its bytes are there: it copied without waiting for its stream",
        )
    why = "with the gate still closed its bytes are not there either: it did not wait for its own copy"
    if first.requirement != PAGEABLE_DRAINS_STREAM:
        return Charge(first.requirement, first.also, why)
    return _recharged(first, PAGEABLE_BLOCKS, why)


def busy_or_lying(first: Charge, complete_now: bool) -> Charge:
    """A query found a stream busy after a promise said its tasks were complete;
    synchronised and queried again, complete now (``complete_now``): a task was still
    running when the promise was made, and ``first`` stands; busy still, after a
    synchronisation that succeeded: the query's answer is wrong (STREAM-QUERY)."""
    if complete_now:
        return Charge(
            first.requirement,
            first.also,
            "after a second synchronisation the stream is complete: a task was still running when the promise said it was complete",
        )
    return _recharged(
        first,
        STREAM_QUERY,
        "after a second synchronisation that succeeded the stream is still reported busy: the query's answer is wrong",
    )


def read_late_or_wrong(first: Charge, destination_changed: bool) -> Charge:
    """An asynchronous read known complete left its destination as it was; synchronised
    again, the destination changed (``destination_changed``): the read ran late, and
    ``first`` (the promise) stands.  Unchanged, while a read of the whole variable shows
    bytes the model allows there (the caller establishes it, else ``first`` stands): the
    read did not put them there, charged to the read (FROMSYMBOL-BYTES), the promise
    another reading."""
    if destination_changed:
        return Charge(
            first.requirement,
            first.also,
            "after a second synchronisation of every stream the destination changed: the read ran, late",
        )
    return _recharged(
        first,
        FROMSYMBOL_BYTES,
        "after a second synchronisation of every stream the destination still holds what it "
        "held before the read",
    )


def late_or_lost(
    first: Charge, late: str | None, there_now: bool, older_write_shows: bool, lo: int, hi: int
) -> Charge:
    """A copy known complete whose bytes [``lo``, ``hi``) were missing; after a second
    synchronisation of every stream and the device they are there (``there_now``): the copy
    ran late, and the promise of its own call (``late``), which came before any other, is
    the charge (``first`` another reading).  Still missing where an older copy's bytes show
    (``older_write_shows``): that copy ran after the missing one or the missing one wrote
    nothing, both readings stay (EFFECT-BYTES named).  Still missing otherwise: the copy
    did not write them (EFFECT-BYTES)."""
    if there_now:
        why = (
            "after a second synchronisation of every stream the bytes are there: the copy ran, late"
        )
        if late is None or late == first.requirement:
            return Charge(first.requirement, first.also, why)
        return _recharged(first, late, why)
    if older_write_shows:
        return Charge(
            first.requirement,
            tuple(dict.fromkeys(r for r in (*first.also, EFFECT_BYTES) if r != first.requirement)),
            f"after a second synchronisation of every stream bytes [{lo}, {hi}) still hold the "
            "older copy's: it ran after the missing one, or the missing one wrote nothing there",
        )
    return _recharged(
        first,
        EFFECT_BYTES,
        f"after a second synchronisation of every stream bytes [{lo}, {hi}) still do not hold "
        "what the copy should have left: it did not write them there",
    )


def racing_read(first: Charge) -> Charge:
    """A read whose range had copies that may or may not have run when it ran: a later
    read of the whole variable may see them landed, whichever answer was wrong, so the read
    (FROMSYMBOL-BYTES) is named beside ``first``, not charged."""
    also = tuple(dict.fromkeys((*first.also, FROMSYMBOL_BYTES)))
    return Charge(
        first.requirement,
        tuple(r for r in also if r != first.requirement),
        "copies may or may not have run when the read ran: both readings stay",
    )


def the_read_lies(first: Charge) -> Charge:
    """A read disagrees with the model where a read of the whole variable shows bytes the
    model allows: the read is wrong (FROMSYMBOL-BYTES), ``first`` another reading."""
    return _recharged(
        first, FROMSYMBOL_BYTES, "a read of the whole variable shows bytes the model allows there"
    )


# -- a call that never answered; a failure in a context --------------------------------


def no_answer(answers: AllowedAnswers | None) -> Charge:
    """A call that never returned, or raised instead of answering, wherever the suite made
    it: charged to the requirement its success stands for under the profile (``answers``,
    what the profile allows for it: the answer that accepts success, else the primary
    one); None when the model cannot say (no requirement: the suite's set-up)."""
    if answers is None:
        return Charge(None, why="the model cannot say what the call's success stands for")
    success = next((a for a in answers.alternatives if ACL_SUCCESS in a.codes), answers.primary)
    return Charge(success.requirement, why="the requirement the call's success stands for")


def in_context(first: Charge, requirement: str, context: str) -> Charge:
    """A failure that only arises in a context a test sets up (``context``: host threads
    calling at once, a device switch) is charged to the requirement of that context; what
    the model reads it as alone is another reading."""
    return Charge(
        requirement,
        tuple(r for r in (first.requirement, *first.also) if r and r != requirement),
        f"it arose {context}",
    )


# -- the run's failures together ----------------------------------------------------


@dataclass(frozen=True)
class Cited:
    """A failure of the run as its record cites it."""

    requirement: str | None
    also: tuple[str, ...] = ()
    real: bool = True
    """A failure that counts (failed or flaky, citing a requirement), not an expected one."""


def in_the_run(failures: Sequence[Cited]) -> list[str | None]:
    """The requirement each failure of a run is charged to: the one it cites, unless it
    names other readings and one of those failed clearly elsewhere in the run, then that
    one (the first such).  A requirement failed clearly when a real failure cites it and
    none of that failure's other readings is cited by any real failure of the run (a
    pageable copy that returned behind a closed gate did not drain its stream, or did not
    make its copy either: when no failure says the copy was not made, the drain is
    clear)."""
    real = [f for f in failures if f.real and f.requirement]
    anywhere = {f.requirement for f in real}
    clear = {
        f.requirement for f in real if not any(r in anywhere and r != f.requirement for r in f.also)
    }
    out: list[str | None] = []
    for f in failures:
        others = [r for r in f.also if r in clear and r != f.requirement]
        out.append(others[0] if others and f.requirement not in clear else f.requirement)
    return out
