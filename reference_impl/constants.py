"""Numeric constants of the ACL runtime used by the symbol-copy APIs.

Values and names are those of the open-source CANN headers
(include/external/acl/acl_base_rt.h, include/external/acl/acl_rt.h,
include/external/acl/error_codes/rt_error_codes.h), as recorded in
cann-runtime-facts.md section 3.  These are the only things the model and the
simulator may share, with the capability flags a backend declares (``Capabilities``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

SIZE_MAX = 2**64 - 1
"""size_t is 64 bits on every platform CANN supports."""

INT32_MAX = 2**31 - 1

# --- aclError: ACL layer (acl_base_rt.h) -----------------------------------
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005
ACL_ERROR_INTERNAL_ERROR = 500000
ACL_ERROR_FAILURE = 500001

# --- aclError: runtime layer (rt_error_codes.h) ----------------------------
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_STREAM_CONTEXT = 107003
ACL_ERROR_RT_INVALID_HANDLE = 107017
ACL_ERROR_RT_SYMBOL_NOT_FOUND = 107042
ACL_ERROR_RT_INVALID_SYMBOL = 107043
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008
ACL_ERROR_RT_INTERNAL_ERROR = 507000
ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004
ACL_ERROR_RT_SYS_DMA = 507013
ACL_ERROR_RT_DEV_SETUP_ERROR = 507033
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED = 507910
ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED = 507911

ERROR_NAMES: dict[int, str] = {
    ACL_SUCCESS: "ACL_SUCCESS",
    ACL_ERROR_INVALID_PARAM: "ACL_ERROR_INVALID_PARAM",
    ACL_ERROR_UNINITIALIZE: "ACL_ERROR_UNINITIALIZE",
    ACL_ERROR_REPEAT_INITIALIZE: "ACL_ERROR_REPEAT_INITIALIZE",
    ACL_ERROR_REPEAT_FINALIZE: "ACL_ERROR_REPEAT_FINALIZE",
    ACL_ERROR_INVALID_RESOURCE_HANDLE: "ACL_ERROR_INVALID_RESOURCE_HANDLE",
    ACL_ERROR_INTERNAL_ERROR: "ACL_ERROR_INTERNAL_ERROR",
    ACL_ERROR_FAILURE: "ACL_ERROR_FAILURE",
    ACL_ERROR_RT_PARAM_INVALID: "ACL_ERROR_RT_PARAM_INVALID",
    ACL_ERROR_RT_CONTEXT_NULL: "ACL_ERROR_RT_CONTEXT_NULL",
    ACL_ERROR_RT_STREAM_CONTEXT: "ACL_ERROR_RT_STREAM_CONTEXT",
    ACL_ERROR_RT_INVALID_HANDLE: "ACL_ERROR_RT_INVALID_HANDLE",
    ACL_ERROR_RT_SYMBOL_NOT_FOUND: "ACL_ERROR_RT_SYMBOL_NOT_FOUND",
    ACL_ERROR_RT_INVALID_SYMBOL: "ACL_ERROR_RT_INVALID_SYMBOL",
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT: "ACL_ERROR_RT_FEATURE_NOT_SUPPORT",
    ACL_ERROR_RT_MEMORY_ALLOCATION: "ACL_ERROR_RT_MEMORY_ALLOCATION",
    ACL_ERROR_RT_NO_STREAM_RESOURCE: "ACL_ERROR_RT_NO_STREAM_RESOURCE",
    ACL_ERROR_RT_INTERNAL_ERROR: "ACL_ERROR_RT_INTERNAL_ERROR",
    ACL_ERROR_RT_STREAM_NOT_COMPLETE: "ACL_ERROR_RT_STREAM_NOT_COMPLETE",
    ACL_ERROR_RT_SYS_DMA: "ACL_ERROR_RT_SYS_DMA",
    ACL_ERROR_RT_DEV_SETUP_ERROR: "ACL_ERROR_RT_DEV_SETUP_ERROR",
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT",
    ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED: "ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED",
    ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED: "ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED",
}


def error_name(code: int) -> str:
    """The aclError name of ``code``, or ``"<unknown aclError N>"``."""
    return ERROR_NAMES.get(code, f"<unknown aclError {code}>")


class MemcpyKind(IntEnum):
    """aclrtMemcpyKind (acl_rt.h:144-153)."""

    ACL_MEMCPY_HOST_TO_HOST = 0
    ACL_MEMCPY_HOST_TO_DEVICE = 1
    ACL_MEMCPY_DEVICE_TO_HOST = 2
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
    ACL_MEMCPY_DEFAULT = 4
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7


H2D = int(MemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE)
"""Short for ACL_MEMCPY_HOST_TO_DEVICE (the only meaning of H2D in the suite)."""
D2H = int(MemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)
"""Short for ACL_MEMCPY_DEVICE_TO_HOST."""
DEFAULT = int(MemcpyKind.ACL_MEMCPY_DEFAULT)
"""Short for ACL_MEMCPY_DEFAULT."""


def kind_name(kind: int) -> str:
    """The enumerator name of ``kind``, or a C cast for values outside the enum."""
    try:
        return MemcpyKind(kind).name
    except ValueError:
        return f"(aclrtMemcpyKind){kind}"


TO_SYMBOL_KINDS = frozenset({MemcpyKind.ACL_MEMCPY_HOST_TO_DEVICE, MemcpyKind.ACL_MEMCPY_DEFAULT})
"""Kinds the To-symbol copies accept (D11:302,365)."""

FROM_SYMBOL_KINDS = frozenset({MemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST, MemcpyKind.ACL_MEMCPY_DEFAULT})
"""Kinds the From-symbol copies accept (D11:176,240)."""


class StreamStatus(IntEnum):
    """aclrtStreamStatus (acl_rt.h:134-137)."""

    ACL_STREAM_STATUS_COMPLETE = 0
    ACL_STREAM_STATUS_NOT_READY = 1
    ACL_STREAM_STATUS_RESERVED = 0xFFFF


ACL_HOST_REG_MAPPED = 0x2
ACL_HOST_REG_IOMEMORY = 0x4
ACL_HOST_REG_READONLY = 0x8
ACL_HOST_REG_PINNED = 0x10000000

MALLOC_HOST_ALIGNMENT = 64
"""aclrtMallocHost returns 64-byte aligned memory (11-02_host_memory_management.md:50)."""

HOST_REGISTER_ALIGNMENT = 4096
"""aclrtHostRegisterV2 requires a 4 KB aligned pointer (11-02:292)."""


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers, as it declares it: the suite skips, with a reason, what it
    does not offer, and the model assumes exactly this of it."""

    devices: int = 1
    """How many devices the suite may use (each holds its own instance of every variable)."""
    default_stream: bool = True
    """NULL means the current device's default stream."""
    events: bool = True
    host_register: bool = True
    gate: bool = True
    """launch_gate / open_gate: a host task that blocks a stream until opened."""
    threads: bool = True
    """Several host threads may call at once."""
    symbol_apis: bool = True
    """The backend has the symbol APIs (aclrtMemcpyToSymbolAsync and its siblings).  A
    release without them (CANN before 9.1.0; its ACL version number does not tell) says
    False, and every requirement is reported not supported."""
