"""The rules of the copies: aclrtMemcpyToSymbol[Async] and aclrtMemcpyFromSymbol[Async].

Each rule lists the call's failed checks in the order the open-source CANN
runtime makes them (cann-runtime-facts.md sections 2 and 4); the profile folds
them into the allowed answers (profiles.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

from . import effects as fx
from .constants import ACL_ERROR_INVALID_PARAM
from .constants import ACL_ERROR_RT_STREAM_CONTEXT
from .constants import FROM_SYMBOL_KINDS
from .constants import TO_SYMBOL_KINDS
from .constants import MemcpyKind
from .constants import kind_name
from .outcome import AllowedAnswers
from .requirement_ids import BOUNDS_END_EXACT
from .requirement_ids import BOUNDS_OVERFLOW
from .requirement_ids import BOUNDS_PAST_END
from .requirement_ids import COUNT_ZERO
from .requirement_ids import DEVICE_CURRENT
from .requirement_ids import FROMSYMBOL_BYTES
from .requirement_ids import FROMSYMBOL_DSTMAX
from .requirement_ids import FROMSYMBOL_KINDS
from .requirement_ids import KIND_ACCEPTED
from .requirement_ids import KIND_OUT_OF_ENUM
from .requirement_ids import KIND_REJECTED
from .requirement_ids import SRC_NULL
from .requirement_ids import STREAM_FOREIGN_DEVICE
from .requirement_ids import STREAM_NULL_DEFAULT
from .requirement_ids import SYMBOL_INTERIOR
from .requirement_ids import SYMBOL_NULL
from .requirement_ids import SYMBOL_UNREGISTERED
from .requirement_ids import TOSYMBOL_SYNC
from .runtime_checks import IMPOSSIBLE
from .runtime_checks import MAY
from .runtime_checks import MUST
from .runtime_checks import Folding
from .runtime_checks import Rule
from .runtime_checks import RuntimeCheck
from .runtime_checks import check_bounds
from .runtime_checks import current_device
from .runtime_checks import foreign
from .runtime_checks import lookup_symbol
from .runtime_checks import resolve_stream
from .runtime_checks import shadowed
from .runtime_checks import succeeds
from .runtime_checks import undefined_memory
from .state import Stream
from .state import World


def _foreign_stream(
    target: Stream | None, device: int, must_check: bool, checks: list[RuntimeCheck]
) -> None:
    """Adds STREAM-FOREIGN-DEVICE where ``target`` belongs to another device than the
    current one: spec may refuse the copy; cann must where it surely takes the pinned
    path (``must_check``), and may elsewhere."""
    if foreign(target, device):
        assert target is not None
        checks.append(
            RuntimeCheck(
                STREAM_FOREIGN_DEVICE,
                f"{target.name} belongs to device {target.device}, device {device} is current",
                ACL_ERROR_RT_STREAM_CONTEXT,
                MAY,
                MUST if must_check else MAY,
            )
        )


def rule_memcpy_to_symbol_async(
    profile: Folding,
    world: World,
    thread: int,
    symbol: int,
    src: int,
    count: int,
    offset: int,
    kind: int,
    stream: int | None,
) -> AllowedAnswers:
    """The allowed answers of aclrtMemcpyToSymbolAsync, and (``stream`` None) of
    aclrtMemcpyToSymbol."""
    is_async = stream is not None

    def req(r: str) -> str:
        return r if is_async else TOSYMBOL_SYNC

    if count == 0:
        return profile.count_zero(req(COUNT_ZERO))
    checks: list[RuntimeCheck] = []
    if symbol == 0:
        checks.append(RuntimeCheck(req(SYMBOL_NULL), "symbol is NULL", ACL_ERROR_INVALID_PARAM))
    if src == 0:
        checks.append(RuntimeCheck(req(SRC_NULL), "src is NULL", ACL_ERROR_INVALID_PARAM))
    if kind not in TO_SYMBOL_KINDS:
        in_enum = any(kind == k.value for k in MemcpyKind)
        checks.append(
            RuntimeCheck(
                req(KIND_REJECTED if in_enum else KIND_OUT_OF_ENUM),
                f"kind is {kind_name(kind)}; only ACL_MEMCPY_HOST_TO_DEVICE and ACL_MEMCPY_DEFAULT are supported",
                ACL_ERROR_INVALID_PARAM,
            )
        )
    device = current_device(world, thread, checks, req(DEVICE_CURRENT))
    sym = lookup_symbol(world, symbol, checks, req(SYMBOL_UNREGISTERED), req(SYMBOL_INTERIOR))
    check_bounds(sym, offset, count, checks, req(BOUNDS_OVERFLOW), req(BOUNDS_PAST_END))
    target = resolve_stream(world, stream, device, checks) if stream is not None else None
    rng = world.host_range(src, count) if src else None
    undefined_memory(rng, "src", checks)
    mode, either = "sync", False
    if is_async and rng is not None and not rng.known:
        mode = "pinned"  # unknown memory: the weakest claim, any time up to a sync
    elif is_async and rng is not None:
        pinned, either = profile.pinned_path(rng)
        mode = "pinned" if pinned else "pageable"
        _foreign_stream(target, device, pinned and not either, checks)
    # Checks this call passes that a backend could get wrong and reject it for, with a
    # code of their own: the end-exact bound, the NULL stream.  A rejection with the
    # wrong code may be theirs as well as the failing check's.
    shadow = [
        *([STREAM_NULL_DEFAULT] if stream == 0 and world.caps.default_stream else []),
        *([req(BOUNDS_END_EXACT)] if sym is not None and offset + count == sym.size else []),
    ]
    if sym is None or (is_async and target is None) or rng is None:
        return shadowed(profile.fold(checks, IMPOSSIBLE), shadow)
    # What a refusal of this valid copy breaks: the first is cited, the others are
    # kept so that a report can tell an ambiguous failure from a clear one.
    candidates = [
        *([TOSYMBOL_SYNC] if not is_async else []),
        *([STREAM_NULL_DEFAULT] if stream == 0 else []),
        *shadow,
    ]
    success_req, *also = dict.fromkeys(candidates or [KIND_ACCEPTED])
    partly = either or (rng.any_pinned and not rng.all_pinned)
    effect = fx.CopyToSymbol(
        sym, device, offset, count, rng.buffer, rng.offset, mode, target, partly
    )
    return shadowed(
        succeeds(
            profile,
            checks,
            effect,
            success_req,
            f"a valid {mode} copy into {sym.name} succeeds",
            tuple(also),
        ),
        shadow,
    )


def rule_memcpy_from_symbol_async(
    profile: Folding,
    world: World,
    thread: int,
    dst: int,
    dst_max: int,
    symbol: int,
    count: int,
    offset: int,
    kind: int,
    stream: int | None,
) -> AllowedAnswers:
    """The allowed answers of aclrtMemcpyFromSymbolAsync, and (``stream`` None) of
    aclrtMemcpyFromSymbol."""
    r = FROMSYMBOL_BYTES
    if count == 0:
        return profile.count_zero(r)
    checks: list[RuntimeCheck] = []
    if symbol == 0:
        checks.append(RuntimeCheck(r, "symbol is NULL", ACL_ERROR_INVALID_PARAM))
    if dst == 0:
        checks.append(RuntimeCheck(r, "dst is NULL", ACL_ERROR_INVALID_PARAM))
    if count > dst_max:
        checks.append(
            RuntimeCheck(
                FROMSYMBOL_DSTMAX,
                f"count {count} > dstMax {dst_max}",
                ACL_ERROR_INVALID_PARAM,
            )
        )
    if kind not in FROM_SYMBOL_KINDS:
        checks.append(
            RuntimeCheck(
                FROMSYMBOL_KINDS,
                f"kind is {kind_name(kind)}; only ACL_MEMCPY_DEVICE_TO_HOST and ACL_MEMCPY_DEFAULT are supported",
                ACL_ERROR_INVALID_PARAM,
            )
        )
    device = current_device(world, thread, checks)
    sym = lookup_symbol(world, symbol, checks, r, r)
    check_bounds(sym, offset, count, checks, r, r)
    target = resolve_stream(world, stream, device, checks) if stream is not None else None
    rng = world.host_range(dst, count) if dst else None
    undefined_memory(rng, "dst", checks)
    mode = "sync"
    if stream is not None and rng is not None and rng.known:
        pinned, either = profile.pinned_path(rng)
        mode = "pinned" if pinned else "pageable"
        _foreign_stream(target, device, pinned and not either, checks)
    if sym is None or (stream is not None and target is None) or rng is None:
        return profile.fold(checks, IMPOSSIBLE)
    effect = fx.ReadSymbol(sym, device, offset, count, rng.buffer, rng.offset, mode, target)
    # A refusal of this valid read breaks the read; at dstMax's edges (exactly count,
    # below offset + count, as if the offset counted, or a value that looks small once
    # cut to 32 bits) it is dstMax that is misread.
    edge = dst_max == count or dst_max < offset + count or dst_max >= 2**31
    success_req, *also = [FROMSYMBOL_DSTMAX, r] if edge else [r]
    return succeeds(
        profile, checks, effect, success_req, f"a valid read of {sym.name} succeeds", tuple(also)
    )


def counts_offset_in_dst_max(name: str, args: Mapping[str, Any]) -> bool:
    """Is ``name(**args)`` a FromSymbol read whose count fits dstMax but whose offset +
    count does not?  A refusal with dstMax's code there says the backend bounded offset +
    count by dstMax (the offset is the variable's, not the destination's)."""
    if name not in ("memcpy_from_symbol", "memcpy_from_symbol_async"):
        return False
    count, offset, dst_max = (int(args.get(k) or 0) for k in ("count", "offset", "dst_max"))
    return 0 < count <= dst_max < offset + count


RULES: Mapping[str, Rule] = MappingProxyType(
    {
        "memcpy_to_symbol_async": rule_memcpy_to_symbol_async,
        # The synchronous copies are the asynchronous ones without a stream.
        "memcpy_to_symbol": partial(rule_memcpy_to_symbol_async, stream=None),
        "memcpy_from_symbol": partial(rule_memcpy_from_symbol_async, stream=None),
        "memcpy_from_symbol_async": rule_memcpy_from_symbol_async,
    }
)
"""Call name -> rule, for the calls of this module."""
