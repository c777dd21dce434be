"""Helpers of the plugin tests: a pytester run of one module of the real suite."""

from __future__ import annotations

import json
from typing import Any

import pytest

KINDS = "acl_conformance.conformance.suite.test_kinds"
"""The suite module these runs collect: small, and needs nothing but the simulator."""


def on_kinds(*args: str) -> list[str]:
    """pytest's arguments for a run of :data:`KINDS` (no cache), then ``args``."""
    return ["-p", "no:cacheprovider", "--pyargs", KINDS, *args]


def write_fake_module(pytester: pytest.Pytester, source: str, name: str = "test_x.py") -> None:
    """Test module ``name`` of the fake suite package (which the ``in_suite`` and
    ``fake_suite`` fixtures make the plugin treat as the suite)."""
    pkg = pytester.mkpydir("fake_suite")
    (pkg / name).write_text(source)


def run_fake_suite(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, Any]:
    """The fake suite run in process with ``args``: the run, and the results document it
    wrote."""
    out = pytester.path / "results.json"
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "fake_suite", *args, f"--acl-results={out}"
    )
    return result, json.loads(out.read_text())


def by_suite_id(doc: Any) -> dict[str, dict[str, Any]]:
    """The result records of a results document, by test id."""
    return {r["suite_id"]: r for r in doc["results"]}
