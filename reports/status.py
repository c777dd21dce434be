"""The statuses of a test and of a requirement: one enum, whose values are the words the
results document (results.json), the report (report.json, its schema's ``status``
enums) and the trace files use.

A *test* ends with one of :data:`TEST_STATUSES`; a *requirement* gets one of
:data:`REQUIREMENT_STATUSES` from the tests that carry it (``aggregate.py`` says how); a
*failure* a test found has one of the :data:`FAILURE_STATUSES`.  The documents hold the
plain string values (``Status.PASS.value == "pass"``); a member compares equal to its
value, so code reading a document compares with the members directly.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """What became of a test, or of a requirement."""

    PASS = "pass"
    """Test: it ran to its end and every check passed.  Requirement: checks of it ran, all
    passed, and every test that carries it ran to its end."""
    FAIL = "fail"
    """The backend broke a requirement (a failure the expectations file does not list)."""
    CRASH = "crash"
    """The backend died, raised or became unusable instead of answering."""
    TIMEOUT = "timeout"
    """A call into the backend did not return in time."""
    FLAKY = "flaky"
    """It failed, and the failing trace did not fail again when replayed against a fresh
    backend (neither a pass nor a fail)."""
    UNKNOWN = "unknown"
    """Requirement only: it could not be decided (the report's row says why)."""
    XFAIL = "xfail"
    """Every failure found is listed in the expectations file (an expected failure)."""
    XPASS = "xpass"
    """Test only: listed in the expectations file, and it passed (the entry is stale)."""
    NOT_SUPPORTED = "not_supported"
    """It needs a capability the backend does not declare."""
    SKIPPED = "skipped"
    """Test only: it does not apply (another profile, a skips file, a skip marker)."""
    DECLINED = "declined"
    """Test only: it stopped before a step that puts a masked requirement at stake (known to
    fail in this run, or listed), having checked what it could."""
    ERROR = "error"
    """Test only: the suite could not run it (a set-up or teardown error)."""

    def __str__(self) -> str:
        # The word itself, in f-strings and str() alike, on every Python version.
        return self.value


TEST_STATUSES: tuple[Status, ...] = (
    Status.PASS,
    Status.FAIL,
    Status.CRASH,
    Status.TIMEOUT,
    Status.NOT_SUPPORTED,
    Status.SKIPPED,
    Status.XFAIL,
    Status.XPASS,
    Status.ERROR,
    Status.DECLINED,
    Status.FLAKY,
)
"""What a test's record (results.json, and a requirement's ``tests`` in report.json) says."""

REQUIREMENT_STATUSES: tuple[Status, ...] = (
    Status.PASS,
    Status.FAIL,
    Status.NOT_SUPPORTED,
    Status.CRASH,
    Status.TIMEOUT,
    Status.FLAKY,
    Status.UNKNOWN,
    Status.XFAIL,
)
"""What a requirement's row says, in the order of the report's ``summary``."""

FAILURE_STATUSES: tuple[Status, ...] = (Status.FAIL, Status.CRASH, Status.TIMEOUT, Status.FLAKY)
"""The ``status`` of one failure a test found (and the status of a test it failed)."""

SHOWN: tuple[Status, ...] = (
    Status.PASS,
    Status.FAIL,
    Status.CRASH,
    Status.TIMEOUT,
    Status.FLAKY,
    Status.UNKNOWN,
    Status.XFAIL,
    Status.NOT_SUPPORTED,
)
"""The requirement statuses in the order the terminal, report.md and report.html count
them."""
