"""A pytest plugin for the project's tests (``-p agent_counts_plugin``): at the end of a
suite run, each process (each pytest-xdist worker) writes what its Suite counted of the
backend instances it started to ``$ACL_TEST_AGENT_COUNTS/agents-<worker>.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acl_conformance.conformance.plugin import shared


def pytest_sessionfinish(session: pytest.Session) -> None:
    suite = session.config.stash.get(shared.SUITE, None)
    where = os.environ.get("ACL_TEST_AGENT_COUNTS")
    if suite is None or not where:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    doc = {
        "instances": dict(suite.instances_started),
        "recovered": list(suite.recovered),
        "reset_failures": list(suite.reset_failures),
    }
    Path(where).mkdir(parents=True, exist_ok=True)
    (Path(where) / f"agents-{worker}.json").write_text(json.dumps(doc))
