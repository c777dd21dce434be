"""A failure that does not fail again when its trace is replayed against a fresh backend is
``flaky``: neither a pass nor a fail; both traces are kept; a flakes file lets the gate
accept it (as deqp-runner's flakes list does)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from acl_conformance import reports
from acl_conformance.adapters.variants import BY_NAME
from acl_conformance.conformance.traces import trace_schema

FLAKY = "acl_conformance.adapters.variants.flaky:EveryKthCopyLosesItsLastByte"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acl_conformance", "run", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )


def test_a_flaky_backend_is_reported_flaky_and_a_listed_flake_passes_the_gate(
    tmp_path: Path,
) -> None:
    assert BY_NAME["every-kth-copy-loses-a-byte"].sort == "flaky"
    flakes = tmp_path / "flakes.txt"
    flakes.write_text(
        "EFFECT-BYTES  one copy in 200 loses its last byte  https://example.org/f/1\n"
    )
    d = tmp_path / "report"
    done = _run(
        tmp_path,
        "--adapter",
        FLAKY,
        "--requirement",
        "EFFECT-BYTES",
        "--flakes",
        str(flakes),
        "--report-dir",
        str(d),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]  # the gate accepts it
    report = json.loads((d / "report.json").read_text())
    row = report["requirements"][0]
    assert row["id"] == "EFFECT-BYTES" and row["status"] == "flaky"
    assert row["flake"]["key"] == "EFFECT-BYTES"
    assert report["verdict"] == "not conformant"  # a flake is never a pass
    assert "FLAKY" in done.stdout and "every call allowed (flaky)" in done.stdout

    # both traces are kept: the failing one, and its replay against a fresh backend
    c = row["counterexample"]
    replayed = c["replay"]
    assert replayed["reproduced"] is False
    for path in (c["trace_file"], replayed["trace_file"]):
        doc = json.loads((d / path).read_text())  # relative to the report folder
        assert trace_schema.errors(doc) == [], path
    again = subprocess.run(
        [sys.executable, "-m", "acl_conformance", "replay", str(d / c["trace_file"])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0 and "not reproduced" in again.stdout, again.stdout[-2000:]

    # without the flakes file, the same results fail the gate
    results = json.loads((d / "results.json").read_text())
    results["flakes"] = None
    for t in results["results"]:
        for f in t["failures"]:
            f.pop("flake", None)
    unlisted = reports.build(results, report["suite"], report["run"])
    assert unlisted["requirements"][0]["status"] == "flaky"
    assert unlisted["gate"]["result"] == "fail"
