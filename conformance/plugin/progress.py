"""``--acl-progress``: each suite test named with its status as it ends, on a line of
its own (what ``acl-conformance run`` can show instead of pytest's dots).

pytest's own ``-v`` does name each test, by its node id; but a run whose rootdir is
not above the suite (``acl-conformance run`` puts it at the report directory) has node
ids without the file (``::test_x[1]``).  This names the test by its suite id.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from acl_conformance.conformance.gating import results


class Progress:
    """Names each suite test as its final report arrives (in pytest-xdist's controller
    too: the workers' reports reach it)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        sid = props.get("suite_id")
        if sid is None:
            return
        status = results.status_of(report, props)
        if status is None:
            return
        writer = self.config.get_terminal_writer()
        if writer.width_of_current_line:
            writer.line()
        writer.line(f"{status} {sid} ({report.duration:.1f} s)")

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> Generator[None, Any, Any]:
        """No progress letter (the dot) for a suite test: its line says more."""
        status = yield
        if "suite_id" in dict(report.user_properties) and isinstance(status, tuple):
            category, _letter, word = status
            return category, "", word
        return status
