"""Bugs that show only at the second or third step of a life cycle: several host
registrations live at once, one unregistered and registered again; a device reset while
other devices hold instances of the variables, and the device set again.

Each is a small change to the bundled simulator, as a vendor could ship it: a
registration table that keeps one entry, or forgets which entry a call names; a reset
that wipes the wrong context's memory, or hands the new context another device's.
"""

from __future__ import annotations

from typing import Any

from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED
from acl_conformance.reference_impl.constants import ACL_SUCCESS

from .mutant_base import MutantBase
from .mutant_base import Registrations


class UnregisterDropsTheMostRecent(Registrations):
    """aclrtHostUnregister of any registered range answers success but unregisters the most
    recently registered range instead (a registration stack popped, not searched): the
    range named stays page-locked, the newest one turns pageable."""

    def host_unregister(self, ptr: int) -> int:
        if ptr not in self._live:
            return super().host_unregister(ptr)
        newest = next(reversed(self._live))
        return super().host_unregister(newest)


class UnregisterDropsEveryRange(Registrations):
    """aclrtHostUnregister of one registered range unregisters every registered range (the
    whole table is cleared): the other ranges turn pageable while still registered."""

    def host_unregister(self, ptr: int) -> int:
        if ptr not in self._live:
            return super().host_unregister(ptr)
        code = ACL_SUCCESS
        for start in list(self._live):
            code = super().host_unregister(start)
        return code


class RegistrationKeepsOneRange(Registrations):
    """The registration table holds one range: a second aclrtHostRegisterV2 succeeds and
    silently replaces the first, which turns pageable (and unregistering it later fails)."""

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        code = super().host_register(ptr, size, flag)
        if code == ACL_SUCCESS:
            for start in [s for s in self._live if s != ptr]:
                super().host_unregister(start)
        return code


class ReRegisteredStaysPageable(Registrations):
    """A range registered, unregistered and registered again answers success the second
    time but stays pageable (the driver's page-lock is not taken again for pages it saw
    released)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._released: set[int] = set()

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        code = super().host_register(ptr, size, flag)
        if code == ACL_SUCCESS and ptr in self._released:
            self._host.unregister(ptr)  # the table says registered; the pages are not locked
            self._live[ptr] = size
        return code

    def host_unregister(self, ptr: int) -> int:
        if ptr in self._live and ptr in self._released:
            self._live.pop(ptr)
            return ACL_SUCCESS
        code = super().host_unregister(ptr)
        if code == ACL_SUCCESS:
            self._released.add(ptr)
        return code


class ResetClearsEveryDevice(MutantBase):
    """aclrtResetDevice, ending a device's context, reloads the initial image into every
    device's memory, not only the reset one's (a reset of the whole chip)."""

    def reset_device(self, device_id: int) -> int:
        ended = self._devices.context_of(device_id) if self._devices.valid(device_id) else None
        code = super().reset_device(device_id)
        if ended is not None and self._devices.context_of(device_id) is None:
            for ctx in self._devices.contexts():
                ctx.memory[:] = self.layout.image()
        return code


class ResetClearsTheCurrentDevice(MutantBase):
    """aclrtResetDevice of a device that is not the calling thread's current one reloads the
    initial image into the current device's memory as well (the reset looks up the context
    by the thread, not by the id)."""

    def reset_device(self, device_id: int) -> int:
        current = self._devices.current()
        ended = self._devices.context_of(device_id) if self._devices.valid(device_id) else None
        code = super().reset_device(device_id)
        if (
            ended is not None
            and current is not None
            and current is not ended
            and self._devices.context_of(device_id) is None
        ):
            current.memory[:] = self.layout.image()
        return code


class ResetAliasesDeviceZero(MutantBase):
    """After aclrtResetDevice, the new context of a device other than device 0 maps device
    0's memory: its instances alias device 0's (a copy to one lands in both)."""

    def set_device(self, device_id: int) -> int:
        if device_id == 0 or not self._devices.valid(device_id):
            return super().set_device(device_id)
        existed = self._devices.context_of(device_id) is not None
        code = super().set_device(device_id)
        ctx = self._devices.context_of(device_id)
        first = self._devices.context_of(0)
        # A context made again after a reset maps device 0's memory.
        made = code == ACL_SUCCESS and not existed and ctx is not None
        if made and first is not None and ctx is not None and ctx.generation > 0:
            ctx.memory = first.memory
        return code
