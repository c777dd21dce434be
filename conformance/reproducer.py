"""``acl-conformance reproducer TRACE -o out.c``: a failing trace as a standalone C program.

The program a vendor compiles against their runtime: ``aclInit``, the fixture
variables prepared with the contents the recorded run started from, every
recorded call in order with a check of its return code against what the
profile allows (and, after each synchronous read of a variable, a check of
every byte against the values the model allows there), then ``aclFinalize``.
Each mismatch is printed with the call in C form; the exit status is the
number of mismatches (capped at 100), 0 when the failure does not reproduce.

What is allowed at each step is computed here, by running the model over the
recorded calls and answers: the checks are those of the recorded history.
Calls the recorded run made from several host threads are made from one thread,
in the recorded order (a legal interleaving, not necessarily the failing one).
Bytes of asynchronous reads into page-locked memory are not checked.

Build (see the README): against CANN with its ASC toolchain (the variables are
``__gm__``, in the file with ``main``, as CANN documents); against any other
library that exports the ACL C functions with the system compiler and
``-DACL_CONFORMANCE_REGISTER_VARIABLES``, which declares the variables to the
library through ``aclConformanceRegisterVariable``.

The C helpers every program starts with (the checks, the gates) are in
``reproducer_prelude.c`` next to this module, copied verbatim into each program.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from acl_conformance import __version__
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl.constants import SIZE_MAX, MemcpyKind
from acl_conformance.reference_impl.outcome import Outcome
from acl_conformance.reference_impl.state import Capabilities as ModelCapabilities

from .trace import Call, Trace

EMBED_LIMIT = 8 << 20
"""Bytes of data (sources, expected values, starting contents) one program may embed."""

TIMER_MS = 5
"""Milliseconds after which a gate opened by a timer in the recorded run is opened."""


class ReproducerError(Exception):
    """The trace cannot be turned into a program; the message is one line."""


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _bytes_literal(data: bytes) -> str:
    """A C initializer list, 24 bytes a line."""
    rows = []
    for i in range(0, len(data), 24):
        rows.append("    " + ", ".join(f"0x{b:02x}" for b in data[i : i + 24]))
    return "{\n" + ",\n".join(rows) + "\n}"


def _pattern(index: int, size: int) -> bytes:
    """The fixture pattern every bundled backend starts from (byte i of variable k)."""
    i = np.arange(size, dtype=np.int64)
    return ((index * 37 + i * 11 + 0x5A) & 0xFF).astype(np.uint8).tobytes()


@dataclass
class _Names:
    """C expressions for the recorded run's handles and addresses."""

    fixtures: list[dict[str, Any]]
    invalid: int | None
    buffers: dict[int, tuple[str, int]] = field(default_factory=dict)
    handles: dict[tuple[str, int], str] = field(default_factory=dict)
    decls: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def new(self, prefix: str, ctype: str, init: str = "NULL") -> str:
        n = self.counts.get(prefix, 0)
        self.counts[prefix] = n + 1
        name = f"{prefix}{n}"
        self.decls.append(f"static {ctype} {name} = {init};")
        return name

    def pointer(self, value: int) -> str:
        if value == 0:
            return "NULL"
        for f in self.fixtures:
            base, size = int(f["address"]), int(f["size"])
            if base <= value < base + size:
                k = value - base
                return f"&{f['name']}" if k == 0 else f"((const char *)&{f['name']} + {k})"
        for base, (name, size) in self.buffers.items():
            if base <= value < base + max(size, 1):
                k = value - base
                return name if k == 0 else f"({name} + {k})"
        if self.invalid is not None and value == self.invalid:
            return "(void *)garbage"
        return f"(void *)(uintptr_t)0x{value:x}ULL"

    def handle(self, kind: str, value: int) -> str:
        if value == 0:
            return "NULL"
        if self.invalid is not None and value == self.invalid:
            return "(void *)garbage"
        name = self.handles.get((kind, value))
        if name is not None:
            return name
        return f"(void *)(uintptr_t)0x{value:x}ULL"


def _size(value: int) -> str:
    if value == SIZE_MAX:
        return "SIZE_MAX"
    if value > SIZE_MAX - 4096:
        return f"(SIZE_MAX - {SIZE_MAX - value})"
    return f"(size_t){value}ULL"


def _kind(value: int) -> str:
    try:
        return MemcpyKind(value).name
    except ValueError:
        return f"(aclrtMemcpyKind)({value})"


def _allowed(outcome: Outcome) -> tuple[list[int], bool]:
    """(explicit codes, whether any non-zero code is allowed)."""
    codes: set[int] = set()
    any_error = False
    for alt in outcome.alternatives:
        if alt.codes.values is None:
            any_error = True
        else:
            codes |= set(alt.codes.values)
    return sorted(codes), any_error


class _Program:
    """The C program being written, step by step."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.names = _Names(trace.fixtures, trace.invalid_handle)
        self.data: list[str] = []
        self.body: list[str] = []
        self.embedded = 0
        self.n_data = 0

    def embed(self, data: bytes, what: str) -> str:
        self.embedded += len(data)
        if self.embedded > EMBED_LIMIT:
            raise ReproducerError(
                f"trace {self.trace.path}: more than {EMBED_LIMIT >> 20} MiB of data to embed "
                f"(at {what}); replay it instead (acl-conformance replay)"
            )
        name = f"data{self.n_data}"
        self.n_data += 1
        self.data.append(
            f"static const unsigned char {name}[{len(data)}] = {_bytes_literal(data)};"
        )
        return name

    def check_code(self, label: str, outcome: Outcome) -> None:
        codes, any_error = _allowed(outcome)
        arr = "{" + ", ".join(str(c) for c in codes) + "}" if codes else "{0}"
        self.body.append(
            f"    {{ static const aclError ok[] = {arr}; "
            f"check_code({_c_string(label)}, ret, ok, {len(codes)}, {int(any_error)}); }}"
        )

    def check_bytes(
        self, label: str, dst: str, offset: int, allowed: list[tuple[int, int, Any]]
    ) -> None:
        for a, b, values in allowed:
            if values is None:
                continue
            arrays = [self.embed(bytes(v), label) for v in values]
            table = ", ".join(arrays)
            self.body.append(
                f"    {{ static const unsigned char *const v[] = {{{table}}}; "
                f"check_bytes({_c_string(label)}, (const unsigned char *){dst} + {a - offset}, "
                f"{a}, {b - a}, v, {len(arrays)}); }}"
            )


def _observed_after(calls: list[Call], i: int, address: int, count: int) -> bytes | None:
    """The bytes a read-back of ``address`` made after call ``i`` found."""
    for c in calls[i + 1 :]:
        if c.name == "read_host" and c.args.get("src") == address and c.args.get("count") == count:
            data = c.outputs.get("data")
            return bytes(data) if isinstance(data, (bytes, bytearray)) else None
    return None


def _opened_during(calls: list[Call]) -> dict[int, list[Call]]:
    out: dict[int, list[Call]] = {}
    for i, c in enumerate(calls):
        if c.name == "open_gate":
            continue
        for g in calls[i + 1 :]:
            if g.name == "open_gate" and g.started < c.ended:
                out.setdefault(c.seq, []).append(g)
    return out


def _model(trace: Trace) -> Model:
    caps = trace.capabilities or {}
    model = Model(
        trace.profile,
        ModelCapabilities(
            devices=int(caps.get("devices", 1)),
            default_stream=bool(caps.get("default_stream", True)),
            events=bool(caps.get("events", True)),
            host_register=bool(caps.get("host_register", True)),
            gate=bool(caps.get("gate", True)),
        ),
    )
    model.world.initialized = True  # the program calls aclInit first, as the suite did
    model.spell_out_reads = True
    for f in trace.fixtures:
        model.add_symbol(str(f["name"]), int(f["address"]), int(f["size"]))
    return model


def generate(trace: Trace) -> str:
    """The C source of the reproducer of ``trace`` (ReproducerError if it cannot be made)."""
    if not trace.fixtures:
        raise ReproducerError(f"trace {trace.path}: it names no fixture variables")
    model = _model(trace)
    prog = _Program(trace)
    names = prog.names
    timed = _opened_during(trace.calls)
    by_timer = {g.seq for gs in timed.values() for g in gs}
    baselines: dict[tuple[int, str], bytes] = {}
    threads = sorted({c.thread for c in trace.calls})
    for i, call in enumerate(trace.calls):
        if call.name == "read_host" or call.seq in by_timer:
            continue
        if call.code is None:
            prog.body.append(
                f"    /* {call.name}: the recorded backend raised here ({call.error}) */"
            )
            break
        for g in timed.get(call.seq, []):
            gate = names.handle("gate", int(g.args["gate"]))
            prog.body.append(f"    gate_open_after(&{gate}, {TIMER_MS});")
            model.expect("open_gate", call.thread, gate=int(g.args["gate"])).settle(0)
        exp = model.expect(call.name, call.thread, **call.args)
        label = exp.label
        if len(threads) > 1:
            prog.body.append(f"    /* recorded on host thread {threads.index(call.thread)} */")
        dst_expr = _emit(prog, call)
        outputs = dict(call.outputs)
        reads_now = call.name == "memcpy_from_symbol" or (
            call.name == "memcpy_from_symbol_async" and _pageable(model, call)
        )
        if call.code == 0 and reads_now:
            observed = _observed_after(
                trace.calls, i, int(call.args["dst"]), int(call.args["count"])
            )
            if observed is None:
                raise ReproducerError(
                    f"trace {trace.path}: no read-back of the bytes read at {label}"
                )
            outputs["observed"] = observed
        model.last_allowed = []
        exp.settle(call.code, **outputs)
        prog.check_code(label, exp.outcome)
        if call.code == 0 and reads_now and model.last_allowed:
            spans = model.last_allowed
            if len(spans) == 1 and spans[0][2] is None:
                device = model.world.current_device(call.thread) or 0
                sym = model.world.symbols.get(int(call.args["symbol"]))
                if sym is not None and int(call.args["count"]) == sym.size:
                    baselines.setdefault((device, sym.name), outputs["observed"])
            else:
                prog.check_bytes(label, dst_expr, int(call.args["offset"]), spans)
        for r in model.ready_reads():
            data = _observed_after(trace.calls, i, r.address, r.count)
            if data is None:
                raise ReproducerError(f"trace {trace.path}: no read-back of {r.label}")
            model.check_read(r, data)
            prog.body.append(
                f"    /* {r.label.split(' ', 1)[0]} is complete here; its bytes are not checked */"
            )
    return _source(trace, prog, baselines)


def _pageable(model: Model, call: Call) -> bool:
    rng = model.world.host_range(int(call.args["dst"]), int(call.args["count"]))
    return bool(rng.known and not model.profile.pinned_path(rng)[0])


def _emit(prog: _Program, call: Call) -> str:
    """The C statements of one call; returns the C expression of its destination (reads)."""
    n = prog.names
    a = call.args
    b = prog.body
    name = call.name

    def p(key: str) -> str:
        return n.pointer(int(a[key]))

    def h(kind: str, key: str | None = None) -> str:
        return n.handle(kind, int(a[key or kind]))

    if name == "init":
        b.append("    ret = aclInit(NULL);")
    elif name == "finalize":
        b.append("    ret = aclFinalize();")
    elif name == "get_version_str":
        b.append('    { char v[128] = {0}; ret = aclsysGetVersionStr((char *)"runtime", v); }')
    elif name == "set_device":
        b.append(f"    ret = aclrtSetDevice({int(a['device_id'])});")
    elif name == "get_device":
        b.append("    { int32_t d = -1; ret = aclrtGetDevice(&d); }")
    elif name == "reset_device":
        b.append(f"    ret = aclrtResetDevice({int(a['device_id'])});")
    elif name == "get_device_count":
        b.append("    { uint32_t c = 0; ret = aclrtGetDeviceCount(&c); }")
    elif name == "synchronize_device":
        b.append("    ret = aclrtSynchronizeDevice();")
    elif name == "create_stream":
        if a.get("null_stream"):
            b.append("    ret = aclrtCreateStream(NULL);")
        else:
            s = n.new("stream", "aclrtStream")
            if call.code == 0 and call.outputs.get("stream"):
                n.handles[("stream", int(call.outputs["stream"]))] = s
            b.append(f"    ret = aclrtCreateStream(&{s});")
    elif name == "destroy_stream":
        b.append(f"    ret = aclrtDestroyStream({h('stream')});")
    elif name == "synchronize_stream":
        b.append(f"    ret = aclrtSynchronizeStream({h('stream')});")
    elif name == "synchronize_stream_with_timeout":
        b.append(
            f"    ret = aclrtSynchronizeStreamWithTimeout({h('stream')}, {int(a['timeout'])});"
        )
    elif name == "stream_query":
        b.append(
            f"    {{ aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED; "
            f"ret = aclrtStreamQuery({h('stream')}, &st); }}"
        )
    elif name == "create_event":
        if a.get("null_event"):
            b.append("    ret = aclrtCreateEvent(NULL);")
        else:
            e = n.new("event", "aclrtEvent")
            if call.code == 0 and call.outputs.get("event"):
                n.handles[("event", int(call.outputs["event"]))] = e
            b.append(f"    ret = aclrtCreateEvent(&{e});")
    elif name == "record_event":
        b.append(f"    ret = aclrtRecordEvent({h('event')}, {h('stream')});")
    elif name == "stream_wait_event":
        b.append(f"    ret = aclrtStreamWaitEvent({h('stream')}, {h('event')});")
    elif name == "synchronize_event":
        b.append(f"    ret = aclrtSynchronizeEvent({h('event')});")
    elif name == "destroy_event":
        b.append(f"    ret = aclrtDestroyEvent({h('event')});")
    elif name in ("malloc_host", "malloc_pageable"):
        size = int(a["size"])
        key = "host_ptr" if name == "malloc_host" else "ptr"
        if name == "malloc_host" and a.get("null_host_ptr"):
            b.append(f"    ret = aclrtMallocHost(NULL, {_size(size)});")
        else:
            prefix = "pinned" if name == "malloc_host" else "host"
            v = n.new(prefix, "unsigned char *")
            if call.code == 0 and call.outputs.get(key):
                n.buffers[int(call.outputs[key])] = (v, size)
            if name == "malloc_host":
                b.append(f"    ret = aclrtMallocHost((void **)&{v}, {_size(size)});")
            else:
                # Page-aligned, as the suite's backends give it: the suite registers
                # such buffers (aclrtHostRegisterV2 wants 4 KiB alignment).
                b.append(
                    f"    ret = posix_memalign((void **)&{v}, 4096, {_size(size)}) == 0 ? 0 : 1;"
                )
    elif name == "free_host":
        b.append(f"    ret = aclrtFreeHost({p('host_ptr')});")
    elif name == "free_pageable":
        b.append(f"    free({p('ptr')}); ret = 0;")
    elif name == "host_register":
        b.append(
            f"    ret = aclrtHostRegisterV2({p('ptr')}, {int(a['size'])}ULL, {int(a['flag'])}U);"
        )
    elif name == "host_unregister":
        b.append(f"    ret = aclrtHostUnregister({p('ptr')});")
    elif name == "write_host":
        data = bytes(a["data"])
        src = prog.embed(data, "a host write")
        b.append(f"    memcpy({p('dst')}, {src}, {len(data)}); ret = 0;")
    elif name == "get_symbol_address":
        out = "NULL" if a.get("null_dev_ptr") else "&dev_ptr"
        b.append(
            f"    {{ void *dev_ptr = NULL; ret = aclrtGetSymbolAddress({p('symbol')}, {out}); }}"
        )
    elif name == "get_symbol_size":
        out = "NULL" if a.get("null_size") else "&size"
        b.append(f"    {{ size_t size = 0; ret = aclrtGetSymbolSize({p('symbol')}, {out}); }}")
    elif name == "memcpy_to_symbol_async":
        b.append(
            f"    ret = aclrtMemcpyToSymbolAsync({p('symbol')}, {p('src')}, {_size(int(a['count']))}, "
            f"{_size(int(a['offset']))}, {_kind(int(a['kind']))}, {h('stream')});"
        )
    elif name == "memcpy_to_symbol":
        b.append(
            f"    ret = aclrtMemcpyToSymbol({p('symbol')}, {p('src')}, {_size(int(a['count']))}, "
            f"{_size(int(a['offset']))}, {_kind(int(a['kind']))});"
        )
    elif name == "memcpy_from_symbol":
        b.append(
            f"    ret = aclrtMemcpyFromSymbol({p('dst')}, {_size(int(a['dst_max']))}, {p('symbol')}, "
            f"{_size(int(a['count']))}, {_size(int(a['offset']))}, {_kind(int(a['kind']))});"
        )
        return p("dst")
    elif name == "memcpy_from_symbol_async":
        b.append(
            f"    ret = aclrtMemcpyFromSymbolAsync({p('dst')}, {_size(int(a['dst_max']))}, "
            f"{p('symbol')}, {_size(int(a['count']))}, {_size(int(a['offset']))}, "
            f"{_kind(int(a['kind']))}, {h('stream')});"
        )
        return p("dst")
    elif name == "launch_gate":
        g = n.new("gate", "gate_t", "GATE_INIT")
        if call.code == 0 and call.outputs.get("gate"):
            n.handles[("gate", int(call.outputs["gate"]))] = g
        b.append(f"    ret = aclrtLaunchHostFunc({h('stream')}, gate_wait, &{g});")
    elif name == "open_gate":
        gate = n.handle("gate", int(a["gate"]))
        b.append(f"    gate_open(&{gate}); ret = 0;")
    else:  # pragma: no cover - every call of the contract is handled above
        raise ReproducerError(f"call {name!r} has no C form")
    return ""


PRELUDE_FILE = "reproducer_prelude.c"
"""The C every program starts with (checks, gates, ``garbage``), shipped next to this module."""


def _prelude() -> str:
    """The text of :data:`PRELUDE_FILE`, copied verbatim into every program."""
    return resources.files(__package__).joinpath(PRELUDE_FILE).read_text("utf-8")


def _source(trace: Trace, prog: _Program, baselines: dict[tuple[int, str], bytes]) -> str:
    lines = [
        "/*",
        f" * Reproducer written by acl-conformance {__version__} from the trace",
        f" *   {trace.path}",
        f" * test {trace.test}, profile {trace.profile}, recorded on adapter {trace.adapter};",
        f" * it failed requirement {trace.requirement or '(none)'}.",
        " *",
        " * Every call is checked against what the profile allows after the recorded calls",
        " * before it; each mismatch is printed.  Exit status: the number of mismatches.",
        " *",
        " * Build against a library exporting the ACL C functions, e.g.:",
        " *   cc -DACL_CONFORMANCE_REGISTER_VARIABLES -I<dir with acl/acl.h> repro.c -l<lib> -lpthread",
        " * against CANN: compile this file as the ASC source holding main (see the README).",
        " */",
        "",
        _prelude(),
        "/* The device variables, as the recorded backend declared them. */",
    ]
    inits = {str(f["name"]): _pattern(k, int(f["size"])) for k, f in enumerate(trace.fixtures)}
    for f in trace.fixtures:
        lines.append(f"__gm__ unsigned char {f['name']}[{int(f['size'])}];")
    prep = list(_preparation(prog, trace, baselines, inits))  # may embed data: first
    lines.append("")
    lines += prog.names.decls
    lines.append("")
    lines += prog.data
    lines += [
        "",
        "int main(void)",
        "{",
        "    aclError ret;",
        "    ret = aclInit(NULL);",
        '    if (ret != ACL_SUCCESS) { printf("aclInit(NULL) returned %d\\n", (int)ret); return 100; }',
        "#ifdef ACL_CONFORMANCE_REGISTER_VARIABLES",
    ]
    for f in trace.fixtures:
        lines.append(
            f'    if (aclConformanceRegisterVariable({f["name"]}, "{f["name"]}", sizeof {f["name"]}) != 0) '
            f'{{ printf("cannot register {f["name"]}\\n"); return 100; }}'
        )
    lines += [
        "#endif",
        "    /* The variables' contents when the recorded run first read them. */",
        *prep,
        "    /* The recorded calls. */",
        *prog.body,
        "",
        '    printf("%d mismatch(es)\\n", mismatches);',
        "    aclFinalize();",
        "    return mismatches > 100 ? 100 : mismatches;",
        "}",
        "",
    ]
    return "\n".join(lines)


def _preparation(
    prog: _Program,
    trace: Trace,
    baselines: dict[tuple[int, str], bytes],
    inits: dict[str, bytes],
) -> Iterator[str]:
    if not baselines:
        return
    yield "    {"
    yield "        unsigned char *prep = NULL;"
    biggest = max(len(v) for v in baselines.values())
    yield f"        prep = malloc({biggest});"
    yield '        if (prep == NULL) { printf("out of memory\\n"); return 100; }'
    for (device, name), data in sorted(baselines.items()):
        yield f"        ret = aclrtSetDevice({device});"
        if data == inits[name]:
            k = next(i for i, f in enumerate(trace.fixtures) if f["name"] == name)
            yield (
                f"        for (size_t i = 0; i < {len(data)}; i++) "
                f"prep[i] = (unsigned char)(({k} * 37 + i * 11 + 0x5A) & 0xFF);"
            )
        else:
            src = prog.embed(data, f"the starting contents of {name}")
            yield f"        memcpy(prep, {src}, {len(data)});"
        yield (
            f"        if (ret == ACL_SUCCESS) ret = aclrtMemcpyToSymbol(&{name}, prep, {len(data)}, 0, "
            "ACL_MEMCPY_HOST_TO_DEVICE);"
        )
        yield (
            f'        if (ret != ACL_SUCCESS) {{ printf("cannot prepare {name} on device {device}: '
            f'%d\\n", (int)ret); return 100; }}'
        )
    yield "        free(prep);"
    yield "    }"
