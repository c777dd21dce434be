"""The project's own tests.  ``pytester`` runs the suite's plugin in isolated sessions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from acl_conformance.adapters.cann import CannAdapter
from acl_conformance.adapters.cann import build

pytest_plugins = ["pytester"]


@pytest.fixture(scope="session")
def double_agent() -> Path:
    """The conformance agent built against the bundled C double (built once, cached)."""
    return build.build_agent_with_double(())


@pytest.fixture
def agent(double_agent: Path) -> Iterator[CannAdapter]:
    """A cann adapter on that agent, closed after the test."""
    a = CannAdapter(agent=str(double_agent))
    try:
        yield a
    finally:
        a.close()
