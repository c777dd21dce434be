"""The constants against the values cann-runtime-facts.md section 3 records."""

from __future__ import annotations

from acl_conformance.reference_impl import constants as c

# Transcribed from cann-runtime-facts.md section 3 (acl_base_rt.h, rt_error_codes.h, acl_rt.h).
FACTS_ERRORS = {
    "ACL_SUCCESS": 0,
    "ACL_ERROR_INVALID_PARAM": 100000,
    "ACL_ERROR_UNINITIALIZE": 100001,
    "ACL_ERROR_REPEAT_INITIALIZE": 100002,
    "ACL_ERROR_REPEAT_FINALIZE": 100037,
    "ACL_ERROR_INVALID_RESOURCE_HANDLE": 200005,
    "ACL_ERROR_INTERNAL_ERROR": 500000,
    "ACL_ERROR_FAILURE": 500001,
    "ACL_ERROR_RT_PARAM_INVALID": 107000,
    "ACL_ERROR_RT_CONTEXT_NULL": 107002,
    "ACL_ERROR_RT_STREAM_CONTEXT": 107003,
    "ACL_ERROR_RT_INVALID_HANDLE": 107017,
    "ACL_ERROR_RT_SYMBOL_NOT_FOUND": 107042,
    "ACL_ERROR_RT_INVALID_SYMBOL": 107043,
    "ACL_ERROR_RT_FEATURE_NOT_SUPPORT": 207000,
    "ACL_ERROR_RT_MEMORY_ALLOCATION": 207001,
    "ACL_ERROR_RT_INTERNAL_ERROR": 507000,
    "ACL_ERROR_RT_STREAM_NOT_COMPLETE": 507004,
    "ACL_ERROR_RT_SYS_DMA": 507013,
    "ACL_ERROR_RT_DEV_SETUP_ERROR": 507033,
    "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT": 507046,
    "ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED": 507910,
    "ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED": 507911,
}

FACTS_KINDS = {
    "ACL_MEMCPY_HOST_TO_HOST": 0,
    "ACL_MEMCPY_HOST_TO_DEVICE": 1,
    "ACL_MEMCPY_DEVICE_TO_HOST": 2,
    "ACL_MEMCPY_DEVICE_TO_DEVICE": 3,
    "ACL_MEMCPY_DEFAULT": 4,
    "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE": 5,
    "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE": 6,
    "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE": 7,
}


# Not in the facts (no call of the suite's documents returns it), but a backend whose
# stream table fills up does: rt_error_codes.h, "no stream resource".
OTHER_ERRORS = {"ACL_ERROR_RT_NO_STREAM_RESOURCE": 207008}


def test_error_values_and_names() -> None:
    for name, value in {**FACTS_ERRORS, **OTHER_ERRORS}.items():
        assert getattr(c, name) == value, name
        assert c.error_name(value) == name
    assert set(c.ERROR_NAMES.values()) == set(FACTS_ERRORS) | set(OTHER_ERRORS)
    assert c.error_name(12345) == "<unknown aclError 12345>"


def test_kinds() -> None:
    assert {k.name: k.value for k in c.MemcpyKind} == FACTS_KINDS
    assert {1, 4} == c.TO_SYMBOL_KINDS
    assert {2, 4} == c.FROM_SYMBOL_KINDS
    assert c.kind_name(4) == "ACL_MEMCPY_DEFAULT"
    assert c.kind_name(999) == "(aclrtMemcpyKind)999"


def test_other_enums() -> None:
    assert c.StreamStatus.ACL_STREAM_STATUS_COMPLETE == 0
    assert c.StreamStatus.ACL_STREAM_STATUS_NOT_READY == 1
    assert c.StreamStatus.ACL_STREAM_STATUS_RESERVED == 0xFFFF
    assert (c.ACL_HOST_REG_MAPPED, c.ACL_HOST_REG_IOMEMORY, c.ACL_HOST_REG_READONLY) == (2, 4, 8)
    assert c.ACL_HOST_REG_PINNED == 0x10000000
    assert c.SIZE_MAX == 2**64 - 1
