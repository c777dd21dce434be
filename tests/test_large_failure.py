"""A large wrong read in memory bounded by the data, not by the failure (issue 35, item 2).

A read with scattered wrong bytes is one violation summarised as ranges (not one per
run); a trace keeps large values in a data file beside it and loads them back the same;
a C reproducer reads large data from a data file beside it.  ``bench/large_failure.py``
runs the 16 MiB case through the whole path.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cann_support import compile_program

from acl_conformance.adapters.cann import build
from acl_conformance.adapters.simulator import Simulator
from acl_conformance.adapters.variants.large_failure_mutants import LargePageableDropsPageTails
from acl_conformance.conformance.authoring import ops
from acl_conformance.conformance.harness.failure import ConformanceFailure
from acl_conformance.conformance.harness.failure import backend_facts
from acl_conformance.conformance.harness.harness import Harness
from acl_conformance.conformance.traces import reproducer
from acl_conformance.conformance.traces import trace
from acl_conformance.conformance.traces import trace_schema
from acl_conformance.reference_impl.memory import SUMMARY_RUNS
from acl_conformance.reference_impl.memory import VarMemory
from acl_conformance.reference_impl.observation import VIOLATIONS_PER_READ

MIB = 1 << 20


class HalfMiBDropsPageTails(LargePageableDropsPageTails):
    """The catalogue mutant's bug from 512 KiB: a 1 MiB pageable copy loses 256 bytes."""

    LIMIT = 512 << 10


def _failure() -> ConformanceFailure:
    """The failure of a 1 MiB pageable copy into g_arr1m that loses a byte per page."""
    adapter = HalfMiBDropsPageTails()
    adapter.init(None)
    h = Harness(adapter, "spec", call_timeout=30.0)
    h.model.world.initialized = True
    h.call("set_device", device_id=0)
    n = ops.size(h, "g_arr1m")
    assert n == MIB
    src = h.pageable(n, ops.pattern(7, n))
    assert ops.to_symbol_async(h, "g_arr1m", src, count=n, stream=h.stream()).ok
    with pytest.raises(ConformanceFailure) as exc:
        h.observe("g_arr1m")
    return exc.value


@pytest.fixture(scope="module")
def failure() -> ConformanceFailure:
    return _failure()


def test_scattered_wrong_bytes_are_one_violation_summarised_as_ranges(
    failure: ConformanceFailure,
) -> None:
    (v,) = failure.violations  # one for the read, not one per wrong run
    assert v.requirement == "EFFECT-BYTES"
    # The pattern and the fixture's starting bytes may agree at some page tails: the
    # count is what differs, never more than the 256 tails.
    wrong = int(v.message.split(": ")[1].split(" of ")[0].replace(",", ""))
    assert 200 <= wrong <= 256
    assert f"{wrong:,} of these" in v.message and f"in {wrong:,} runs" in v.message
    assert v.message.startswith("device 0, g_arr1m bytes [4095, ")
    (runs,) = [d for d in v.details if d.startswith("wrong bytes, by run:")]
    assert runs.startswith("wrong bytes, by run: [4095, 4096), [8191, 8192), ")
    assert f"... {wrong - 6:,} more ..." in runs
    # bounded: a vendor reads it in a terminal whatever the size of the read
    text = str(failure)
    assert len(text) < 6000 and len(text.splitlines()) < 40, text


def test_a_segment_with_few_wrong_runs_keeps_one_mismatch_per_run() -> None:
    vm = VarMemory(MIB, np.zeros(MIB, dtype=np.uint8))
    few = np.zeros(MIB, dtype=np.uint8)
    few[[10, 20, 21, 5000]] = 1
    assert [(m.lo, m.hi, m.wrong) for m in vm.check(0, few, lambda w: True)] == [
        (10, 11, None),
        (20, 22, None),
        (5000, 5001, None),
    ]
    many = np.zeros(MIB, dtype=np.uint8)
    many[4095::4096] = 7
    many[100:103] = 9
    (m,) = vm.check(0, many, lambda w: True)
    assert (m.lo, m.hi) == (100, MIB) and m.wrong is not None
    assert m.wrong_count == 256 + 3 and len(m.runs()) == 257 > SUMMARY_RUNS
    assert m.runs()[:2] == [(100, 103), (4095, 4096)]


def _trace_doc(failure: ConformanceFailure) -> dict[str, Any]:
    return {
        "format": trace.TRACE_FORMAT,
        "test": "tests/test_large_failure.py::t",
        "adapter": "sim",
        "profile": "spec",
        "requirement": failure.requirement,
        "message": str(failure),
        **backend_facts(failure.snapshot),
        "calls": [r.to_json(raw=True) for r in failure.trace],
    }


def test_a_trace_keeps_large_values_in_a_data_file_and_loads_them_back(
    failure: ConformanceFailure, tmp_path: Path
) -> None:
    path = tmp_path / "t.trace.json"
    trace.dump(_trace_doc(failure), path)
    side = tmp_path / "t.trace.data"
    doc = json.loads(path.read_text())
    assert doc["data_file"] == side.name and trace_schema.errors(doc) == []
    # no hex of a large value in the JSON; the data file holds each distinct value once
    assert path.stat().st_size < 200_000
    big = [
        v
        for c in failure.trace
        for v in [*c.args.values(), *c.outputs.values()]
        if isinstance(v, bytes) and len(v) > trace.INLINE_LIMIT
    ]
    assert len(big) >= 2 and side.stat().st_size <= len(set(big)) * (MIB + 16)
    loaded = trace.load(path)
    assert [(c.name, c.args, c.outputs) for c in loaded.calls] == [
        (c.name, c.args, c.outputs) for c in failure.trace
    ]
    # a data file that does not hold the bytes named is refused, in one line
    side.write_bytes(side.read_bytes()[:-1])
    with pytest.raises(trace.TraceError, match="names bytes its data file does not hold"):
        trace.load(path)
    side.unlink()
    with pytest.raises(trace.TraceError, match=r"its data file .* cannot be read"):
        trace.load(path)


def test_a_reproducer_reads_large_data_from_a_file_beside_it(
    failure: ConformanceFailure, tmp_path: Path
) -> None:
    path = tmp_path / "t.trace.json"
    trace.dump(_trace_doc(failure), path)
    t = trace.load(path)
    with pytest.raises(reproducer.ReproducerError, match="needs a data file beside it"):
        reproducer.generate(t)
    data_file = tmp_path / "repro.data"
    source, data = reproducer.generate_files(t, str(data_file))
    assert MIB <= len(data) <= 3 * MIB  # the 1 MiB values, each once
    assert f"read_data_file(data_path, {len(data)})" in source
    assert json.dumps(str(data_file)) in source  # the default path, as a C string
    assert len(source) < 100_000  # not embedded
    src = tmp_path / "repro.c"
    src.write_text(source)
    data_file.write_bytes(data)

    try:
        cc = build.c_compiler()
        lib = build.build_double(())
    except Exception as exc:  # no compiler here: say so rather than pass
        pytest.skip(f"cannot build the C double: {exc}")
    exe = tmp_path / "repro"
    compile_program(cc, src, exe, lib)
    # The correct double has no such bug: the program, with its data, finds nothing.
    ok = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "0 mismatch(es)" in ok.stdout, ok.stdout[-2000:]
    moved = tmp_path / "elsewhere.data"
    data_file.rename(moved)
    gone = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert gone.returncode == 100 and "cannot read the" in gone.stdout
    named = subprocess.run([str(exe), str(moved)], capture_output=True, text=True, timeout=120)
    assert named.returncode == 0 and "0 mismatch(es)" in named.stdout


class ReadFlipsAByteEvery4KiB(Simulator):
    """aclrtMemcpyFromSymbol of more than 64 KiB flips byte 100 of every 4 KiB it reads."""

    def memcpy_from_symbol(
        self, dst: int, dst_max: int, symbol: int, count: int, offset: int, kind: int
    ) -> int:
        code = super().memcpy_from_symbol(dst, dst_max, symbol, count, offset, kind)
        host = self._host.view(dst, count) if count > 64 << 10 else None
        if code == 0 and host is not None:
            host[100::4096] ^= 0xFF
        return code


def test_a_read_wrong_in_many_ranges_is_diagnosed_a_few_times_only() -> None:
    adapter = ReadFlipsAByteEvery4KiB()
    adapter.init(None)
    h = Harness(adapter, "spec", call_timeout=30.0)
    h.model.world.initialized = True
    h.call("set_device", device_id=0)
    s = h.stream()
    # 64 copies, one a page: the variable's map has a range per copy, each read wrong once
    for page in range(64):
        src = h.pageable(200, ops.pattern(page, 200))
        assert ops.to_symbol_async(h, "g_arr1m", src, count=200, offset=page * 4096, stream=s).ok
    with pytest.raises(ConformanceFailure) as exc:
        h.observe("g_arr1m")
    assert 1 <= len(exc.value.violations) <= VIOLATIONS_PER_READ < 64
