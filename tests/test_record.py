"""The table of calls is the one description of a call: the contract's methods, the
traced wrapper, output names and the one record class all follow it."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
from pathlib import Path
from types import MappingProxyType

import pytest

from acl_conformance.adapters import traced
from acl_conformance.adapters.base import CONTRACT_CALLS
from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.traced import Traced
from acl_conformance.conformance.harness import failure
from acl_conformance.conformance.traces import trace
from acl_conformance.conformance.traces import trace_schema
from acl_conformance.reference_impl import Capabilities
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.calls import output_names
from acl_conformance.reference_impl.record import CallRecord


def test_the_contract_and_the_table_name_the_same_calls() -> None:
    assert set(CONTRACT_CALLS) == set(CALLS)
    for name in CALLS:
        assert getattr(Traced, name) is not getattr(Adapter, name)
        assert not getattr(getattr(Traced, name), "__isabstractmethod__", False)
    assert not Traced.__abstractmethods__


def test_a_call_missing_from_the_table_fails_at_import(monkeypatch: pytest.MonkeyPatch) -> None:
    fewer = {k: v for k, v in CALLS.items() if k != "stream_query"}
    monkeypatch.setattr(traced, "CALLS", MappingProxyType(fewer))
    with pytest.raises(TypeError, match=r"without a row in CALLS: \['stream_query'\]"):
        traced._check_contract()


def test_a_call_whose_parameters_differ_from_the_table_fails_at_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = CALLS["record_event"]
    swapped = dict(CALLS, record_event=type(spec)(spec.name, spec.c_name, spec.params[::-1]))
    monkeypatch.setattr(traced, "CALLS", MappingProxyType(swapped))
    with pytest.raises(TypeError, match="does not take the parameters CALLS lists"):
        traced._check_contract()


@pytest.mark.parametrize(
    ("name", "outputs"),
    [
        ("stream_query", ("status",)),
        ("malloc_pageable", ("ptr",)),
        ("read_host", ("data",)),
        ("launch_gate", ("gate",)),
        ("get_version_str", ("version",)),
        ("malloc_host", ("host_ptr",)),
        ("memcpy_to_symbol_async", ()),
    ],
)
def test_output_names_come_from_the_table(name: str, outputs: tuple[str, ...]) -> None:
    assert output_names(name) == outputs


def test_traced_records_every_call_by_parameter_name_with_defaults() -> None:
    t = Traced.around(Simulator())
    try:
        assert t.init() == 0
        assert t.set_device(0) == 0
        code, stream = t.create_stream()
        assert code == 0 and stream
        code, ptr = t.malloc_pageable(8)
        assert t.write_host(ptr, bytearray(b"abcdefgh")) == 0
        assert t.read_host(ptr, 8) == (0, b"abcdefgh")
        assert inspect.signature(Traced.memcpy_to_symbol_async) == inspect.signature(
            Adapter.memcpy_to_symbol_async
        )
        recs = {r.name: r for r in t.trace}
        assert recs["init"].args == {"config_path": None}
        assert recs["create_stream"].args == {"null_stream": False}
        assert recs["create_stream"].outputs == {"stream": stream}
        assert recs["write_host"].args == {"dst": ptr, "data": b"abcdefgh"}
        assert type(recs["write_host"].args["data"]) is bytes
        assert recs["read_host"].outputs == {"data": b"abcdefgh"}
        assert [r.seq for r in t.trace] == list(range(1, len(t.trace) + 1))
        made = t.record("stream_query", {"stream": stream})
        assert made is t.trace[-1] and made.ok and made["status"] == made.outputs["status"]
    finally:
        t.close()


def test_a_record_survives_a_trace_file_byte_for_byte(tmp_path: Path) -> None:
    rec = CallRecord(
        7,
        "write_host",
        {"dst": 4096, "data": b"\x00\xff"},
        0,
        {},
        2,
        1.5,
        2.5,
        None,
        frozenset({3}),
    )
    doc = rec.to_json()
    assert list(doc) == [
        "seq", "name", "args", "code", "outputs", "thread", "started", "ended", "error"
    ]  # fmt: skip
    assert doc["args"]["data"] == {"hex": "00ff"}
    text = json.dumps(doc)
    back = CallRecord.from_json(json.loads(text))
    assert back.to_json() == doc and json.dumps(back.to_json()) == text
    assert back.args["data"] == b"\x00\xff" and back.code == 0 and back.thread == 2
    path = tmp_path / "t.trace.json"
    path.write_text(json.dumps({"calls": [doc]}))
    loaded = trace.load(path)
    assert loaded.calls == [back] and isinstance(loaded.calls[0], CallRecord)


def test_a_call_that_raised_has_no_code() -> None:
    rec = CallRecord.from_json(
        {"seq": 1, "name": "init", "args": {}, "code": None, "error": "OSError: gone"}
    )
    assert rec.code is None and not rec.ok
    with pytest.raises(ValueError, match="raised: OSError: gone"):
        _ = rec.acl_error


def test_a_trace_survives_its_file_and_keeps_the_backends_capabilities(tmp_path: Path) -> None:
    rec = CallRecord(1, "set_device", {"device_id": 0}, 0, {}, 0, 1.0, 1.5)
    caps = Capabilities(devices=2, events=False, symbol_apis=False)
    t = trace.Trace(
        str(tmp_path / "t.trace.json"),
        "tests/x.py::test_y",
        "simulator",
        {"eager": "1"},
        "cann",
        "KIND-REJECTED",
        "[KIND-REJECTED] ...",
        [{"name": "g_u32", "size": 4, "address": 0x5000}],
        caps,
        0xBAD,
        [rec],
        "fail",
    )
    doc = t.to_json()
    assert doc["format"] == trace.TRACE_FORMAT == trace_schema.TRACE_FORMAT
    assert trace_schema.errors(doc) == []
    assert doc["capabilities"] == dataclasses.asdict(caps)
    path = Path(t.path)
    path.write_text(json.dumps(doc))
    back = trace.load(path)
    assert back == t and back.capabilities == caps
    # A capability this version does not know is left out; one not named keeps its default.
    doc["capabilities"] = {"devices": 3, "warp_drive": True}
    assert trace.Trace.from_json(doc, "x").capabilities == Capabilities(devices=3)
    doc["capabilities"] = None
    assert trace.Trace.from_json(doc, "x").capabilities is None
    doc["capabilities"] = {"devices": "many"}
    with pytest.raises(trace.TraceError, match="capability devices='many' is malformed"):
        trace.Trace.from_json(doc, "x")


def test_failures_know_nothing_of_the_harness() -> None:
    tree = ast.parse(inspect.getsource(failure))
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + [
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    ]
    assert not [m for m in imported if "harness" in m], imported


def test_traced_records_arguments_by_name_and_refuses_what_the_contract_refuses() -> None:
    """Positional, keyword and default arguments are recorded by parameter name, in the
    contract's order; a call the contract's method would refuse raises TypeError."""
    t = Traced.around(Simulator())
    t.init(None)
    t.set_device(0)
    t.malloc_host(64)
    assert list(t.trace[-1].args.items()) == [("size", 64), ("null_host_ptr", False)]
    t.malloc_host(size=64, null_host_ptr=True)
    assert t.trace[-1].args == {"size": 64, "null_host_ptr": True}
    for bad in (
        lambda: t.set_device(0, 1),  # too many
        lambda: t.set_device(device=0),  # a keyword it does not take
        lambda: t.set_device(),  # a required one missing
        lambda: t.set_device(0, device_id=0),  # given twice
        lambda: t.malloc_host(64, bogus=1),  # an unknown keyword beside defaults
    ):
        with pytest.raises(TypeError):
            bad()


def test_traced_counts_the_device_references_the_backend_holds() -> None:
    """Each successful aclrtSetDevice takes a reference and each successful aclrtResetDevice
    drops one (never below none); failed calls count nothing.  A later harness's model starts
    from these (``Model.assume_references``), so that its resets end a context when the
    backend's do."""
    t = Traced.around(Simulator(devices=2))
    for d in (0, 0, 1):
        assert t.set_device(d) == 0
    assert t.reset_device(0) == 0
    assert t.set_device(7) != 0  # no such device: no reference
    assert t.references() == {0: 1, 1: 1}
    assert t.reset_device(1) == 0 and t.reset_device(1) == 0  # the second has none to drop
    assert t.references() == {0: 1, 1: 0}
    t.close()
