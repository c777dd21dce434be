"""The pytest plugin (entry point ``pytest11``): options, markers, fixtures, checks.

Options (all start with ``--acl-``): the backend (``--acl-adapter``, default
``sim``; ``--acl-adapter-option KEY=VALUE``), the profile (``--acl-profile
spec|cann``), an expectations file, a skips file, the Hypothesis settings profile
(``standard``, ``dev``, ``thorough``), an example budget and a heartbeat for long tests.

Markers:

- ``requirement(*ids)``: the catalogue requirements a test checks.  When the
  whole suite is collected, collection fails if a requirement of the profile
  has no test; a test that names an unknown ID always fails collection.
- ``needs(**capabilities)``: skipped as *not supported* when the backend lacks
  a capability (``devices=2``, ``gate=True``, ...).
- ``profile(name)``: the test applies to that profile only.

The plugin does nothing to test runs that do not collect the suite.

pytest takes the hooks and fixtures of the module the entry point names, so the
modules' hooks and fixtures are imported here (pytest looks them up by name); the
hooks that need an object of their own (more than one implementation of a hook,
pytest-xdist's optional hooks, the heartbeat, the collector of the results, whose hook is
given no config) are registered by ``pytest_configure``.

May import: reference_impl, adapters, reports, conformance.harness, conformance.gating,
conformance.session, conformance.traces.
"""

from __future__ import annotations

from .collection import pytest_collection_modifyitems
from .configure import pytest_configure
from .configure import pytest_report_header
from .options import pytest_addoption
from .options import pytest_cmdline_main
from .reporting import pytest_runtest_call
from .reporting import pytest_runtest_makereport
from .runtest import acl_suite
from .runtest import fresh_harness
from .runtest import harness
from .runtest import pytest_pyfunc_call
from .runtest import pytest_runtest_protocol
from .runtest import pytest_runtest_setup
from .runtest import pytest_runtest_teardown
from .session import pytest_sessionfinish
from .session import pytest_sessionstart

__all__ = [
    "acl_suite",
    "fresh_harness",
    "harness",
    "pytest_addoption",
    "pytest_cmdline_main",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_pyfunc_call",
    "pytest_report_header",
    "pytest_runtest_call",
    "pytest_runtest_makereport",
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_teardown",
    "pytest_sessionfinish",
    "pytest_sessionstart",
]
