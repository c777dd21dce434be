"""Helpers of the plugin tests: a pytester run of one module of the real suite."""

from __future__ import annotations

KINDS = "acl_conformance.conformance.suite.test_kinds"
"""The suite module these runs collect: small, and needs nothing but the simulator."""


def on_kinds(*args: str) -> list[str]:
    """pytest's arguments for a run of :data:`KINDS` (no cache), then ``args``."""
    return ["-p", "no:cacheprovider", "--pyargs", KINDS, *args]
