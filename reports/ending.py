"""Did the run reach its end?  A run that did not, for any reason, vouches for nothing it
did not finish: its verdict is "not conformant", its gate fails, what it did not decide is
``unknown``, and every format says so ("did not reach its end: <why>").

The reasons, from the results document alone:

- it was stopped (SIGINT, SIGTERM, its ``--time-budget``): ``interrupted``, set by
  ``acl-conformance run``;
- what the plugin saw go wrong (``did_not_reach_its_end``): a worker that died or was
  lost (the test it was running is named), pytest's internal error, the suite's own error
  while recording a failure (a MemoryError, say), tests that never ran;
- pytest's exit status other than 0 (all passed), 1 (some failed) or 5 (nothing to run):
  2 (interrupted), 3 (an internal error), 4 (a usage error) or anything else;
- and, added by ``acl-conformance run``, a report that could not be written whole.
"""

from __future__ import annotations

import signal
from typing import Any

ENDED = "did_not_reach_its_end"
"""The results document's list of reasons (``conformance/gating/results.py`` writes it)."""

NORMAL_EXIT = frozenset({0, 1, 5})
"""pytest's exit statuses of a session that reached its end: all passed, some failed, no
test to run."""

_EXIT_MEANING = {
    2: "interrupted",
    3: "an internal error",
    4: "a usage error",
}


def reasons(results: dict[str, Any]) -> list[str]:
    """Why the run did not reach its end, in one line each ([] when it did)."""
    out: list[str] = []
    if results.get("interrupted"):
        out.append(f"stopped, {results['interrupted']}")
    out += [str(r) for r in results.get(ENDED) or [] if r]
    status = results.get("exitstatus")
    if (
        isinstance(status, int)
        and status not in NORMAL_EXIT
        and not results.get("interrupted")
        and not any(f"exit status {status}" in r for r in out)
    ):
        out.append(f"pytest ended with exit status {status} ({_meaning(status)})")
    return list(dict.fromkeys(out))


def _meaning(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return _EXIT_MEANING.get(status, "not an exit status of a session that ended")


def why(results: dict[str, Any]) -> str | None:
    """The reasons in one line, or None for a run that reached its end."""
    found = reasons(results)
    return "; ".join(found) if found else None
