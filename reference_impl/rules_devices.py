"""The rules of the device calls and of the process state.

aclrtSetDevice, aclrtGetDevice, aclrtGetDeviceCount, aclrtResetDevice,
aclrtSynchronizeDevice; aclInit, aclFinalize and aclsysGetVersionStr.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import effects as fx
from .constants import ACL_ERROR_REPEAT_FINALIZE
from .constants import ACL_ERROR_REPEAT_INITIALIZE
from .outcome import ANY_ERROR
from .outcome import SUCCESS
from .outcome import AllowedAnswers
from .outcome import Alternative
from .requirement_ids import DEVICE_CALLS
from .requirement_ids import INIT_CALLS
from .requirement_ids import PINNED_COMPLETE_AFTER_SYNC
from .runtime_checks import MAY
from .runtime_checks import MUST
from .runtime_checks import Folding
from .runtime_checks import Rule
from .runtime_checks import RuntimeCheck
from .runtime_checks import blocked
from .runtime_checks import current_device
from .runtime_checks import device_streams
from .runtime_checks import one
from .runtime_checks import succeeds
from .state import World


def rule_synchronize_device(profile: Folding, world: World, thread: int) -> AllowedAnswers:
    """The allowed answers of aclrtSynchronizeDevice."""
    checks: list[RuntimeCheck] = []
    device = current_device(world, thread, checks, DEVICE_CALLS)
    held = blocked(world, PINNED_COMPLETE_AFTER_SYNC, device_streams(world, device))
    if held is not None:
        return held
    return succeeds(
        profile,
        checks,
        fx.SyncDevice(device),
        PINNED_COMPLETE_AFTER_SYNC,
        "synchronising the device waits for all its streams",
    )


def rule_set_device(profile: Folding, world: World, thread: int, device_id: int) -> AllowedAnswers:
    """The allowed answers of aclrtSetDevice."""
    if not world.valid_device(device_id):
        return AllowedAnswers(
            (
                Alternative(
                    ANY_ERROR,
                    None,
                    DEVICE_CALLS,
                    f"device {device_id} does not exist ({world.caps.devices} devices)",
                ),
            )
        )
    return AllowedAnswers(
        (
            Alternative(
                SUCCESS,
                fx.SetDevice(device_id),
                DEVICE_CALLS,
                "setting a valid device succeeds",
            ),
        )
    )


def rule_get_device(profile: Folding, world: World, thread: int) -> AllowedAnswers:
    """The allowed answers of aclrtGetDevice."""
    dev = world.current_device(thread)
    if dev is None:
        return one(ANY_ERROR, None, DEVICE_CALLS, "no device is current")
    return one(SUCCESS, fx.ReportDevice(dev), DEVICE_CALLS, "the current device is reported")


def rule_get_device_count(profile: Folding, world: World, thread: int) -> AllowedAnswers:
    """The allowed answers of aclrtGetDeviceCount."""
    effect = fx.ReportDeviceCount(world.caps.devices)
    return one(SUCCESS, effect, DEVICE_CALLS, "the device count is reported")


def rule_reset_device(
    profile: Folding, world: World, thread: int, device_id: int
) -> AllowedAnswers:
    """The allowed answers of aclrtResetDevice."""
    if not world.valid_device(device_id):
        return AllowedAnswers(
            (Alternative(ANY_ERROR, None, DEVICE_CALLS, f"device {device_id} does not exist"),)
        )
    if world.refcount.get(device_id, 0) == 0:
        return AllowedAnswers(
            (
                Alternative(
                    SUCCESS,
                    None,
                    DEVICE_CALLS,
                    "resetting a device that is not set may succeed",
                ),
                Alternative(ANY_ERROR, None, DEVICE_CALLS, "or be rejected"),
            )
        )
    held = blocked(world, DEVICE_CALLS, device_streams(world, device_id))
    if held is not None:
        return held
    return AllowedAnswers(
        (
            Alternative(
                SUCCESS,
                fx.ResetDevice(device_id),
                DEVICE_CALLS,
                "resetting a set device succeeds",
            ),
        )
    )


# -- process state ----------------------------------------------------------
def rule_get_version_str(profile: Folding, world: World, thread: int) -> AllowedAnswers:
    """The allowed answers of aclsysGetVersionStr."""
    return AllowedAnswers(
        (
            Alternative(SUCCESS, fx.Nothing(), None, "the version string"),
            Alternative(ANY_ERROR, None, None, "no version file (ACL_ERROR_INVALID_FILE on CANN)"),
        )
    )


def rule_init(
    profile: Folding, world: World, thread: int, config_path: str | None = None
) -> AllowedAnswers:
    """The allowed answers of aclInit."""
    if world.initialized:
        checks = [
            RuntimeCheck(
                INIT_CALLS,
                "aclInit was already called",
                ACL_ERROR_REPEAT_INITIALIZE,
                MAY,
                MUST,
            )
        ]
        return succeeds(profile, checks, None, INIT_CALLS, "a repeated aclInit may succeed")
    return AllowedAnswers(
        (Alternative(SUCCESS, fx.Init(), INIT_CALLS, "the first aclInit succeeds"),)
    )


def rule_finalize(profile: Folding, world: World, thread: int) -> AllowedAnswers:
    """The allowed answers of aclFinalize."""
    if not world.initialized:
        code = ACL_ERROR_REPEAT_FINALIZE if world.finalized else None
        checks = [RuntimeCheck(INIT_CALLS, "aclFinalize without a live aclInit", code, MAY, MUST)]
        return succeeds(profile, checks, None, INIT_CALLS, "a repeated aclFinalize may succeed")
    return AllowedAnswers(
        (Alternative(SUCCESS, fx.Finalize(), INIT_CALLS, "aclFinalize after aclInit succeeds"),)
    )


RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "synchronize_device": rule_synchronize_device,
        "set_device": rule_set_device,
        "get_device": rule_get_device,
        "get_device_count": rule_get_device_count,
        "reset_device": rule_reset_device,
        "get_version_str": rule_get_version_str,
        "init": rule_init,
        "finalize": rule_finalize,
    }
)
"""Call name -> rule, for the calls of this module."""
