"""The parts of reproducers and replay: the C form of a call, the handle names, the
model's answer to "what did this read allow", and a program holding every call."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cann_support import compile_program
from world import announce
from world import observe_now

from acl_conformance.conformance.harness.handles import Handles
from acl_conformance.conformance.traces import reproducer
from acl_conformance.conformance.traces.reproducer_program import allowed_codes
from acl_conformance.conformance.traces.trace import Trace
from acl_conformance.reference_impl import Capabilities
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.calls import render_call
from acl_conformance.reference_impl.constants import ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_conformance.reference_impl.constants import SIZE_MAX
from acl_conformance.reference_impl.outcome import AllowedAnswers
from acl_conformance.reference_impl.outcome import Alternative
from acl_conformance.reference_impl.outcome import Codes
from acl_conformance.reference_impl.record import CallRecord

ROOT = Path(__file__).resolve().parent.parent

FIXTURES = [
    {"name": "g_u32", "size": 4, "address": 0x5000},
    {"name": "g_arr256", "size": 256, "address": 0x6000},
]
GARBAGE = 0xDEAD0
PINNED, HOST, STREAM, EVENT, GATE = 0x7000, 0x9000, 0xA0, 0xB0, 0xC0


def _calls(*specs: tuple[str, dict[str, Any], int, dict[str, Any]]) -> list[CallRecord]:
    return [
        CallRecord(k + 1, name, args, code, outputs, 1, float(k), float(k) + 0.5, None)
        for k, (name, args, code, outputs) in enumerate(specs)
    ]


def test_a_c_program_spells_literals_with_their_type() -> None:
    args = {
        "symbol": 0x5000,
        "src": 0x7004,
        "count": SIZE_MAX - 6,
        "offset": 2**63,
        "kind": 9,
        "stream": 0x1234,
    }
    # failure messages: readable
    assert render_call("memcpy_to_symbol_async", args) == (
        "aclrtMemcpyToSymbolAsync((const void*)0x5000, (const void*)0x7004, SIZE_MAX - 6, "
        "9223372036854775808, (aclrtMemcpyKind)9, (aclrtStream)0x1234)"
    )
    # programs: every literal compiles with its value and type
    assert render_call("memcpy_to_symbol_async", args, exact=True) == (
        "aclrtMemcpyToSymbolAsync((void *)(uintptr_t)0x5000ULL, (void *)(uintptr_t)0x7004ULL, "
        "(SIZE_MAX - 6), (size_t)9223372036854775808ULL, (aclrtMemcpyKind)(9), "
        "(void *)(uintptr_t)0x1234ULL)"
    )
    assert render_call("host_register", {"ptr": 0, "size": 4096, "flag": 0}, exact=True) == (
        "aclrtHostRegisterV2(NULL, 4096ULL, 0U)"
    )
    # out-parameters: where the caller receives them; NULL where the call passed NULL
    assert render_call("malloc_host", {"size": 8}, receive=lambda p: f"(void **)&{p.name}") == (
        "aclrtMallocHost((void **)&host_ptr, 8)"
    )
    assert render_call("get_symbol_size", {"symbol": 0, "null_size": True}) == (
        "aclrtGetSymbolSize(NULL, NULL)"
    )


def test_handles_name_recorded_values_and_map_them_onto_the_run_at_hand() -> None:
    created = _calls(
        ("malloc_host", {"size": 64}, 0, {"host_ptr": PINNED}),
        ("create_stream", {"null_stream": False}, 0, {"stream": STREAM}),
        ("create_stream", {"null_stream": True}, 100000, {}),
        ("create_event", {"null_event": False}, 100000, {}),  # failed: nothing to map
        ("launch_gate", {"stream": STREAM}, 0, {"gate": GATE}),
    )
    names = Handles(FIXTURES, GARBAGE)
    assert [names.learn(c) for c in created] == ["pinned0", "stream0", None, "event0", "gate0"]
    assert names.name("const void*", 0x5000) == "&g_u32"
    assert names.name("const void*", 0x6010) == "((const char *)&g_arr256 + 16)"
    assert names.name("void*", PINNED + 8) == "(pinned0 + 8)"
    assert names.name("void*", PINNED + 64) is None  # past the buffer
    assert names.name("aclrtStream", STREAM) == "stream0"
    assert names.name("aclrtStream", GARBAGE) == "(void *)garbage"
    assert names.name("aclrtEvent", EVENT) is None
    assert names.handle_name("gate", GATE) == "gate0"

    now = Handles(FIXTURES, GARBAGE, {"g_u32": 0x15000, "g_arr256": 0x16000}, 0xBAD)
    new = [{"host_ptr": 0x17000}, {"stream": 0x1A0}, {}, {}, {"gate": 7}]
    for c, out in zip(created, new, strict=True):
        now.learn(c, now=out)
    copy = CallRecord(9, "memcpy_to_symbol_async", {}, 0, {}, 1, 0.0, 0.0, None)
    copy.args.update(symbol=0x6004, src=PINNED + 4, count=4, offset=0, kind=1, stream=STREAM)
    assert now.args_now(copy) == {
        "symbol": 0x16004,
        "src": 0x17004,
        "count": 4,
        "offset": 0,
        "kind": 1,
        "stream": 0x1A0,
    }
    assert now.now("stream", GARBAGE) == 0xBAD
    assert now.now("gate", GATE) == 7
    assert now.now("event", 0x999) == 0x999  # unknown: unchanged
    assert now.now("src", 0x5000) == 0x5000  # a host pointer maps by buffers only


def test_the_model_says_what_a_synchronous_read_allowed() -> None:
    model = Model("spec")
    model.world.initialized = True
    for f in FIXTURES:
        model.add_symbol(str(f["name"]), int(f["address"]), int(f["size"]))
    observe_now(model, 0, "g_u32", 0, b"\x01\x02\x03\x04")  # what it holds
    announce(model, "set_device", 1, device_id=0).settle(0)
    announce(model, "malloc_pageable", 1, size=4096).settle(0, ptr=HOST)
    read = {"dst": HOST, "dst_max": 4096, "symbol": 0x5000, "count": 4, "offset": 0, "kind": 2}
    announced = announce(model, "memcpy_from_symbol", 1, **read)
    assert model.read_allowed(announced.judgement) is None  # not read yet
    announced.settle(0, observed=b"\x01\x02\x03\x04")
    ((lo, hi, values),) = model.read_allowed(announced.judgement) or [(0, 0, None)]
    assert (lo, hi) == (0, 4) and values is not None
    assert [bytes(v) for v in values] == [b"\x01\x02\x03\x04"]
    assert model.read_allowed(model.history[0]) is None  # another call


def _every_call_trace(tmp_path: Path) -> Trace:
    """A run making every call of the contract (codes as a correct backend gives them)."""
    calls = _calls(
        ("set_device", {"device_id": 0}, 0, {}),
        ("get_version_str", {}, 0, {}),
        ("get_device", {}, 0, {"device_id": 0}),
        ("get_device_count", {}, 0, {"count": 1}),
        ("malloc_host", {"size": 64, "null_host_ptr": False}, 0, {"host_ptr": PINNED}),
        ("write_host", {"dst": PINNED, "data": bytes(range(64))}, 0, {}),
        ("malloc_pageable", {"size": 4096}, 0, {"ptr": HOST}),
        ("create_stream", {"null_stream": False}, 0, {"stream": STREAM}),
        ("create_event", {"null_event": False}, 0, {"event": EVENT}),
        ("stream_query", {"stream": STREAM}, 0, {"status": 0}),
        ("host_register", {"ptr": HOST, "size": 4096, "flag": 0}, 0, {}),
        ("host_unregister", {"ptr": HOST}, 0, {}),
        ("get_symbol_address", {"symbol": 0x5000, "null_dev_ptr": False}, 0, {"dev_ptr": 1}),
        ("get_symbol_size", {"symbol": 0x5000, "null_size": True}, 100000, {}),
        ("launch_gate", {"stream": STREAM}, 0, {"gate": GATE}),
        ("memcpy_to_symbol_async", {"symbol": 0x6000, "src": PINNED, "count": 64, "offset": 0,
                                    "kind": 1, "stream": STREAM}, 0, {}),
        ("record_event", {"event": EVENT, "stream": STREAM}, 0, {}),
        ("open_gate", {"gate": GATE}, 0, {}),
        ("synchronize_stream_with_timeout", {"stream": STREAM, "timeout": -1}, 0, {}),
        ("stream_wait_event", {"stream": STREAM, "event": EVENT}, 0, {}),
        ("synchronize_event", {"event": EVENT}, 0, {}),
        ("memcpy_to_symbol", {"symbol": 0x5000, "src": PINNED, "count": SIZE_MAX, "offset": 0,
                              "kind": 1}, 100000, {}),
        ("memcpy_from_symbol", {"dst": HOST, "dst_max": 4096, "symbol": 0x6000, "count": 64,
                                "offset": 0, "kind": 2}, 0, {}),
        ("read_host", {"src": HOST, "count": 64}, 0, {"data": bytes(range(64))}),
        ("memcpy_from_symbol_async", {"dst": PINNED, "dst_max": 64, "symbol": 0x5000,
                                      "count": 4, "offset": 0, "kind": 2, "stream": GARBAGE},
         100000, {}),
        ("synchronize_stream", {"stream": STREAM}, 0, {}),
        ("synchronize_device", {}, 0, {}),
        ("destroy_event", {"event": EVENT}, 0, {}),
        ("destroy_stream", {"stream": STREAM}, 0, {}),
        ("free_host", {"host_ptr": PINNED}, 0, {}),
        ("free_pageable", {"ptr": HOST}, 0, {}),
        ("reset_device", {"device_id": 0}, 0, {}),
        ("finalize", {}, 0, {}),
        ("init", {}, 0, {}),
    )  # fmt: skip
    caps = Capabilities(devices=1, default_stream=True, events=True, host_register=True)
    return Trace(str(tmp_path / "every.trace.json"), "t", "sim", {}, "spec", "KIND-REJECTED",
                 "", FIXTURES, caps, GARBAGE, calls)  # fmt: skip


def test_a_program_with_every_call_compiles_warning_free(tmp_path: Path) -> None:
    source = reproducer.generate(_every_call_trace(tmp_path))
    for spec in CALLS.values():
        if spec.acl:
            assert f"{spec.c_name}(" in source, spec.c_name
    assert "ret = aclrtGetSymbolSize(&g_u32, NULL);" in source  # no unused local
    assert "aclrtLaunchHostFunc(stream0, gate_wait, &gate0)" in source
    assert "aclrtMemcpyToSymbol(&g_u32, pinned0, SIZE_MAX, (size_t)0ULL, " in source
    from acl_conformance.adapters.cann import build

    try:
        cc = build.c_compiler()
        lib = build.build_double(())
    except Exception as exc:  # no compiler here: say so rather than pass
        pytest.skip(f"cannot build the C double: {exc}")
    src = tmp_path / "every.c"
    src.write_text(source)
    exe = tmp_path / "every"
    compile_program(cc, src, exe, lib)
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert "mismatch(es)" in run.stdout, run.stdout[-2000:]


def test_the_c_signature_of_a_call_is_spelled_only_in_the_table() -> None:
    """The reproducer writes calls through render_call: no ACL function is called by name
    in its modules (the prelude's helpers and libc aside)."""
    modules = [*ROOT.glob("conformance/reproducer*.py"), ROOT / "conformance/harness/handles.py"]
    for path in modules:
        text = path.read_text()
        for spec in CALLS.values():
            if spec.acl:
                assert not re.search(rf"\b{spec.c_name}\(", text), (path.name, spec.c_name)


def test_a_reproducer_keeps_the_codes_an_any_error_answer_excludes() -> None:
    """aclrtSynchronizeStreamWithTimeout(s, -1) on a stream held by a closed gate: any
    error but the time-out is allowed, so the C check must not accept 507046."""
    timeout = ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    but = Alternative(Codes.any_error_but(timeout, 1), None, "SYNC-TIMEOUT", "never times out")
    assert allowed_codes(AllowedAnswers((but,))) == ([], True, [1, timeout])
    # an explicit alternative that allows a code takes it out of the excluded ones
    explicit = Alternative(Codes.only(1), None, "SYNC-TIMEOUT", "one")
    assert allowed_codes(AllowedAnswers((but, explicit))) == ([1], True, [timeout])
    anything = Alternative(Codes(None), None, None, "any")
    assert allowed_codes(AllowedAnswers((but, anything))) == ([], True, [])
