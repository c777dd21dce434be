"""Hypothesis settings profiles of the suite: standard, dev, thorough.

``standard`` is what conformance runs and CI gates use (in either mode):
derandomised (the same run gives the same verdict), no deadline (a backend's speed
is not a conformance question), no example database (a run does not depend on earlier
runs), and the blob printed so that a failure can be replayed exactly.  Its old name
``ci`` is still accepted (:data:`HYPOTHESIS_PROFILE_ALIASES`): "ci" alone now means the
mode.

This is also the one module that touches Hypothesis internals (the time limit on
shrinking, and the settings of one run of a @given test): see its section "Hypothesis
internals".
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import settings

# re-exported: the command lines take their default from here
from acl_conformance.conformance.harness.backend_calls import (
    CALL_TIMEOUT_SECONDS as CALL_TIMEOUT_SECONDS,
)
from acl_conformance.conformance.harness.hangs import FACTOR
from acl_conformance.conformance.harness.hangs import FLOOR_SECONDS

HYPOTHESIS_PROFILES = ("standard", "dev", "thorough")
"""The Hypothesis settings profiles of the suite (``--acl-hypothesis-profile``)."""

HYPOTHESIS_PROFILE_ALIASES = {"ci": "standard"}
"""Old name -> Hypothesis settings profile: accepted wherever a profile is named, and
read as the profile (``standard`` was called ``ci`` before the ci mode took the word)."""


def hypothesis_profile(name: str) -> str:
    """The Hypothesis settings profile ``name`` names (itself, or the one an old alias
    stands for); a name that is neither is returned as it is, for the caller to refuse."""
    return HYPOTHESIS_PROFILE_ALIASES.get(name, name)


CALL_TIMEOUT_OPTION: dict[str, object] = dict(
    type=float,
    metavar="SECONDS",
    help="per-call limit before a backend is reported as TIMEOUT (default: it adapts to "
    f"the backend, the larger of {FLOOR_SECONDS:g} s and {FACTOR:g} x the slowest call "
    "that completed in the run)",
)
"""The call-timeout option as every command line spells it (``acl-conformance run`` and
``replay``, and the plugin's ``--acl-call-timeout``): argparse/pytest keywords."""

_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

_EVERY_HYPOTHESIS_PROFILE: dict[str, object] = dict(
    deadline=None, print_blob=True, suppress_health_check=_SLOW
)
"""What the three profiles share: no deadline, the blob printed, no slow-data health checks."""

_HYPOTHESIS_PROFILES: dict[str, dict[str, object]] = {
    "standard": dict(
        _EVERY_HYPOTHESIS_PROFILE,
        derandomize=True,
        database=None,
        max_examples=100,
        stateful_step_count=50,
    ),
    "dev": dict(_EVERY_HYPOTHESIS_PROFILE, max_examples=15, stateful_step_count=20),
    "thorough": dict(
        _EVERY_HYPOTHESIS_PROFILE, database=None, max_examples=300, stateful_step_count=80
    ),
}


def registered_hypothesis_profile(name: str) -> str:
    """The name under which Hypothesis knows the suite's profile ``name`` (kept apart from
    Hypothesis' own profiles, its 'ci' among them)."""
    return f"acl-conformance-{name}"


NO_SHRINK = tuple(p for p in Phase if p is not Phase.shrink)

SHRINK_SECONDS = {"standard": 30, "dev": 30, "thorough": 300}
"""How long one test may spend shrinking a failure.  Hypothesis' own limit is five
minutes; a backend whose failure comes and goes (a timing bug) can spend all of it on
candidates that do not fail, in every test that meets the bug.  The smallest sequence
found by then is reported."""


# -- Hypothesis internals: this module is the only one that touches them -------------------
#
# Hypothesis offers no public way to do either of the two things below, and the suite
# needs both:
#
# - a limit on the time spent shrinking: there is no setting for it; the engine reads the
#   module constant ``hypothesis.internal.conjecture.engine.MAX_SHRINKING_SECONDS`` (five
#   minutes) when it starts shrinking;
# - another shrink phase for one run of a @given test: its settings are fixed when it is
#   decorated (a later ``load_profile`` does not reach it, and ``@settings`` may be applied
#   only once), and Hypothesis keeps them on the test's ``_hypothesis_internal_use_settings``
#   attribute, which it reads each time the test runs.  (A state machine's settings are its
#   TestCase's public ``settings`` attribute; the plugin sets that directly.)
#
# tests/test_hypothesis_internals.py checks that both still behave as assumed here, and
# that no other shipped module touches Hypothesis internals: a release that changes them
# fails that test instead of changing the suite's behaviour quietly.

_GIVEN_SETTINGS = "_hypothesis_internal_use_settings"
"""Where Hypothesis keeps the settings of a @given test (read each time the test runs)."""


def limit_shrinking(seconds: float) -> None:
    """Set Hypothesis' limit on the time spent shrinking (left alone if a release no longer
    has the constant: tests/test_hypothesis_internals.py fails then)."""
    from hypothesis.internal.conjecture import engine

    if isinstance(getattr(engine, "MAX_SHRINKING_SECONDS", None), (int, float)):
        engine.MAX_SHRINKING_SECONDS = seconds  # type: ignore[assignment]


def without_shrinking(test: object) -> Callable[[], None] | None:
    """Run the @given test ``test`` without the shrink phase until the returned function is
    called, which puts its settings back; None (and nothing done) if ``test`` is not a
    @given test."""
    current = getattr(test, _GIVEN_SETTINGS, None)
    if not isinstance(current, settings):
        return None
    setattr(test, _GIVEN_SETTINGS, settings(current, phases=NO_SHRINK))
    return lambda: setattr(test, _GIVEN_SETTINGS, current)


def register(max_examples: int | None = None, no_shrink: bool = False) -> None:
    """Register the three profiles (``max_examples`` overrides each profile's count;
    ``no_shrink``: a failure is reported as found, unshrunk)."""
    for name, kw in _HYPOTHESIS_PROFILES.items():
        opts = dict(kw)
        if max_examples is not None:
            opts["max_examples"] = max_examples
        if no_shrink:
            opts["phases"] = NO_SHRINK
        settings.register_profile(registered_hypothesis_profile(name), **opts)  # type: ignore[arg-type]


def load(name: str, max_examples: int | None = None, no_shrink: bool = False) -> None:
    """Load the suite's Hypothesis settings profile ``name`` (or the one an alias names)."""
    name = hypothesis_profile(name)
    register(max_examples, no_shrink)
    limit_shrinking(SHRINK_SECONDS[name])
    settings.load_profile(registered_hypothesis_profile(name))


# -- the bug hunt (``acl-conformance hunt``) ---------------------------------------------

HUNT_PROFILE = "hunt"
"""The Hypothesis settings profile of a bug hunt: not derandomised, with a shared example
database (HypoFuzz fuzzes only tests that use the default database)."""

HUNT_STEPS = 80
"""Steps per machine example in a hunt: the deeper sequences the gate's 50 do not reach."""


class HuntDatabaseError(ValueError):
    """A hunt's database that cannot be used (the message is one line)."""


def hunt_database(where: str) -> object:
    """The example database a hunt shares with other hosts: Redis through Hypothesis' own
    class when ``where`` is a ``redis://`` address (the ``redis`` package installed), else
    a directory (``where``/examples; shared storage works)."""
    if where.startswith(("redis://", "rediss://", "unix://")):
        try:
            from hypothesis.extra.redis import RedisExampleDatabase
            from redis import Redis  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise HuntDatabaseError(
                f"--database {where}: Redis needs the redis package (pip install redis)"
            ) from None
        return RedisExampleDatabase(Redis.from_url(where))
    from hypothesis.database import DirectoryBasedExampleDatabase

    return DirectoryBasedExampleDatabase(str(Path(where) / "examples"))


def load_hunt(database: object, max_examples: int | None = None) -> None:
    """Load the hunt's settings profile, sharing ``database`` (see :func:`hunt_database`)."""
    opts = dict(
        _EVERY_HYPOTHESIS_PROFILE,
        database=database,
        derandomize=False,
        max_examples=max_examples or 100,
        stateful_step_count=HUNT_STEPS,
    )
    name = registered_hypothesis_profile(HUNT_PROFILE)
    settings.register_profile(name, **opts)  # type: ignore[arg-type]
    limit_shrinking(SHRINK_SECONDS["standard"])
    settings.load_profile(name)
