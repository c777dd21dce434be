"""The calls of the contract: snake_case name, the C function, its parameters.

This table is the common language of traces, failure messages and C
reproducers: each entry names the ACL function a contract call stands for and
the C types of its parameters, in C order.  Outputs (the ``T*`` out-parameters
of C) are listed apart: on the contract they are returned, not passed.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .constants import SIZE_MAX
from .constants import kind_name


@dataclass(frozen=True)
class Param:
    name: str
    ctype: str


@dataclass(frozen=True)
class CallSpec:
    name: str
    c_name: str
    params: tuple[Param, ...]
    outputs: tuple[Param, ...] = ()
    acl: bool = True
    """False for the suite's own helpers (malloc, memcpy, the gate) that are not ACL calls."""
    outputs_first: bool = False
    """True where C puts the out-parameter first (aclrtMallocHost(void** hostPtr, size_t))."""


def _p(spec: str) -> tuple[Param, ...]:
    out = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        ctype, name = part.rsplit(" ", 1)
        out.append(Param(name, ctype))
    return tuple(out)


_CALLS = [
    CallSpec("init", "aclInit", _p("const char* config_path")),
    CallSpec("finalize", "aclFinalize", ()),
    CallSpec("set_device", "aclrtSetDevice", _p("int32_t device_id")),
    CallSpec("get_device", "aclrtGetDevice", (), _p("int32_t device_id")),
    CallSpec("reset_device", "aclrtResetDevice", _p("int32_t device_id")),
    CallSpec("get_device_count", "aclrtGetDeviceCount", (), _p("uint32_t count")),
    CallSpec("synchronize_device", "aclrtSynchronizeDevice", ()),
    CallSpec("create_stream", "aclrtCreateStream", (), _p("aclrtStream stream")),
    CallSpec("destroy_stream", "aclrtDestroyStream", _p("aclrtStream stream")),
    CallSpec("synchronize_stream", "aclrtSynchronizeStream", _p("aclrtStream stream")),
    CallSpec(
        "synchronize_stream_with_timeout",
        "aclrtSynchronizeStreamWithTimeout",
        _p("aclrtStream stream, int32_t timeout"),
    ),
    CallSpec(
        "stream_query", "aclrtStreamQuery", _p("aclrtStream stream"), _p("aclrtStreamStatus status")
    ),
    CallSpec("create_event", "aclrtCreateEvent", (), _p("aclrtEvent event")),
    CallSpec("record_event", "aclrtRecordEvent", _p("aclrtEvent event, aclrtStream stream")),
    CallSpec(
        "stream_wait_event", "aclrtStreamWaitEvent", _p("aclrtStream stream, aclrtEvent event")
    ),
    CallSpec("synchronize_event", "aclrtSynchronizeEvent", _p("aclrtEvent event")),
    CallSpec("destroy_event", "aclrtDestroyEvent", _p("aclrtEvent event")),
    CallSpec(
        "malloc_host",
        "aclrtMallocHost",
        _p("size_t size"),
        _p("void* host_ptr"),
        outputs_first=True,
    ),
    CallSpec("free_host", "aclrtFreeHost", _p("void* host_ptr")),
    CallSpec("malloc_pageable", "malloc", _p("size_t size"), _p("void* ptr"), acl=False),
    CallSpec("free_pageable", "free", _p("void* ptr"), acl=False),
    CallSpec("host_register", "aclrtHostRegisterV2", _p("void* ptr, uint64_t size, uint32_t flag")),
    CallSpec("host_unregister", "aclrtHostUnregister", _p("void* ptr")),
    CallSpec("write_host", "memcpy", _p("void* dst, const void* data"), acl=False),
    CallSpec(
        "read_host", "memcpy", _p("const void* src, size_t count"), _p("void* data"), acl=False
    ),
    CallSpec(
        "get_symbol_address", "aclrtGetSymbolAddress", _p("const void* symbol"), _p("void* dev_ptr")
    ),
    CallSpec("get_symbol_size", "aclrtGetSymbolSize", _p("const void* symbol"), _p("size_t size")),
    CallSpec(
        "memcpy_to_symbol_async",
        "aclrtMemcpyToSymbolAsync",
        _p(
            "const void* symbol, const void* src, size_t count, size_t offset, "
            "aclrtMemcpyKind kind, aclrtStream stream"
        ),
    ),
    CallSpec(
        "memcpy_to_symbol",
        "aclrtMemcpyToSymbol",
        _p(
            "const void* symbol, const void* src, size_t count, size_t offset, aclrtMemcpyKind kind"
        ),
    ),
    CallSpec(
        "memcpy_from_symbol",
        "aclrtMemcpyFromSymbol",
        _p(
            "void* dst, size_t dst_max, const void* symbol, size_t count, size_t offset, "
            "aclrtMemcpyKind kind"
        ),
    ),
    CallSpec(
        "memcpy_from_symbol_async",
        "aclrtMemcpyFromSymbolAsync",
        _p(
            "void* dst, size_t dst_max, const void* symbol, size_t count, size_t offset, "
            "aclrtMemcpyKind kind, aclrtStream stream"
        ),
    ),
    CallSpec("launch_gate", "aclrtLaunchHostFunc", _p("aclrtStream stream"), _p("int gate")),
    CallSpec("open_gate", "gate_open", _p("int gate"), acl=False),
    CallSpec("get_version_str", "aclsysGetVersionStr", (), _p("char* version")),
]

CALLS: Mapping[str, CallSpec] = MappingProxyType({c.name: c for c in _CALLS})


def output_names(name: str) -> tuple[str, ...]:
    """The names of call ``name``'s outputs, in the order the contract returns them after
    the code (``stream_query`` -> ``("status",)``)."""
    return tuple(p.name for p in CALLS[name].outputs)


_SIZE_NAMES = {SIZE_MAX: "SIZE_MAX"}

NameOf = Callable[[str, int], str | None]
"""``name_of(ctype, value)``: the C name of a handle or address, None if it has none."""

Receive = Callable[[Param], str]
"""``receive(output)``: the C expression an out-parameter is received into."""

_HANDLE_TYPES = ("aclrtStream", "aclrtEvent")


def _exact_int(ctype: str, value: int) -> str:
    """An integer literal of C type ``ctype`` that a compiler takes without a warning."""
    if ctype == "size_t":
        if value in _SIZE_NAMES:
            return _SIZE_NAMES[value]
        if value > SIZE_MAX - 4096:
            return f"(SIZE_MAX - {SIZE_MAX - value})"
        return f"(size_t){value}ULL"
    if ctype == "uint64_t":
        return f"{value}ULL"
    if ctype == "uint32_t":
        return f"{value}U"
    return str(value)


def render_value(param: Param, value: Any, name_of: NameOf, exact: bool = False) -> str:
    """One argument in C form; ``name_of(ctype, value)`` may name handles and addresses.

    ``exact``: spelled to compile with its exact value and type (the literals of a C
    program) rather than to be read (failure messages).
    """
    if value is None:
        return "NULL"
    if param.ctype == "aclrtMemcpyKind":
        spelled = kind_name(int(value))
        if exact and spelled.startswith("("):  # a cast: one operand even when negative
            return f"(aclrtMemcpyKind)({int(value)})"
        return spelled
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        more = "..." if len(data) > 16 else ""
        return f"<{len(data)} bytes {data[:16].hex()}{more}>"
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, int):
        if param.ctype.endswith("*") or param.ctype in _HANDLE_TYPES:
            if value == 0:
                return "NULL"
            named = name_of(param.ctype, value)
            if named is not None:
                return named
            if exact:
                return f"(void *)(uintptr_t)0x{value:x}ULL"
            return f"({param.ctype})0x{value:x}"
        if exact:
            return _exact_int(param.ctype, value)
        if param.ctype in ("size_t", "uint64_t"):
            if value in _SIZE_NAMES:
                return _SIZE_NAMES[value]
            if value > SIZE_MAX - 4096:
                return f"SIZE_MAX - {SIZE_MAX - value}"
        return str(value)
    return repr(value)


def render_call(
    name: str,
    args: Mapping[str, Any],
    name_of: NameOf | None = None,
    *,
    receive: Receive | None = None,
    exact: bool = False,
) -> str:
    """The call as a line of C, e.g. ``aclrtMemcpyToSymbolAsync(&g_u32, buf0+4, 4, 0, ...)``.

    The one spelling of every call's C signature: failure messages use it as is, C
    reproducers with ``exact`` literals and ``receive`` saying where each out-parameter
    goes (``&<output name>`` by default; NULL where the call passed NULL).
    """
    spec = CALLS[name]
    namer = name_of or (lambda _ctype, _value: None)
    parts = [render_value(p, args.get(p.name), namer, exact) for p in spec.params]
    for out in spec.outputs:
        if args.get(f"null_{out.name}"):
            parts.append("NULL")
        else:
            parts.append(receive(out) if receive is not None else f"&{out.name}")
    if spec.outputs_first:
        parts = parts[len(spec.params) :] + parts[: len(spec.params)]
    return f"{spec.c_name}({', '.join(parts)})"
