"""The rules of host memory, its registration and the symbol queries.

aclrtMallocHost, aclrtFreeHost, malloc and free, aclrtHostRegisterV2,
aclrtHostUnregister, the suite's host reads and writes (memcpy), and
aclrtGetSymbolAddress, aclrtGetSymbolSize.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from . import effects as fx
from .constants import ACL_ERROR_INVALID_PARAM
from .constants import ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED
from .constants import ACL_HOST_REG_PINNED
from .constants import HOST_REGISTER_ALIGNMENT
from .outcome import ANY_ERROR
from .outcome import SUCCESS
from .outcome import AllowedAnswers
from .outcome import Alternative
from .outcome import Codes
from .requirement_ids import GETSYMBOL_ADDRESS
from .requirement_ids import GETSYMBOL_SIZE
from .requirement_ids import HOST_MEMORY_CALLS
from .requirement_ids import PINNED_REGISTERED
from .runtime_checks import IMPOSSIBLE
from .runtime_checks import MAY
from .runtime_checks import MUST
from .runtime_checks import Folding
from .runtime_checks import Rule
from .runtime_checks import RuntimeCheck
from .runtime_checks import current_device
from .runtime_checks import lookup_symbol
from .runtime_checks import succeeds
from .state import Symbol
from .state import World


# -- symbol queries -------------------------------------------------------
def _symbol_query(
    world: World, thread: int, symbol: int, null_out: bool, req: str, what: str
) -> tuple[list[RuntimeCheck], Symbol | None, int]:
    """The checks shared by the symbol queries: (failed checks, the variable, the device)."""
    checks: list[RuntimeCheck] = []
    if symbol == 0:
        checks.append(RuntimeCheck(req, "symbol is NULL", ACL_ERROR_INVALID_PARAM))
    if null_out:
        checks.append(
            RuntimeCheck(req, f"the {what} output pointer is NULL", ACL_ERROR_INVALID_PARAM)
        )
    device = current_device(world, thread, checks, req)
    sym = lookup_symbol(world, symbol, checks, req, req)
    return checks, sym, device


def rule_get_symbol_address(
    profile: Folding, world: World, thread: int, symbol: int, null_dev_ptr: bool = False
) -> AllowedAnswers:
    """The allowed answers of aclrtGetSymbolAddress."""
    checks, sym, device = _symbol_query(
        world, thread, symbol, null_dev_ptr, GETSYMBOL_ADDRESS, "devPtr"
    )
    if sym is None or null_dev_ptr:
        return profile.fold(checks, IMPOSSIBLE)
    return succeeds(
        profile,
        checks,
        fx.ReportSymbolAddress(sym, device),
        GETSYMBOL_ADDRESS,
        "a registered variable has an address",
    )


def rule_get_symbol_size(
    profile: Folding, world: World, thread: int, symbol: int, null_size: bool = False
) -> AllowedAnswers:
    """The allowed answers of aclrtGetSymbolSize."""
    checks, sym, _device = _symbol_query(world, thread, symbol, null_size, GETSYMBOL_SIZE, "size")
    if sym is None or null_size:
        return profile.fold(checks, IMPOSSIBLE)
    return succeeds(
        profile,
        checks,
        fx.ReportSymbolSize(sym),
        GETSYMBOL_SIZE,
        "a registered variable has a size",
    )


# -- host memory and its registration ---------------------------------------
def rule_malloc_host(
    profile: Folding, world: World, thread: int, size: int, null_host_ptr: bool = False
) -> AllowedAnswers:
    """The allowed answers of aclrtMallocHost."""
    checks: list[RuntimeCheck] = []
    if null_host_ptr:
        checks.append(
            RuntimeCheck(
                HOST_MEMORY_CALLS,
                "the hostPtr output pointer is NULL",
                ACL_ERROR_INVALID_PARAM,
            )
        )
    if size == 0:
        checks.append(
            RuntimeCheck(HOST_MEMORY_CALLS, "size is 0", ACL_ERROR_INVALID_PARAM, MAY, MUST)
        )
        return succeeds(
            profile, checks, None, HOST_MEMORY_CALLS, "size 0 may give a pointer or NULL"
        )
    return succeeds(
        profile,
        checks,
        fx.NewHostBuffer(size, True),
        HOST_MEMORY_CALLS,
        "allocating page-locked memory succeeds",
    )


def rule_free_host(profile: Folding, world: World, thread: int, host_ptr: int) -> AllowedAnswers:
    """The allowed answers of aclrtFreeHost."""
    buf = world.buffers.get(host_ptr)
    if buf is None or not buf.alive or not buf.pinned:
        return AllowedAnswers(
            (
                Alternative(
                    ANY_ERROR,
                    None,
                    HOST_MEMORY_CALLS,
                    "host_ptr is not live aclrtMallocHost memory",
                ),
            )
        )
    return AllowedAnswers(
        (
            Alternative(
                SUCCESS,
                fx.FreeHostBuffer(buf),
                HOST_MEMORY_CALLS,
                "freeing page-locked memory succeeds",
            ),
        )
    )


def rule_malloc_pageable(profile: Folding, world: World, thread: int, size: int) -> AllowedAnswers:
    """The allowed answers of the suite's malloc (malloc_pageable)."""
    return AllowedAnswers((Alternative(SUCCESS, fx.NewHostBuffer(size, False), None, "malloc"),))


def rule_free_pageable(profile: Folding, world: World, thread: int, ptr: int) -> AllowedAnswers:
    """The allowed answers of the suite's free (free_pageable)."""
    buf = world.buffers.get(ptr)
    if buf is None or not buf.alive or buf.pinned:
        return AllowedAnswers(
            (Alternative(ANY_ERROR, None, None, "ptr is not live malloc memory"),)
        )
    return AllowedAnswers((Alternative(SUCCESS, fx.FreeHostBuffer(buf), None, "free"),))


def rule_host_register(
    profile: Folding,
    world: World,
    thread: int,
    ptr: int,
    size: int,
    flag: int = ACL_HOST_REG_PINNED,
) -> AllowedAnswers:
    """The allowed answers of aclrtHostRegisterV2."""
    req = HOST_MEMORY_CALLS
    checks: list[RuntimeCheck] = []
    if ptr == 0:
        checks.append(RuntimeCheck(req, "ptr is NULL", ACL_ERROR_INVALID_PARAM))
        return profile.fold(checks, IMPOSSIBLE)
    if size == 0:
        checks.append(RuntimeCheck(req, "size is 0", None))
        return profile.fold(checks, IMPOSSIBLE)
    rng = world.host_range(ptr, size)
    if not rng.known:
        checks.append(
            RuntimeCheck(None, "the range is not host memory the suite allocated", None, MAY, MAY)
        )
    elif rng.buffer is not None and rng.buffer.pinned:
        checks.append(
            RuntimeCheck(
                req,
                f"{rng.buffer.name} is already page-locked (aclrtMallocHost)",
                None,
                MAY,
                MUST,
            )
        )
    if ptr % HOST_REGISTER_ALIGNMENT:
        checks.append(
            RuntimeCheck(req, f"ptr is not {HOST_REGISTER_ALIGNMENT}-byte aligned", None, MAY, MUST)
        )
    overlapping = world.overlapping_registrations(ptr, size)
    if any(not r.stale for r in overlapping):
        checks.append(RuntimeCheck(req, "the range overlaps a registered range", None, MAY, MUST))
    elif overlapping:
        checks.append(
            RuntimeCheck(
                req,
                "the range overlaps a registration made on memory since freed (it may "
                "or may not have outlived the free)",
                None,
                MAY,
                MAY,
            )
        )
    if flag != ACL_HOST_REG_PINNED:
        checks.append(
            RuntimeCheck(None, f"flag 0x{flag:x} is not ACL_HOST_REG_PINNED", None, MAY, MAY)
        )
    effect = fx.RegisterHost(ptr, size)
    if not overlapping and world.once_registered(ptr, size):
        # The backend registered memory before; refusing a range that overlaps only ranges
        # unregistered since treats them as still registered: the call's own matter.
        why = "nothing registered overlaps the range (the ranges it overlaps were unregistered)"
        return succeeds(profile, checks, effect, req, why, (PINNED_REGISTERED,))
    why = "registering pageable memory page-locks it"
    return succeeds(profile, checks, effect, PINNED_REGISTERED, why)


def rule_host_unregister(profile: Folding, world: World, thread: int, ptr: int) -> AllowedAnswers:
    """The allowed answers of aclrtHostUnregister."""
    req = HOST_MEMORY_CALLS
    checks: list[RuntimeCheck] = []
    if ptr == 0:
        checks.append(RuntimeCheck(req, "ptr is NULL", ACL_ERROR_INVALID_PARAM))
        return profile.fold(checks, IMPOSSIBLE)
    reg = world.registered.get(ptr)
    if reg is None:
        checks.append(
            RuntimeCheck(
                req,
                "ptr is not the start of a registered range",
                ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED,
            )
        )
        return profile.fold(checks, IMPOSSIBLE)
    if reg.stale:
        checks.append(
            RuntimeCheck(
                req,
                "the registration was made on memory since freed (it may or may not have "
                "outlived the free)",
                ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED,
                MAY,
                MAY,
            )
        )
    return succeeds(
        profile,
        checks,
        fx.UnregisterHost(ptr),
        PINNED_REGISTERED,
        "unregistering makes the memory pageable again",
    )


def rule_write_host(
    profile: Folding, world: World, thread: int, dst: int, data: bytes
) -> AllowedAnswers:
    """The allowed answers of the suite's memcpy (write_host)."""
    rng = world.host_range(dst, len(data))
    if rng.buffer is None:
        return AllowedAnswers(
            (Alternative(Codes(None), None, None, "dst is not host memory the suite allocated"),)
        )
    return AllowedAnswers(
        (
            Alternative(
                SUCCESS, fx.WriteHost(rng.buffer, rng.offset, bytes(data)), None, "a host write"
            ),
        )
    )


def rule_read_host(
    profile: Folding, world: World, thread: int, src: int, count: int
) -> AllowedAnswers:
    """The allowed answers of the suite's memcpy (read_host)."""
    return AllowedAnswers((Alternative(SUCCESS, fx.Nothing(), None, "a host read"),))


RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "get_symbol_address": rule_get_symbol_address,
        "get_symbol_size": rule_get_symbol_size,
        "malloc_host": rule_malloc_host,
        "free_host": rule_free_host,
        "malloc_pageable": rule_malloc_pageable,
        "free_pageable": rule_free_pageable,
        "host_register": rule_host_register,
        "host_unregister": rule_host_unregister,
        "write_host": rule_write_host,
        "read_host": rule_read_host,
    }
)
"""Call name -> rule, for the calls of this module."""
