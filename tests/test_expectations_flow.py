"""Issue 34's expectations flow, end to end: a bug that only a test which does not carry
the requirement finds.

The backend returns early from large pageable copies (the bytes land at its next copy);
``test_bounds.py::test_writes_at_the_boundaries[async pageable-g_arr256]``, which carries
EFFECT-BYTES but not PAGEABLE-BLOCKS, finds it (the failure cites EFFECT-BYTES, or equally
PAGEABLE-BLOCKS).  With the entry ``PAGEABLE-BLOCKS in "<that test>"`` the gate passes
while the bug is there and fails, the entry stale, once it is fixed (the simulator).  A
plain requirement entry masks PAGEABLE-BLOCKS in that test, which then steers around the
bug: stale either way, as the docs say.  Each run is that one test.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from acl_conformance import reports
from acl_conformance.conformance.command_line import cli
from acl_conformance.conformance.gating import starter
from acl_conformance.conformance.gating.expectations import Expectations
from acl_conformance.conformance.gating.expectations import written

TEST = "test_bounds.py::test_writes_at_the_boundaries[async pageable-g_arr256]"
ONLY_THAT_TEST = [
    "--jobs", "1", "--requirement", "EFFECT-BYTES", "--requirement", "PAGEABLE-BLOCKS",
    "--pytest-args", "-k " + shlex.quote("test_writes_at_the_boundaries and pageable and g_arr256"),
]  # fmt: skip

BACKEND = '''
from acl_conformance.adapters.variants.mutant_base import MutantBase


class LargePageableReturnsEarly(MutantBase):
    """A pageable copy of more than 128 bytes returns before it is made; its bytes are read
    from the source and land when the next copy to a symbol is asked for."""

    LARGE = 128

    def __init__(self, **kw):
        super().__init__(**kw)
        self._behind = []

    def _land(self):
        behind, self._behind = self._behind, []
        for args in behind:
            super().memcpy_to_symbol(*args)

    def memcpy_to_symbol_async(self, symbol, src, count, offset, kind, stream):
        self._land()
        if (
            count > self.LARGE
            and self._pageable(src)
            and self._would_copy(symbol, src, count, offset, kind)
            and self.stream_query(stream)[0] == 0
        ):
            self._behind.append((symbol, src, count, offset, kind))
            return 0
        return super().memcpy_to_symbol_async(symbol, src, count, offset, kind, stream)

    def memcpy_to_symbol(self, symbol, src, count, offset, kind):
        self._land()
        return super().memcpy_to_symbol(symbol, src, count, offset, kind)
'''


@pytest.fixture
def buggy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ``--adapter`` of the backend with the bug (its module on the workers' path)."""
    (tmp_path / "large_pageable.py").write_text(BACKEND)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return ["--adapter", "large_pageable:LargePageableReturnsEarly"]


FIXED = ["--adapter", "sim"]


def _run(
    capsys: pytest.CaptureFixture[str], d: Path, *argv: str
) -> tuple[int, str, dict[str, Any], dict[str, Any]]:
    """``acl-conformance run`` on the one test: exit status, what it printed, report.json
    and results.json."""
    rc = cli.main(["run", *argv, *ONLY_THAT_TEST, "--report-dir", str(d)])
    out = capsys.readouterr().out
    report = json.loads((d / "report.json").read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, reports.schema(), cls=jsonschema.Draft202012Validator)
    return rc, out, report, json.loads((d / "results.json").read_text())


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "expectations.txt"
    path.write_text(text)
    return path


def test_a_requirement_found_in_a_test_tells_the_buggy_backend_from_the_fixed_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], buggy: list[str]
) -> None:
    exp = _file(
        tmp_path,
        "# the vendor's file\n"
        f'PAGEABLE-BLOCKS in "{TEST}"  large pageable copies return early  https://example.org/34\n',
    )
    key = f'PAGEABLE-BLOCKS in "{TEST}"'  # as the file has it, so that it can be pasted

    rc, out, report, results = _run(capsys, tmp_path / "buggy", *buggy, "--expectations", str(exp))
    assert rc == 0, out[-3000:]
    gate = report["expectations"]  # the gate's details
    assert gate["result"] == "pass" and gate["stale_entries"] == [] and gate["unused"] == []
    assert "gate: PASS" in out
    # the bug was found, not steered around: an expected failure, and a red verdict
    (test,) = results["results"]
    assert test["suite_id"] == TEST and test["status"] == "xfail"
    assert "PAGEABLE-BLOCKS" not in test["failures"][0]["requirement"]  # it cites EFFECT-BYTES
    assert test["failures"][0]["expected"] == key
    assert report["verdict"] == "not conformant"
    row = next(r for r in report["requirements"] if r["status"] != "pass")
    assert row["status"] == "xfail" and row["expected_failure"]["key"] == key

    rc, out, report, _ = _run(capsys, tmp_path / "fixed", *FIXED, "--expectations", str(exp))
    assert rc == 1, out[-3000:]
    gate = report["expectations"]
    assert gate["result"] == "fail" and report["verdict"] == "conformant"
    assert gate["stale_entries"] == [
        {"key": key, "target": "test", "requirement": "PAGEABLE-BLOCKS"}
    ]
    assert f"unexpected pass of {TEST} (entry {key})" in out and "remove the entry" in out


def test_the_starter_writes_entries_that_pass_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], buggy: list[str]
) -> None:
    """docs/ci.md's "Start the expectations file": the file it writes from a first run
    parses, and with it the same backend passes the gate."""
    first = tmp_path / "first"
    rc, out, _, _ = _run(capsys, first, *buggy)
    assert rc == 1, out[-3000:]
    assert starter.main([str(first)]) == 0
    text = capsys.readouterr().out
    (entry,) = Expectations.parse(text, "generated").entries
    assert (entry.requirement, entry.test) == ("EFFECT-BYTES", TEST)
    assert f"EFFECT-BYTES in {written(TEST)} " in text
    exp = _file(tmp_path, text)
    rc, out, report, _ = _run(capsys, tmp_path / "next", *buggy, "--expectations", str(exp))
    assert rc == 0, out[-3000:]
    assert report["gate"]["result"] == "pass" and report["verdict"] == "not conformant"


def test_a_plain_requirement_entry_steers_the_test_around_the_bug(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], buggy: list[str]
) -> None:
    """What the docs say of a requirement entry: the tests that do not carry it steer
    around it, so a bug only they find leaves the entry stale while it is there."""
    exp = _file(tmp_path, "PAGEABLE-BLOCKS  large pageable copies return early\n")
    rc, out, report, results = _run(capsys, tmp_path / "r", *buggy, "--expectations", str(exp))
    assert rc == 1, out[-3000:]
    assert results["results"][0]["declined_by"] == "PAGEABLE-BLOCKS"
    assert report["expectations"]["stale_entries"][0]["key"] == "PAGEABLE-BLOCKS"
    # and the gate says where it steered, and what to list instead
    assert (
        f"steered around it: {TEST}; for a failure one of them finds, list PAGEABLE-BLOCKS in that test instead"
        in out
    )
