"""The simulator's calls on the process and its devices: aclInit, aclFinalize, the version,
aclrtSetDevice and its siblings, aclrtSynchronizeDevice.

Checks, codes and ``Choice:`` marks: as the package docstring says for every calls_ module.
"""

from __future__ import annotations

import itertools
import time

from acl_conformance.reference_impl.constants import ACL_ERROR_INVALID_PARAM
from acl_conformance.reference_impl.constants import ACL_ERROR_REPEAT_FINALIZE
from acl_conformance.reference_impl.constants import ACL_ERROR_REPEAT_INITIALIZE
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_CONTEXT_NULL
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_INTERNAL_ERROR
from acl_conformance.reference_impl.constants import ACL_SUCCESS

from . import cabi
from .core import SimulatorCore
from .core import __version__
from .streams import Wait

# A code of rt_error_codes.h that constants.py does not list (CANN's header value).
ACL_ERROR_RT_INVALID_DEVICEID = 107001


class ProcessCalls(SimulatorCore):
    """aclInit, aclFinalize, aclsysGetVersionStr and the device calls."""

    def init(self, config_path: str | None = None) -> int:
        """aclInit.  Choice: it is reference-counted, a repeat with the same config returns
        100002 and takes a reference, a repeat with a different config returns 100000 and
        does not; nothing else in the simulator needs aclInit (CANN checks it nowhere on
        these paths)."""
        self._check_open()
        with self._lock:
            if self._init_count > 0:
                if config_path != self._init_config:
                    return ACL_ERROR_INVALID_PARAM
                self._init_count += 1
                return ACL_ERROR_REPEAT_INITIALIZE
            self._init_count = 1
            self._init_config = config_path
            return ACL_SUCCESS

    def finalize(self) -> int:
        """aclFinalize: drops one aclInit reference; 100037 when there is none (never
        initialised, or finalised already).  Choice: devices are left as they are."""
        self._check_open()
        with self._lock:
            if self._init_count == 0:
                return ACL_ERROR_REPEAT_FINALIZE
            self._init_count -= 1
            return ACL_SUCCESS

    def get_version_str(self) -> tuple[int, str]:
        return ACL_SUCCESS, f"acl-conformance-simulator {__version__} ({self.options.describe()})"

    def set_device(self, device_id: int) -> int:
        """aclrtSetDevice.  An id out of range is 107001 (ACL_ERROR_RT_INVALID_DEVICEID).
        With ``setup_ms``, creating the device's context (no live one) sleeps that long,
        one creation at a time."""
        self._check_open()
        device = cabi.int32(device_id)
        if not self._devices.valid(device):
            return ACL_ERROR_RT_INVALID_DEVICEID
        if not self.options.setup_ms:
            self._devices.set_device(device)
            return ACL_SUCCESS
        with self._setup_lock:  # setup_ms: creating a context takes that long
            if self._devices.context_of(device) is None:
                time.sleep(self.options.setup_ms / 1000.0)
            self._devices.set_device(device)
        return ACL_SUCCESS

    def get_device(self) -> tuple[int, int]:
        """aclrtGetDevice: (107002, -1) when this thread has no current device."""
        self._check_open()
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL, -1
        return ACL_SUCCESS, ctx.device

    def reset_device(self, device_id: int) -> int:
        """aclrtResetDevice: drop one reference; the last one waits for every pending task of
        the device, destroys its streams and events, and discards its memory (the next
        context starts from the initial pattern).  Choice: resetting a device that holds
        no reference is a no-op returning 0; an id out of range is 107001."""
        self._check_open()
        device = cabi.int32(device_id)
        if not self._devices.valid(device):
            return ACL_ERROR_RT_INVALID_DEVICEID
        ended = self._devices.release(device)
        if ended is None:
            return ACL_SUCCESS
        with self._lock:
            for handle in itertools.chain(ended.streams, ended.events):
                self._objects.pop(handle, None)
        result = self._retire([*ended.streams.values(), ended.default_stream])
        return ACL_SUCCESS if result is Wait.DONE else ACL_ERROR_RT_INTERNAL_ERROR

    def get_device_count(self) -> tuple[int, int]:
        return ACL_SUCCESS, self._devices.count

    def synchronize_device(self) -> int:
        """aclrtSynchronizeDevice: wait for every task issued so far on the current device."""
        self._check_open()
        ctx = self._devices.current()
        if ctx is None:
            return ACL_ERROR_RT_CONTEXT_NULL
        with self._lock:
            streams = [ctx.default_stream, *ctx.streams.values()]
        targets = [(s, s.issued()) for s in streams]
        code = ACL_SUCCESS
        for stream, seq in targets:
            code = self._wait_code(stream, stream.wait_for(seq)) or code
        return code
