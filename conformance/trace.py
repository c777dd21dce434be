"""Trace files: a failing test's calls, as the backend answered them, and how to map
them onto another run.

Every failure writes one (``--acl-trace-dir``; ``acl-conformance run`` puts them
in ``<report dir>/traces``).  A trace holds the calls in the order they were
made (the contract's snake_case names, arguments, return code, outputs, host
thread), the backend's fixture variables (name, size, the address it gave as
the symbol), its capabilities and the handle it offered as garbage.

Handles and addresses differ from run to run, so :class:`Translator` maps a
recorded value onto the run at hand: a symbol (or a pointer inside one) by the
variable's name, a host pointer by the buffer it points into, streams, events
and gates by the call that created them.  Values it does not know (NULL, a
garbage integer) pass unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.record import CallRecord

TRACE_FORMAT = "acl-conformance-trace/1"

HOST_POINTER_ARGS = ("src", "dst", "ptr", "host_ptr")


class TraceError(Exception):
    """A trace file that cannot be used; the message is one line naming the file."""


Call = CallRecord
"""A recorded call (the one record class of calls; this name is kept for its users)."""


@dataclass
class Trace:
    path: str
    test: str
    adapter: str
    adapter_options: dict[str, str]
    profile: str
    requirement: str | None
    message: str
    fixtures: list[dict[str, Any]]
    capabilities: dict[str, Any] | None
    invalid_handle: int | None
    calls: list[Call]


def load(path: str | Path) -> Trace:
    """Read a trace file (TraceError, one line, if it cannot be used)."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceError(f"trace {p}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise TraceError(f"trace {p}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("calls"), list):
        raise TraceError(f"trace {p}: not an acl-conformance trace (no list of calls)")
    calls = []
    for k, c in enumerate(doc["calls"]):
        try:
            name = str(c["name"])
            if name not in CALLS:
                raise TraceError(f"trace {p}: call {k + 1} is {name!r}, not a call of the contract")
            calls.append(CallRecord.from_json(c))
        except (KeyError, TypeError, ValueError) as exc:
            raise TraceError(f"trace {p}: call {k + 1} is malformed ({exc!r})") from None
    return Trace(
        str(p),
        str(doc.get("test") or doc.get("nodeid") or "?"),
        str(doc.get("adapter", "?")),
        {str(k): str(v) for k, v in dict(doc.get("adapter_options") or {}).items()},
        str(doc.get("profile", "spec")),
        doc.get("requirement"),
        str(doc.get("message", "")),
        list(doc.get("fixtures") or []),
        doc.get("capabilities"),
        doc.get("invalid_handle"),
        calls,
    )


@dataclass
class Translator:
    """Maps the recorded run's handles and addresses onto another run's."""

    old_fixtures: list[dict[str, Any]]
    new_fixtures: dict[str, int]
    """Name -> the address the run at hand gives as the symbol."""
    old_invalid: int | None = None
    new_invalid: int | None = None
    buffers: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Recorded buffer address -> (new address, size)."""
    handles: dict[tuple[str, int], int] = field(default_factory=dict)
    """(kind, recorded handle) -> new handle, kind one of stream, event, gate."""

    def learn(self, call: Call, outputs: dict[str, Any]) -> None:
        """Note what a replayed call created (its recorded and its new outputs)."""
        if call.code != 0:
            return
        if call.name in ("malloc_host", "malloc_pageable"):
            key = "host_ptr" if call.name == "malloc_host" else "ptr"
            old, new = call.outputs.get(key), outputs.get(key)
            if old and new:
                self.buffers[int(old)] = (int(new), int(call.args.get("size", 0)))
        for kind in ("stream", "event", "gate"):
            old, new = call.outputs.get(kind), outputs.get(kind)
            if call.name in ("create_stream", "create_event", "launch_gate") and old and new:
                self.handles[(kind, int(old))] = int(new)

    def symbol(self, value: int) -> int:
        for f in self.old_fixtures:
            base, size = int(f["address"]), int(f["size"])
            if base <= value < base + size and f["name"] in self.new_fixtures:
                return self.new_fixtures[f["name"]] + (value - base)
        return self.host(value)

    def host(self, value: int) -> int:
        for old, (new, size) in self.buffers.items():
            if old <= value < old + max(size, 1):
                return new + (value - old)
        return value

    def handle(self, kind: str, value: int) -> int:
        if value == 0:
            return 0
        if self.old_invalid is not None and value == self.old_invalid:
            return self.new_invalid if self.new_invalid is not None else value
        return self.handles.get((kind, value), value)

    def args(self, call: Call) -> dict[str, Any]:
        out = dict(call.args)
        for key, value in call.args.items():
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            if key == "symbol":
                out[key] = self.symbol(value)
            elif key in HOST_POINTER_ARGS:
                out[key] = self.host(value)
            elif key in ("stream", "event", "gate"):
                out[key] = self.handle(key, value)
        return out
