"""The simulator's host memory calls: page-locked and pageable buffers, registration, and
the host-side memcpy the suite uses to fill and read them.

Checks, codes and ``Choice:`` marks: as the package docstring says for every calls_ module.
"""

from __future__ import annotations

import numpy as np

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_MEMORY_ALLOCATION
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_PARAM_INVALID
from acl_conformance.reference_impl.constants import ACL_HOST_REG_IOMEMORY
from acl_conformance.reference_impl.constants import ACL_HOST_REG_MAPPED
from acl_conformance.reference_impl.constants import ACL_HOST_REG_PINNED
from acl_conformance.reference_impl.constants import ACL_HOST_REG_READONLY
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import HOST_REGISTER_ALIGNMENT

from . import cabi
from .core import SimulatorCore
from .hostmem import Registration

_REGISTER_FLAGS = ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY
_REGISTER_FLAGS |= ACL_HOST_REG_PINNED


class HostMemoryCalls(SimulatorCore):
    """aclrtMallocHost, aclrtFreeHost, malloc/free, aclrtHostRegisterV2,
    aclrtHostUnregister, host memcpy."""

    def malloc_host(self, size: int, null_host_ptr: bool = False) -> tuple[int, int]:
        """aclrtMallocHost: NULL output or size 0 100000; more than ``host_limit`` 207001."""
        self._check_open()
        n = cabi.size_t(size)
        if null_host_ptr or n == 0:
            return ACL_ERROR_INVALID_PARAM, 0
        address = self._host.allocate(n, pinned=True)
        if address is None:
            return ACL_ERROR_RT_MEMORY_ALLOCATION, 0
        return ACL_SUCCESS, address

    def free_host(self, host_ptr: int) -> int:
        """aclrtFreeHost: NULL 100000.  Choice: a pointer that is not the start of live
        aclrtMallocHost memory is 107000.  With ``frees_wait``, first waits until every
        live context's streams are idle."""
        self._check_open()
        address = cabi.pointer(host_ptr)
        if address == 0:
            return ACL_ERROR_INVALID_PARAM
        if self.options.frees_wait:
            self._wait_every_device_idle()
        if not self._host.free(address, pinned=True):
            return ACL_ERROR_RT_PARAM_INVALID
        return ACL_SUCCESS

    def malloc_pageable(self, size: int) -> tuple[int, int]:
        """malloc: 4096-aligned zero-filled memory; size 0 gives a unique address of an
        empty buffer; more than ``host_limit`` is 207001 (malloc returned NULL)."""
        self._check_open()
        address = self._host.allocate(cabi.size_t(size), pinned=False)
        if address is None:
            return ACL_ERROR_RT_MEMORY_ALLOCATION, 0
        return ACL_SUCCESS, address

    def free_pageable(self, ptr: int) -> int:
        """free: NULL is a no-op (0).  Choice: anything but the start of a live pageable
        buffer is 100000 (C would have undefined behaviour)."""
        self._check_open()
        address = cabi.pointer(ptr)
        if address == 0:
            return ACL_SUCCESS
        return ACL_SUCCESS if self._host.free(address, pinned=False) else ACL_ERROR_INVALID_PARAM

    def host_register(self, ptr: int, size: int, flag: int = ACL_HOST_REG_PINNED) -> int:
        """aclrtHostRegisterV2.  Order: NULL pointer, size 0, a flag outside the known bits
        (or 0), a pointer not 4096-aligned: 100000 each; then (choice) a range not inside
        one live host buffer: 107000; then a range overlapping a registered one or lying in
        aclrtMallocHost memory (already page-locked): 507910."""
        self._check_open()
        address, n, flags = cabi.pointer(ptr), cabi.size_t(size), cabi.uint32(flag)
        if address == 0 or n == 0:
            return ACL_ERROR_INVALID_PARAM
        if flags == 0 or flags & ~_REGISTER_FLAGS:
            return ACL_ERROR_INVALID_PARAM
        if address % HOST_REGISTER_ALIGNMENT:
            return ACL_ERROR_INVALID_PARAM
        outcome = self._host.register(address, n)
        if outcome is Registration.OUTSIDE:
            return ACL_ERROR_RT_PARAM_INVALID
        if outcome is Registration.OVERLAP:
            return ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED
        return ACL_SUCCESS

    def host_unregister(self, ptr: int) -> int:
        """aclrtHostUnregister: NULL 100000.  Choice: anything but the exact start of a
        registered range (interior pointers included) is 507911.  With ``frees_wait``,
        first waits as aclrtFreeHost does."""
        self._check_open()
        address = cabi.pointer(ptr)
        if address == 0:
            return ACL_ERROR_INVALID_PARAM
        if self.options.frees_wait:
            self._wait_every_device_idle()
        if not self._host.unregister(address):
            return ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
        return ACL_SUCCESS

    def write_host(self, dst: int, data: bytes) -> int:
        """Host memcpy into simulated memory: 100000 unless the bytes lie in one live buffer."""
        self._check_open()
        payload = bytes(data)
        view = self._host.view(cabi.pointer(dst), len(payload))
        if view is None:
            return ACL_ERROR_INVALID_PARAM
        view[:] = np.frombuffer(payload, dtype=np.uint8)
        return ACL_SUCCESS

    def read_host(self, src: int, count: int) -> tuple[int, bytes]:
        """Host memcpy out of simulated memory: (100000, b"") unless in one live buffer."""
        self._check_open()
        view = self._host.view(cabi.pointer(src), cabi.size_t(count))
        if view is None:
            return ACL_ERROR_INVALID_PARAM, b""
        return ACL_SUCCESS, view.tobytes()
