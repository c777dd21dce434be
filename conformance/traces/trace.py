"""Trace files: a failing test's calls, as the backend answered them, and how to map
them onto another run.

Every failure writes one (``--acl-trace-dir``; ``acl-conformance run`` puts them
in ``<report dir>/traces``).  A trace holds the calls in the order they were
made (the contract's snake_case names, arguments, return code, outputs, host
thread), the backend's fixture variables (name, size, the address it gave as
the symbol), its capabilities and the handle it offered as garbage.

Handles and addresses differ from run to run: :class:`~.handles.Handles` maps a
recorded value onto the run at hand (or names it in C), a symbol (or a pointer
inside one) by the variable's name, a host pointer by the buffer it points into,
streams, events and gates by the call that created them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.constants import Capabilities
from acl_conformance.reference_impl.record import CallRecord

TRACE_FORMAT = "acl-conformance-trace/1"
"""The format (and its version) a trace file names; ``trace_schema.py`` describes it."""


class TraceError(Exception):
    """A trace file that cannot be used; the message is one line naming the file."""


@dataclass
class Trace:
    """A failing test's calls, as the backend answered them, and what a replay needs."""

    path: str
    """The file it was read from (or where it stands in messages)."""
    test: str
    adapter: str
    adapter_options: dict[str, str]
    profile: str
    requirement: str | None
    message: str
    fixtures: list[dict[str, Any]]
    """The backend's fixture variables: name, size, and the address it gave as the symbol."""
    capabilities: Capabilities | None
    """What the backend declared (None: not recorded)."""
    invalid_handle: int | None
    calls: list[CallRecord]
    status: str | None = None
    """The test's status when it was written (``fail``, ``crash``, ...), if recorded."""

    def to_json(self) -> dict[str, Any]:
        """The trace file's document."""
        doc: dict[str, Any] = {"format": TRACE_FORMAT, "test": self.test}
        doc["adapter"] = self.adapter
        doc["profile"] = self.profile
        if self.status is not None:
            doc["status"] = self.status
        doc["requirement"] = self.requirement
        doc["message"] = self.message
        doc["adapter_options"] = dict(self.adapter_options)
        doc["fixtures"] = [dict(f) for f in self.fixtures]
        doc["capabilities"] = (
            dataclasses.asdict(self.capabilities) if self.capabilities is not None else None
        )
        doc["invalid_handle"] = self.invalid_handle
        doc["calls"] = [c.to_json() for c in self.calls]
        return doc

    @classmethod
    def from_json(cls, doc: Any, path: str) -> Trace:
        """The trace of a trace file's document (``path`` names it in errors; TraceError,
        one line, if it cannot be used)."""
        if not isinstance(doc, dict) or not isinstance(doc.get("calls"), list):
            raise TraceError(f"trace {path}: not an acl-conformance trace (no list of calls)")
        calls = []
        for k, c in enumerate(doc["calls"]):
            try:
                name = str(c["name"])
                if name not in CALLS:
                    raise TraceError(
                        f"trace {path}: call {k + 1} is {name!r}, not a call of the contract"
                    )
                calls.append(CallRecord.from_json(c))
            except (KeyError, TypeError, ValueError) as exc:
                raise TraceError(f"trace {path}: call {k + 1} is malformed ({exc!r})") from None
        status = doc.get("status")
        return cls(
            path,
            str(doc.get("test") or doc.get("nodeid") or "?"),
            str(doc.get("adapter", "?")),
            {str(k): str(v) for k, v in dict(doc.get("adapter_options") or {}).items()},
            str(doc.get("profile", "spec")),
            doc.get("requirement"),
            str(doc.get("message", "")),
            list(doc.get("fixtures") or []),
            _capabilities(doc.get("capabilities"), path),
            doc.get("invalid_handle"),
            calls,
            None if status is None else str(status),
        )


def _capabilities(doc: Any, path: str) -> Capabilities | None:
    """The capabilities a trace records (fields it does not name keep their defaults;
    names this version does not know are left out)."""
    if not isinstance(doc, Mapping):
        return None
    defaults = dataclasses.asdict(Capabilities())
    given = {}
    for name, value in doc.items():
        if name in defaults:
            try:
                given[name] = type(defaults[name])(value)
            except (TypeError, ValueError):
                raise TraceError(
                    f"trace {path}: capability {name}={value!r} is malformed"
                ) from None
    return Capabilities(**given)


def load(path: str | Path) -> Trace:
    """Read a trace file (TraceError, one line, if it cannot be used)."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceError(f"trace {p}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise TraceError(f"trace {p}: not JSON ({exc})") from None
    return Trace.from_json(doc, str(p))


def opened_during(calls: list[CallRecord]) -> dict[int, list[CallRecord]]:
    """For each call (by its seq), the open_gate calls that began while it had not yet
    returned: made by a timer while it waited, they must be made from a timer again when
    the trace is replayed or written as a program."""
    out: dict[int, list[CallRecord]] = {}
    for i, c in enumerate(calls):
        if c.name == "open_gate":
            continue
        for g in calls[i + 1 :]:
            if g.name == "open_gate" and g.started < c.ended:
                out.setdefault(c.seq, []).append(g)
    return out
