"""The rules of the stream calls, and of the suite's gate (a host function on a stream).

aclrtCreateStream, aclrtDestroyStream, aclrtSynchronizeStream[WithTimeout],
aclrtStreamQuery; aclrtLaunchHostFunc as the suite uses it (launch_gate) and
the opening of a gate.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import effects as fx
from .constants import ACL_ERROR_INVALID_PARAM
from .constants import ACL_ERROR_RT_PARAM_INVALID
from .constants import ACL_ERROR_RT_STREAM_CONTEXT
from .constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from .outcome import SUCCESS
from .outcome import AllowedAnswers
from .outcome import Alternative
from .outcome import Codes
from .requirement_ids import PINNED_COMPLETE_AFTER_SYNC
from .requirement_ids import STREAM_CALLS
from .requirement_ids import STREAM_QUERY
from .requirement_ids import SYNC_TIMEOUT
from .runtime_checks import IMPOSSIBLE
from .runtime_checks import MAY
from .runtime_checks import MUST
from .runtime_checks import Folding
from .runtime_checks import Rule
from .runtime_checks import RuntimeCheck
from .runtime_checks import blocked
from .runtime_checks import created
from .runtime_checks import current_device
from .runtime_checks import foreign
from .runtime_checks import resolve_stream
from .runtime_checks import succeeds
from .state import Stream
from .state import World


def rule_create_stream(
    profile: Folding, world: World, thread: int, null_stream: bool = False
) -> AllowedAnswers:
    """The allowed answers of aclrtCreateStream."""
    return created(profile, world, thread, null_stream, STREAM_CALLS, "stream", fx.NewStream)


def rule_destroy_stream(profile: Folding, world: World, thread: int, stream: int) -> AllowedAnswers:
    """The allowed answers of aclrtDestroyStream."""
    checks: list[RuntimeCheck] = []
    if stream == 0:
        checks.append(RuntimeCheck(STREAM_CALLS, "stream is NULL", ACL_ERROR_INVALID_PARAM))
        return profile.fold(checks, IMPOSSIBLE)
    device = current_device(world, thread, checks, STREAM_CALLS)
    target = resolve_stream(world, stream, device, checks, STREAM_CALLS)
    if target is None:
        return profile.fold(checks, IMPOSSIBLE)
    if foreign(target, device):
        checks.append(
            RuntimeCheck(
                STREAM_CALLS,
                f"{target.name} belongs to device {target.device}, not the current device",
                None,
                MAY,
                MAY,
            )
        )
    held = blocked(world, STREAM_CALLS, [target]) if profile.destroy_waits else None
    if held is not None:
        return held
    effect = fx.DestroyStream(target, drains=profile.destroy_waits)
    return succeeds(profile, checks, effect, STREAM_CALLS, "destroying a live stream succeeds")


def _sync_target(
    world: World, thread: int, stream: int, checks: list[RuntimeCheck], req: str
) -> Stream | None:
    """The stream a synchronising call waits for; adds the checks that name it."""
    device = current_device(world, thread, checks, req)
    target = resolve_stream(world, stream, device, checks, req)
    if target is not None and foreign(target, device):
        # StreamSynchronize switches to the stream's context (AIMP:1719-1727, inference).
        checks.append(
            RuntimeCheck(
                req,
                f"{target.name} belongs to device {target.device}, not the current device",
                ACL_ERROR_RT_STREAM_CONTEXT,
                MAY,
                MAY,
            )
        )
    return target


def rule_synchronize_stream(
    profile: Folding, world: World, thread: int, stream: int
) -> AllowedAnswers:
    """The allowed answers of aclrtSynchronizeStream."""
    checks: list[RuntimeCheck] = []
    target = _sync_target(world, thread, stream, checks, STREAM_CALLS)
    if target is None:
        return profile.fold(checks, IMPOSSIBLE)
    held = blocked(world, PINNED_COMPLETE_AFTER_SYNC, [target])
    if held is not None:
        return held
    return succeeds(
        profile,
        checks,
        fx.SyncStream(target),
        PINNED_COMPLETE_AFTER_SYNC,
        "synchronising a stream waits for its tasks",
    )


def rule_synchronize_stream_with_timeout(
    profile: Folding, world: World, thread: int, stream: int, timeout: int
) -> AllowedAnswers:
    """The allowed answers of aclrtSynchronizeStreamWithTimeout."""
    checks: list[RuntimeCheck] = []
    if timeout < -1:
        checks.append(
            RuntimeCheck(
                SYNC_TIMEOUT, f"timeout {timeout} < -1", ACL_ERROR_RT_PARAM_INVALID, MAY, MUST
            )
        )
    target = _sync_target(world, thread, stream, checks, SYNC_TIMEOUT)
    if timeout == 0:
        checks.append(
            RuntimeCheck(SYNC_TIMEOUT, "timeout is 0", ACL_ERROR_RT_PARAM_INVALID, MAY, MUST)
        )
    if target is None:
        return profile.fold(checks, IMPOSSIBLE)
    gate = world.order.closed_gate_before(target.queue.frontier)
    if gate is not None and timeout == WAIT_FOREVER:
        return _waits_forever(profile, checks, target, gate.gid)
    if gate is not None:
        checks.append(
            RuntimeCheck(
                SYNC_TIMEOUT,
                f"a closed gate blocks {target.name}: the wait can only time out",
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
            )
        )
        return profile.fold(checks, IMPOSSIBLE)
    if timeout != WAIT_FOREVER:
        # Timing is open: a positive timeout may expire while the stream finishes near it.
        checks.append(
            RuntimeCheck(
                SYNC_TIMEOUT,
                "the stream's tasks may take longer than the timeout",
                ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                MAY,
                MAY,
            )
        )
    return succeeds(
        profile,
        checks,
        fx.SyncStream(target),
        SYNC_TIMEOUT,
        "the stream completed within the timeout",
    )


WAIT_FOREVER = -1
"""The timeout that means "wait for as long as it takes" (acl_rt.h:2822: -1 waits forever,
a positive value is in milliseconds): such a wait never times out."""


def _waits_forever(
    profile: Folding, checks: list[RuntimeCheck], target: Stream, gate: int
) -> AllowedAnswers:
    """The allowed answers of a wait with no time limit that returned while gate ``gate``
    still held ``target``: neither success nor a time-out (it should still be waiting);
    another error, or what the failed argument checks allow."""
    waiting = Alternative(
        Codes.any_error_but(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT),
        None,
        SYNC_TIMEOUT,
        f"gate {gate} ahead in {target.name} is closed and a timeout of -1 waits forever: "
        "the call can return neither success nor a time-out before the gate opens",
    )
    earlier = profile.fold(checks, IMPOSSIBLE).alternatives
    return AllowedAnswers((waiting, *(a for a in earlier if a is not IMPOSSIBLE)))


def rule_stream_query(profile: Folding, world: World, thread: int, stream: int) -> AllowedAnswers:
    """The allowed answers of aclrtStreamQuery."""
    checks: list[RuntimeCheck] = []
    target = _sync_target(world, thread, stream, checks, STREAM_QUERY)
    if target is None:
        return profile.fold(checks, IMPOSSIBLE)
    return succeeds(
        profile, checks, fx.QueryStream(target), STREAM_QUERY, "querying a live stream succeeds"
    )


# -- the suite's gate: a host function that blocks its stream until opened --
def rule_launch_gate(profile: Folding, world: World, thread: int, stream: int) -> AllowedAnswers:
    """The allowed answers of aclrtLaunchHostFunc."""
    checks: list[RuntimeCheck] = []
    device = current_device(world, thread, checks)
    target = resolve_stream(world, stream, device, checks)
    if target is None:
        return profile.fold(checks, IMPOSSIBLE)
    return succeeds(profile, checks, fx.LaunchGate(target), None, "enqueueing the gate succeeds")


def rule_open_gate(profile: Folding, world: World, thread: int, gate: int) -> AllowedAnswers:
    """The allowed answers of the suite's gate_open (open_gate)."""
    return AllowedAnswers((Alternative(SUCCESS, fx.OpenGate(gate), None, "opening a gate"),))


RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "create_stream": rule_create_stream,
        "destroy_stream": rule_destroy_stream,
        "synchronize_stream": rule_synchronize_stream,
        "synchronize_stream_with_timeout": rule_synchronize_stream_with_timeout,
        "stream_query": rule_stream_query,
        "launch_gate": rule_launch_gate,
        "open_gate": rule_open_gate,
    }
)
"""Call name -> rule, for the calls of this module."""
