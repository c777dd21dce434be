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

Build (see docs/reports.md, "The C reproducer"): against CANN with its ASC toolchain
(the variables are ``__gm__``, in the file with ``main``, as CANN documents); against any other
library that exports the ACL C functions with the system compiler and
``-DACL_CONFORMANCE_REGISTER_VARIABLES``, which declares the variables to the
library through ``aclConformanceRegisterVariable``.

The C helpers every program starts with (the checks, the gates) are in
``reproducer_prelude.c`` next to this module, copied verbatim into each program.
Here: the walk over the recorded calls with the model; reproducer_program.py
writes each call (through the one C renderer of a call, reference_impl/calls.py),
handles.py names the recorded handles, reproducer_source.py assembles the text.
"""

from __future__ import annotations

from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import PendingRead
from acl_conformance.reference_impl import judge
from acl_conformance.reference_impl.constants import Capabilities
from acl_conformance.reference_impl.record import CallRecord

from .reproducer_program import EMBED_LIMIT
from .reproducer_program import Program
from .reproducer_program import ReproducerError
from .reproducer_source import PRELUDE_FILE
from .reproducer_source import Baselines
from .reproducer_source import source
from .trace import Trace
from .trace import opened_during

__all__ = [
    "EMBED_LIMIT",
    "PRELUDE_FILE",
    "TIMER_MS",
    "ReproducerError",
    "generate",
    "generate_files",
]

TIMER_MS = 5
"""Milliseconds after which a gate opened by a timer in the recorded run is opened."""


def _observed_after(calls: list[CallRecord], i: int, address: int, count: int) -> bytes | None:
    """The bytes a read-back of ``address`` made after call ``i`` found."""
    for c in calls[i + 1 :]:
        if c.name == "read_host" and c.args.get("src") == address and c.args.get("count") == count:
            data = c.outputs.get("data")
            return bytes(data) if isinstance(data, (bytes, bytearray)) else None
    return None


def _model(trace: Trace) -> Model:
    model = Model(trace.profile, trace.capabilities or Capabilities())
    model.assume_initialized()  # the program calls aclInit first, as the suite did
    for f in trace.fixtures:
        model.add_symbol(str(f["name"]), int(f["address"]), int(f["size"]))
    return model


def generate(trace: Trace) -> str:
    """The C source of the reproducer of ``trace`` (ReproducerError if it cannot be made,
    or needs a data file: see :func:`generate_files`)."""
    text, _data = _generate(trace, None)
    return text


def generate_files(trace: Trace, data_file: str) -> tuple[str, bytes]:
    """The C source of the reproducer of ``trace`` and the contents of its data file
    (empty: it needs none), which the program reads from ``data_file`` (or the path given
    as its first argument): the arrays too large to embed in its text."""
    return _generate(trace, data_file)


def _generate(trace: Trace, data_file: str | None) -> tuple[str, bytes]:
    if not trace.fixtures:
        raise ReproducerError(f"trace {trace.path}: it names no fixture variables")
    model = _model(trace)
    prog = Program(trace)
    timed = opened_during(trace.calls)
    by_timer = {g.seq for gs in timed.values() for g in gs}
    baselines: Baselines = {}
    threads = sorted({c.thread for c in trace.calls})
    for i, call in enumerate(trace.calls):
        if call.name == "read_host" or call.seq in by_timer:
            continue
        if call.code is None and call.error is None:
            # A call that never returned (a hang): the program makes it, and waits where the
            # recorded run waited; a backend that returns is checked as the profile says.
            label = model.render(call.name, call.args)
            prog.body.append(
                f"    /* {label}: the recorded backend never returned from this call */"
            )
            prog.add_call(call)
            prog.check_code(label, model.preview(call.name, call.thread, **call.args))
            break
        if call.code is None:
            prog.body.append(
                f"    /* {call.name}: the recorded backend raised here ({call.error}) */"
            )
            break
        opened = [int(g.args["gate"]) for g in timed.get(call.seq, [])]
        for gate in opened:
            prog.body.append(f"    gate_open_after(&{prog.gate(gate)}, {TIMER_MS});")
        if len(threads) > 1:
            prog.body.append(f"    /* recorded on host thread {threads.index(call.thread)} */")
        dst_expr = prog.add_call(call)
        reads_now = model.reads_at_return(call.name, call.args)
        observed: bytes | None = None
        if call.code == 0 and reads_now:
            observed = _observed_after(
                trace.calls, i, int(call.args["dst"]), int(call.args["count"])
            )
            if observed is None:
                raise ReproducerError(
                    f"trace {trace.path}: no read-back of the bytes read at "
                    f"{model.render(call.name, call.args)}"
                )

        def read_back(r: PendingRead, i: int = i) -> bytes:
            data = _observed_after(trace.calls, i, r.address, r.count)
            if data is None:
                raise ReproducerError(f"trace {trace.path}: no read-back of {r.call.label}")
            return data

        step = judge(model, call, observed, read_back=read_back, opened=opened)
        label = step.judgement.label
        prog.check_code(label, step.judgement.allowed_answers)
        spans = model.read_allowed(step.judgement) if observed is not None else None
        if observed is not None and spans:
            if len(spans) == 1 and spans[0][2] is None:
                device = model.current_device(call.thread) or 0
                sym = model.symbol_at(int(call.args["symbol"]))
                if sym is not None and int(call.args["count"]) == sym[1]:
                    baselines.setdefault((device, sym[0]), observed)
            else:
                prog.check_bytes(label, dst_expr, int(call.args["offset"]), spans)
        for r in step.reads:
            prog.body.append(
                f"    /* #{r.call.number} is complete here; its bytes are not checked */"
            )
    text = source(trace, prog, baselines, data_file)
    return text, b"".join(prog.file_data)
