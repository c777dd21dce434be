"""The cann adapter for other C libraries: the wire codec derived from ``CALLS``, the
capability options, and the one-line set-up errors (include=, a library missing a
function, a bad option value) as ``acl-conformance run`` gives them: exit 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cann_support import clean_env
from cann_support import run_suite
from hypothesis import given
from hypothesis import strategies as st

from acl_conformance.adapters.base import CONTRACT_CALLS
from acl_conformance.adapters.base import Adapter
from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann import build
from acl_conformance.adapters.cann import wire
from acl_conformance.adapters.cann.exports import REGISTER
from acl_conformance.adapters.cann.exports import REQUIRED
from acl_conformance.adapters.cann.exports import SYMBOL_APIS
from acl_conformance.adapters.cann.exports import missing_functions
from acl_conformance.adapters.cann.options import CAPABILITY_FLAGS
from acl_conformance.adapters.cann.options import Options
from acl_conformance.adapters.registry import AdapterResolutionError
from acl_conformance.adapters.registry import resolve
from acl_conformance.reference_impl.calls import CALLS

PROTOCOL = Path(build.SOURCE_DIR) / "PROTOCOL.md"
AGENT_SOURCE = build.AGENT_SOURCE


# -- the wire codec ---------------------------------------------------------------------------
def _protocol_rows() -> dict[str, tuple[list[str], str]]:
    """command -> its args and its outputs, from the command tables of PROTOCOL.md."""
    rows: dict[str, tuple[list[str], str]] = {}
    for line in PROTOCOL.read_text().splitlines():
        m = re.match(r"\| (`[a-z_]+`(?:, `[a-z_]+`)*) \|([^|]*)\|([^|]*)\|", line)
        if not m:
            continue
        for command in re.findall(r"`([a-z_]+)`", m.group(1)):
            rows[command] = (m.group(2).replace("`", "").split(), m.group(3).strip())
    return rows


def test_every_contract_call_is_on_the_wire_as_protocol_md_says() -> None:
    """Argument order and count of each command follow CALLS, as PROTOCOL.md documents."""
    rows = _protocol_rows()
    assert set(wire.WIRE_CALLS) == set(CONTRACT_CALLS)
    for name in CONTRACT_CALLS:
        if name == "open_gate":
            continue  # answered by the reading thread; its own table
        documented, outputs = rows[name]
        sample = {p.name: 1 for p in CALLS[name].params}
        encoded = wire.encode(name, sample)
        fields = [t for t in documented if not t.startswith("#")]
        assert len(encoded.fields) == len(fields), (name, documented, encoded)
        assert (encoded.payload is not None) == any(t.startswith("#") for t in documented), name
        plain = [p.name for p in CALLS[name].params if not p.ctype.endswith("char*")]
        plain = [n for n in plain if n != "data"]
        if len(plain) == len(fields) - len(wire.null_flags(name)):
            assert fields == [*plain, *wire.null_flags(name)], name
        numbers = [o.name for o in CALLS[name].outputs if not o.ctype.endswith("char*")]
        if numbers and numbers != ["data"]:
            assert outputs.split()[0] == numbers[0], (name, outputs)
        else:
            assert not outputs or outputs.startswith(("payload", "(")), (name, outputs)


def test_values_are_encoded_by_their_c_type() -> None:
    e = wire.encode(
        "memcpy_to_symbol_async",
        {"symbol": -1, "src": 16, "count": 1 << 64, "offset": 3, "kind": -5, "stream": 0},
    )
    assert e.fields == ((1 << 64) - 1, 16, 0, 3, -5, 0) and e.payload is None
    assert wire.encode("host_register", {"ptr": 8, "size": 4, "flag": -1}).fields == (
        8,
        4,
        (1 << 32) - 1,
    )
    assert wire.encode("set_device", {"device_id": 1 << 31}).fields == (-(1 << 31),)
    assert wire.encode("init", {"config_path": None}) == wire.Encoded((0,), None)
    assert wire.encode("init", {"config_path": "a.json"}) == wire.Encoded((1,), b"a.json")
    assert wire.encode("write_host", {"dst": 5, "data": b""}) == wire.Encoded((5,), b"")
    assert wire.encode("create_stream", {"null_stream": True}).fields == (1,)
    assert wire.encode("get_symbol_size", {"symbol": 7}).fields == (7, 0)


_NUMBERS = st.one_of(
    st.integers(-(1 << 70), 1 << 70),
    st.sampled_from([0, -1, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 64) - 1]),
    st.booleans(),
    st.integers(-(1 << 62), 1 << 62).map(np.int64),
)
"""Arguments as a caller may pass them: any Python int (beyond every C range), a bool, a
NumPy integer (not an ``int``: the short encoders must fall back, not send garbage)."""


@given(name=st.sampled_from(sorted(wire.WIRE_CALLS)), data=st.data())
def test_the_short_encoders_agree_with_the_plan(name: str, data: st.DataObject) -> None:
    """Each call's encoder (short forms for the calls made most) gives what the general,
    parameter-by-parameter plan gives; so does ``encode_values`` for every numeric call."""
    args = {
        p.name: data.draw(st.binary(max_size=4) if p.name == "data" else _NUMBERS, p.name)
        for p in CALLS[name].params
        if not p.ctype.endswith("char*")
    }
    assert wire.encode(name, args) == wire._encode_any(name, args), args
    if name in wire._NUMERIC_CALLS:
        values = [args[p.name] for p in CALLS[name].params]
        assert wire.encode_values(name, values) == wire._encode_any(name, args)[0]
        with pytest.raises(TypeError, match="arguments"):
            wire.encode_values(name, [*values, 0])


@given(
    name=st.sampled_from(sorted(wire.WIRE_CALLS)),
    code=st.integers(-1, 1 << 31),
    outputs=st.lists(st.integers(-(1 << 63), 1 << 64).map(lambda i: str(i).encode()), max_size=2),
    payload=st.binary(max_size=4),
)
def test_the_short_decoders_agree_with_the_plan(
    name: str, code: int, outputs: list[bytes], payload: bytes
) -> None:
    reply = wire.Reply(code, outputs, payload)
    try:
        expected: object = wire._decode_any(name, reply)
    except wire.ProtocolError as e:
        expected = str(e)
    try:
        got: object = wire.decode(name, reply)
    except wire.ProtocolError as e:
        got = str(e)
    assert got == expected, (name, reply)


def test_outputs_are_decoded_in_calls_order() -> None:
    assert wire.decode("create_stream", wire.Reply(0, [b"4096"], b"")) == (0, 4096)
    assert wire.decode("get_device", wire.Reply(107002, [b"-1"], b"")) == (107002, -1)
    assert wire.decode("read_host", wire.Reply(0, [], b"\x00\x01")) == (0, b"\x00\x01")
    assert wire.decode("get_version_str", wire.Reply(0, [], b"9.1.0")) == (0, "9.1.0")
    assert wire.decode("synchronize_device", wire.Reply(3, [], b"")) == (3,)
    with pytest.raises(wire.ProtocolError, match="lacks the output stream"):
        wire.decode("create_stream", wire.Reply(0, [], b""))


def test_answers_are_parsed_whole_or_not_at_all() -> None:
    buf = bytearray(b"7 0 12\n8 0 #3\nab")
    answers, used = wire.parse_answers(buf)
    assert [(rid, r.code, r.outputs) for rid, r in answers] == [(7, 0, [b"12"])]
    assert used == len(b"7 0 12\n")
    buf += b"c"
    answers, used = wire.parse_answers(buf)
    assert answers[-1] == (8, wire.Reply(0, [], b"abc")) and used == len(buf)


# -- the functions the agent needs --------------------------------------------------------------
def test_required_functions_are_what_the_agent_calls() -> None:
    """REQUIRED is every ACL function agent.cpp names in a call, but the six it looks up."""
    source = AGENT_SOURCE.read_text()
    called = set(re.findall(r"\b(acl(?:rt|sys)?[A-Z]\w*)\s*\(", source))
    called -= {"aclError"}
    looked_up = set(re.findall(r'"(aclrt\w+Symbol\w*)"', source))
    assert len(looked_up) == 6
    assert called - looked_up - {REGISTER} == set(REQUIRED)


def _stub_library(tmp: Path, leave_out: tuple[str, ...]) -> Path:
    body = "".join(
        f"int {f}(void) {{ return 0; }}\n" for f in (*REQUIRED, REGISTER) if f not in leave_out
    )
    src = tmp / "stub.c"
    src.write_text(body)
    lib = tmp / "libstub.so"
    cc = build.c_compiler()
    subprocess.run([*cc, "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    return lib


def test_a_library_missing_functions_is_named_in_one_line(tmp_path: Path) -> None:
    lib = _stub_library(tmp_path, ("aclrtStreamQuery", "aclrtHostRegisterV2"))
    assert missing_functions(lib) == ["aclrtStreamQuery", "aclrtHostRegisterV2"]
    assert missing_functions(build.build_double(())) == []
    with pytest.raises(AdapterResolutionError) as info:
        resolve("cann", {"lib": str(lib)})
    text = str(info.value)
    assert "does not export aclrtStreamQuery, aclrtHostRegisterV2" in text and "\n" not in text


# -- options --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "value,expected",
    [("true", True), ("1", True), ("YES", True), ("false", False), ("0", False), ("no", False)],
)
def test_capability_values(value: str, expected: bool) -> None:
    for name in CAPABILITY_FLAGS:
        assert getattr(Options.parse({name: value}), name) is expected
    assert all(getattr(Options.parse({}), name) for name in CAPABILITY_FLAGS)


@pytest.mark.parametrize("name", CAPABILITY_FLAGS)
def test_a_bad_capability_value_gives_one_line(name: str) -> None:
    with pytest.raises(AdapterResolutionError) as info:
        resolve("cann", {"double": "1", name: "maybe"})
    text = str(info.value)
    assert f"{name}='maybe': expected true or false" in text and "\n" not in text


@pytest.mark.parametrize("where", ["acl", "nonexistent"])
def test_a_wrong_include_folder_gives_one_line(tmp_path: Path, where: str) -> None:
    include = build.INCLUDE_DIR / "acl" if where == "acl" else tmp_path / "nope"
    with pytest.raises(AdapterResolutionError) as info:
        resolve("cann", {"lib": str(build.build_double(())), "include": str(include)})
    text = str(info.value)
    assert f"include={include}:" in text and "give the folder that holds acl/acl.h" in text
    assert "\n" not in text


def test_include_without_lib_gives_one_line() -> None:
    with pytest.raises(AdapterResolutionError) as info:
        resolve("cann", {"double": "1", "include": str(build.INCLUDE_DIR)})
    text = str(info.value)
    assert f"include={build.INCLUDE_DIR}: only used with lib=PATH" in text and "\n" not in text


def test_capability_options_reach_capabilities() -> None:
    agent = str(build.build_agent_with_double(()))
    plain = CannAdapter(agent=agent)
    try:
        caps = plain.capabilities()
        assert caps.devices == 2 and caps.symbol_apis and caps.gate
        assert all(getattr(caps, name) for name in CAPABILITY_FLAGS)
    finally:
        plain.close()
    off = {name: "false" for name in CAPABILITY_FLAGS}
    a: Adapter = resolve("cann", {"agent": agent, "devices": "1", **off})
    try:
        caps = a.capabilities()
        assert caps.devices == 1 and caps.gate and caps.symbol_apis
        assert not any(getattr(caps, name) for name in CAPABILITY_FLAGS)
        assert a.get_device_count() == (0, 1)
    finally:
        a.close()


# -- through acl-conformance run ----------------------------------------------------------------
def _cli(tmp: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``acl-conformance run --adapter cann`` with these adapter options."""
    cmd = [str(Path(sys.executable).parent / "acl-conformance"), "run", "--adapter", "cann"]
    cmd += ["--report-dir", str(tmp / "report")]
    for o in options:
        cmd += ["--adapter-option", o]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, cwd=tmp, env=clean_env()
    )


def test_bad_inputs_give_one_line_and_exit_2(tmp_path: Path) -> None:
    double = str(build.build_double(()))
    cases = [
        ((f"lib={double}", f"include={build.INCLUDE_DIR / 'acl'}"), "no acl/acl.h under it"),
        ((f"lib={double}", f"include={tmp_path / 'nope'}"), "no such folder"),
        (
            (f"lib={_stub_library(tmp_path, ('aclrtLaunchHostFunc',))}",),
            "does not export aclrtLaunchHostFunc",
        ),
        (("double=1", "default_stream=maybe"), "default_stream='maybe': expected true or false"),
    ]
    for options, message in cases:
        proc = _cli(tmp_path, *options)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, (options, proc.returncode, proc.stdout[-2000:], proc.stderr)
        assert len(lines) == 1 and message in lines[0], (options, proc.stderr)
        assert not (tmp_path / "report" / "report.json").exists()


def test_a_backend_without_a_default_stream_skips_what_needs_it(tmp_path: Path) -> None:
    """default_stream=false: the test of NULL as the default stream is not supported (not
    failed), and the tests that use it where present still pass without it."""
    run = run_suite(
        tmp_path,
        ["double=1", "default_stream=false"],
        extra=["-k", "null_stream or pageable", "-n", "0"],
    )
    statuses = {r["suite_id"]: r["status"] for r in run.results}
    needing = [k for k in statuses if "test_null_stream_is_the_default_stream" in k]
    assert needing and all(statuses[k] == "not_supported" for k in needing), run.summary()
    assert run.returncode == 0 and not run.with_status("fail", "crash", "timeout", "error")
    assert run.statuses().get("pass", 0) > 0, run.summary()


def test_the_vendor_guide_lists_every_function_with_its_header_signature() -> None:
    """docs/cann-backend.md gives each function the agent needs as acl.h declares it."""
    guide = " ".join((Path(__file__).parents[1] / "docs" / "cann-backend.md").read_text().split())
    header = (build.INCLUDE_DIR / "acl" / "acl.h").read_text()
    declared = {
        m.group(2): " ".join(m.group(1).split())
        for m in re.finditer(r"ACL_FUNC_VISIBILITY (aclError (\w+)\([^;]*\);)", header)
    }
    assert set(declared) == {*REQUIRED, *SYMBOL_APIS}
    for name, declaration in declared.items():
        assert declaration in guide, name
    assert f"int {REGISTER}(const void *hostVar, const char *name, size_t size);" in guide
