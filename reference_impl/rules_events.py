"""The rules of the event calls.

aclrtCreateEvent, aclrtRecordEvent, aclrtStreamWaitEvent,
aclrtSynchronizeEvent, aclrtDestroyEvent.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from types import MappingProxyType

from . import effects as fx
from .constants import ACL_ERROR_INVALID_PARAM
from .outcome import ANY_ERROR
from .outcome import AllowedAnswers
from .outcome import Alternative
from .requirement_ids import EVENT_CALLS
from .requirement_ids import PINNED_COMPLETE_AFTER_SYNC
from .requirement_ids import STREAM_CALLS
from .requirement_ids import STREAM_EVENT_ORDER
from .runtime_checks import IMPOSSIBLE
from .runtime_checks import MAY
from .runtime_checks import Folding
from .runtime_checks import Rule
from .runtime_checks import RuntimeCheck
from .runtime_checks import created
from .runtime_checks import current_device
from .runtime_checks import foreign
from .runtime_checks import resolve_stream
from .runtime_checks import succeeds
from .state import Event
from .state import Stream
from .state import World


def _event(world: World, event: int, checks: list[RuntimeCheck]) -> Event | None:
    """The live event ``event`` names; adds a check if there is none."""
    if event == 0:
        checks.append(RuntimeCheck(EVENT_CALLS, "event is NULL", ACL_ERROR_INVALID_PARAM))
        return None
    e = world.live_event(event)
    if e is None:
        what = (
            "a destroyed event" if event in world.dead_events else "a handle that is not an event"
        )
        checks.append(RuntimeCheck(EVENT_CALLS, f"event is {what}", None))
    return e


def rule_create_event(
    profile: Folding, world: World, thread: int, null_event: bool = False
) -> AllowedAnswers:
    """The allowed answers of aclrtCreateEvent."""
    return created(profile, world, thread, null_event, EVENT_CALLS, "event", fx.NewEvent)


def _event_on_stream(
    world: World, thread: int, event: int, stream: int, checks: list[RuntimeCheck]
) -> tuple[Event | None, Stream | None]:
    """The checks shared by aclrtRecordEvent and aclrtStreamWaitEvent."""
    e = _event(world, event, checks)
    device = current_device(world, thread, checks, EVENT_CALLS)
    target = resolve_stream(world, stream, device, checks, EVENT_CALLS)
    if target is not None and foreign(target, device):
        # The text does not say whether an event may be recorded on (or waited
        # for by) another device's stream: both answers are allowed.
        checks.append(
            RuntimeCheck(EVENT_CALLS, f"{target.name} belongs to another device", None, MAY, MAY)
        )
    return e, target


def _ordering(
    profile: Folding,
    world: World,
    thread: int,
    event: int,
    stream: int,
    effect: Callable[[Event, Stream], object],
    why: str,
) -> AllowedAnswers:
    """The allowed answers of a call that orders ``stream`` by ``event`` (records it, or
    waits for it): ``effect(event, stream)`` is what it does."""
    checks: list[RuntimeCheck] = []
    e, target = _event_on_stream(world, thread, event, stream, checks)
    if e is None or target is None:
        return profile.fold(checks, IMPOSSIBLE)
    return succeeds(profile, checks, effect(e, target), STREAM_EVENT_ORDER, why)


def rule_record_event(
    profile: Folding, world: World, thread: int, event: int, stream: int
) -> AllowedAnswers:
    """The allowed answers of aclrtRecordEvent."""
    return _ordering(
        profile, world, thread, event, stream, fx.RecordEvent, "recording an event succeeds"
    )


def rule_stream_wait_event(
    profile: Folding, world: World, thread: int, stream: int, event: int
) -> AllowedAnswers:
    """The allowed answers of aclrtStreamWaitEvent."""
    return _ordering(
        profile,
        world,
        thread,
        event,
        stream,
        lambda e, s: fx.WaitEvent(s, e),
        "waiting for an event succeeds",
    )


def rule_synchronize_event(
    profile: Folding, world: World, thread: int, event: int
) -> AllowedAnswers:
    """The allowed answers of aclrtSynchronizeEvent."""
    checks: list[RuntimeCheck] = []
    e = _event(world, event, checks)
    if e is None:
        return profile.fold(checks, IMPOSSIBLE)
    if e.captured is None:
        checks.append(RuntimeCheck(EVENT_CALLS, f"{e.name} was never recorded", None, MAY, MAY))
        return succeeds(
            profile, checks, None, EVENT_CALLS, "an unrecorded event has nothing to wait for"
        )
    if world.order.abandoned_in(e.captured):
        checks.append(
            RuntimeCheck(
                STREAM_CALLS,
                f"{e.name} was recorded on a stream destroyed with tasks pending: the text "
                "does not say whether they still run",
                None,
                MAY,
                MAY,
            )
        )
    g = world.order.closed_gate_before(e.captured)
    if g is not None:
        return AllowedAnswers(
            (
                Alternative(
                    ANY_ERROR,
                    None,
                    PINNED_COMPLETE_AFTER_SYNC,
                    f"{e.name} waits for gate {g.gid}, which is closed: the call cannot succeed now",
                ),
            )
        )
    return succeeds(
        profile,
        checks,
        fx.SyncEvent(e),
        PINNED_COMPLETE_AFTER_SYNC,
        "synchronising an event waits for what it captured",
    )


def rule_destroy_event(profile: Folding, world: World, thread: int, event: int) -> AllowedAnswers:
    """The allowed answers of aclrtDestroyEvent."""
    checks: list[RuntimeCheck] = []
    e = _event(world, event, checks)
    if e is None:
        return profile.fold(checks, IMPOSSIBLE)
    return succeeds(
        profile, checks, fx.DestroyEvent(e), EVENT_CALLS, "destroying an event succeeds"
    )


RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "create_event": rule_create_event,
        "record_event": rule_record_event,
        "stream_wait_event": rule_stream_wait_event,
        "synchronize_event": rule_synchronize_event,
        "destroy_event": rule_destroy_event,
    }
)
"""Call name -> rule, for the calls of this module."""
