"""The wire codec of the agent protocol (PROTOCOL.md), derived from ``CALLS``.

A contract call travels as one request line: the command is the call's name, its
fields are the call's parameters in C order (``CALLS[name].params``) followed by one
``null_<output>`` flag for each output the contract lets a caller pass as NULL.  Its
answer carries the code and the outputs in ``CALLS[name].outputs`` order.

How a value travels follows its C type:

- strings and byte buffers (``char*``, ``const char*``, and the bytes ``data`` of
  ``write_host`` / ``read_host``) travel as the payload; a ``const char*`` that may
  be NULL is preceded by a field ``1`` (given) or ``0`` (NULL);
- pointers, handles, ``size_t`` and ``uint64_t`` are unsigned 64-bit decimals;
- ``int32_t``, ``int`` and ``aclrtMemcpyKind`` are signed 32-bit, passed on unchanged
  (out-of-enum kinds reach the backend); ``uint32_t`` is unsigned 32-bit.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import NamedTuple

from acl_conformance.adapters.base import Adapter
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.calls import Param

_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1


class ProtocolError(RuntimeError):
    """The agent rejected a request as malformed (a bug on this side, not the backend's)."""


@dataclass
class Reply:
    """One answer: the aclError code, the output fields and the raw payload."""

    code: int
    outputs: list[bytes]
    payload: bytes


def u64(value: int) -> int:
    """``(uintptr_t)value`` / ``(size_t)value`` on a 64-bit platform."""
    return int(value) & _U64


def i32(value: int) -> int:
    """``(int32_t)value``."""
    v = int(value) & _U32
    return v - (1 << 32) if v & (1 << 31) else v


def u32(value: int) -> int:
    """``(uint32_t)value``."""
    return int(value) & _U32


def _is_text(p: Param) -> bool:
    return p.ctype.replace("const ", "") == "char*"


def _is_buffer(p: Param) -> bool:
    """Bytes that travel themselves (the payload), not their address."""
    return _is_text(p) or p.name == "data"


_SIGNED_32 = ("int32_t", "int", "aclrtMemcpyKind")
_UNSIGNED_32 = ("uint32_t",)
_UNSIGNED_64 = ("size_t", "uint64_t", "aclrtStream", "aclrtEvent")


def _converter(p: Param) -> Callable[[Any], int]:
    """How one numeric argument becomes its wire field (ValueError for a C type with no
    rule)."""
    if p.ctype in _SIGNED_32:
        return i32
    if p.ctype in _UNSIGNED_32:
        return u32
    if p.ctype in _UNSIGNED_64 or p.ctype.endswith("*"):
        return u64
    raise ValueError(f"no wire encoding for {p.ctype} {p.name}")


def null_flags(name: str) -> tuple[str, ...]:
    """The ``null_<output>`` flags the contract method of ``name`` takes, in output order."""
    method = getattr(Adapter, name)
    taken = inspect.signature(method).parameters
    return tuple(f"null_{o.name}" for o in CALLS[name].outputs if f"null_{o.name}" in taken)


class Encoded(NamedTuple):
    """A call on the wire: its fields and its payload (None: no payload)."""

    fields: tuple[int, ...]
    payload: bytes | None


_Fields = tuple[tuple[int, ...], bytes | None]
"""What an encoder of :data:`ENCODE` gives: :class:`Encoded` as a plain tuple (cheaper)."""


def encode(name: str, args: Mapping[str, Any]) -> Encoded:
    """The request fields and payload of contract call ``name`` with ``args``."""
    return Encoded(*ENCODE[name](args))


def _encode_any(name: str, args: Mapping[str, Any]) -> _Fields:
    """:func:`encode` for any call: by its plan, parameter by parameter."""
    fields: list[int] = []
    payload: bytes | None = None
    for pname, how, convert in _PARAMETER_PLANS[name]:
        value = args.get(pname)
        if how == _NUMBER:
            fields.append(convert(value))
            continue
        if how == _TEXT:
            fields.append(0 if value is None else 1)
        if value is not None:
            payload = value.encode() if isinstance(value, str) else bytes(value)
    fields.extend(int(bool(args.get(flag, False))) for flag in _NULL_FLAGS[name])
    return tuple(fields), payload


def encode_values(name: str, values: Sequence[Any]) -> tuple[int, ...]:
    """The request fields of ``name``, a call whose parameters are all numbers and that
    takes no NULL flag, from its arguments in C order (``CALLS[name].params``)."""
    converters = _FAST_CONVERTERS[name]
    if len(values) != len(converters):
        raise TypeError(f"{name} takes {len(converters)} arguments, not {len(values)}")
    fields = tuple(map(_apply, converters, values))
    if NotImplemented in fields:  # an argument that is not a Python int: the slow way
        fields = tuple(map(_apply, (c for _, c in _NUMERIC_CALLS[name]), values))
    return fields


def decode(name: str, reply: Reply) -> tuple[Any, ...]:
    """``(code, *outputs)`` of contract call ``name``: what the contract method returns."""
    return DECODE[name](reply)


def _decode_any(name: str, reply: Reply) -> tuple[Any, ...]:
    """:func:`decode` for any call: by its plan, output by output."""
    out: list[Any] = [reply.code]
    numbers = iter(reply.outputs)
    for oname, how, _convert in _OUTPUT_PLANS[name]:
        if how == _TEXT:
            out.append(reply.payload.decode(errors="replace"))
        elif how == _BUFFER:
            out.append(reply.payload)
        else:
            field = next(numbers, None)
            if field is None:
                raise ProtocolError(f"{name}: the agent's answer lacks the output {oname}")
            out.append(int(field))
    return tuple(out)


_NUMBER, _TEXT, _BUFFER = 0, 1, 2
"""How a parameter travels: a numeric field, text in the payload (with a non-NULL flag
field), or raw bytes in the payload."""


def _plan(
    params: tuple[Param, ...], numbers: bool = True
) -> tuple[tuple[str, int, Callable[[Any], int]], ...]:
    """Per parameter, worked out once: its name, how it travels, and (for an argument;
    ``numbers=False`` for outputs, which come back as plain integers) its field converter."""
    return tuple(
        (p.name, _TEXT, int)
        if _is_text(p)
        else (p.name, _BUFFER, int)
        if _is_buffer(p)
        else (p.name, _NUMBER, _converter(p) if numbers else int)
        for p in params
    )


def parse_answers(buf: bytes | bytearray) -> tuple[list[tuple[int, Reply]], int]:
    """The whole answers at the start of ``buf`` and how many bytes they take (an answer
    whose payload is still on its way ends the list)."""
    answers: list[tuple[int, Reply]] = []
    pos = 0
    while True:
        nl = buf.find(b"\n", pos)
        if nl < 0:
            break
        fields = bytes(buf[pos:nl]).split()
        end = nl + 1
        payload = b""
        if len(fields) > 2 and fields[-1].startswith(b"#"):
            n = int(fields.pop()[1:])
            if len(buf) - end < n:
                break
            payload = bytes(buf[end : end + n])
            end += n
        pos = end
        if len(fields) >= 2:
            answers.append((int(fields[0]), Reply(int(fields[1]), fields[2:], payload)))
    return answers, pos


WIRE_CALLS: tuple[str, ...] = tuple(n for n in CALLS if hasattr(Adapter, n))
"""The contract calls the agent answers as commands of the same name."""

_NULL_FLAGS: dict[str, tuple[str, ...]] = {n: null_flags(n) for n in WIRE_CALLS}
_PARAMETER_PLANS = {n: _plan(CALLS[n].params) for n in WIRE_CALLS}
"""Built at import: a C type of the table with no wire rule fails here, not mid-run."""
_OUTPUT_PLANS = {n: _plan(CALLS[n].outputs, numbers=False) for n in WIRE_CALLS}

_NUMERIC_CALLS: dict[str, tuple[tuple[str, Callable[[Any], int]], ...]] = {
    n: tuple((p, c) for p, _, c in plan)
    for n, plan in _PARAMETER_PLANS.items()
    if not _NULL_FLAGS[n] and all(how == _NUMBER for _, how, _ in plan)
}
"""The calls whose arguments are all numeric fields: name -> (parameter, converter)."""


_apply: Callable[[Callable[[Any], int], Any], int] = getattr(
    operator, "call", lambda convert, value: convert(value)
)
"""``operator.call`` (Python 3.11 on): ``map`` then makes no Python frame of its own."""


def _fast(convert: Callable[[Any], int]) -> Callable[[Any], Any]:
    """``u64`` as ``int.__and__`` of the mask: no Python frame, and NotImplemented (not an
    error) for an argument that is not an ``int``, which :func:`encode_values` retries."""
    return _U64.__and__ if convert is u64 else convert


_FAST_CONVERTERS = {n: tuple(_fast(c) for _, c in cs) for n, cs in _NUMERIC_CALLS.items()}
"""Per call of :data:`_NUMERIC_CALLS`: its converters, the cheapest form of each."""


def _encoder(name: str) -> Callable[[Mapping[str, Any]], _Fields]:
    """:func:`encode` for one call; the short forms are for the calls whose parameters are
    all numbers, the ones the suite makes most (every call of a run pays for this)."""
    if name not in _NUMERIC_CALLS:
        return functools.partial(_encode_any, name)
    names = tuple(p for p, _ in _NUMERIC_CALLS[name])
    if not names:
        empty: _Fields = ((), None)
        return lambda args: empty
    if len(names) == 1:
        ((only, convert),) = _NUMERIC_CALLS[name]
        return lambda args: ((convert(args[only]),), None)
    return lambda args: (encode_values(name, [args[n] for n in names]), None)


def _decoder(name: str) -> Callable[[Reply], tuple[Any, ...]]:
    """:func:`decode` for one call; short forms for no output and for one number."""
    plan = _OUTPUT_PLANS[name]
    if not plan:
        return lambda reply: (reply.code,)
    if len(plan) == 1 and plan[0][1] == _NUMBER:
        general = functools.partial(_decode_any, name)
        return lambda r: (r.code, int(r.outputs[0])) if r.outputs else general(r)
    return functools.partial(_decode_any, name)


ENCODE = {n: _encoder(n) for n in WIRE_CALLS}
"""Per call: its encoder, worked out once from its plan."""
DECODE = {n: _decoder(n) for n in WIRE_CALLS}
"""Per call: its decoder, worked out once from its plan."""
