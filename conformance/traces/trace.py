"""Trace files: a failing test's calls, as the backend answered them, and how to map
them onto another run.

Every failure writes one (``--acl-trace-dir``; ``acl-conformance run`` puts them
in ``<report dir>/traces``).  A trace holds the calls in the order they were
made (the contract's snake_case names, arguments, return code, outputs, host
thread), the backend's fixture variables (name, size, the address it gave as
the symbol), its capabilities and the handle it offered as garbage.

Bytes (the data a call wrote into host memory, what a read brought back) are kept
inline as hex up to :data:`INLINE_LIMIT` bytes; larger values go to a binary *data
file* beside the trace (``X.trace.json`` -> ``X.trace.data``, named by the trace's
``data_file``), each distinct value once, zlib-compressed where that is smaller, and
named in the JSON by where it lies and its SHA-256 (``{"data": {...}}``): a trace of
a 16 MiB copy stays about the size of its data, never twice it in hex.
:func:`dump` writes a trace document so; :func:`load` reads both forms.

Handles and addresses differ from run to run: :class:`~.handles.Handles` maps a
recorded value onto the run at hand (or names it in C), a symbol (or a pointer
inside one) by the variable's name, a host pointer by the buffer it points into,
streams, events and gates by the call that created them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.constants import Capabilities
from acl_conformance.reference_impl.record import CallRecord

TRACE_FORMAT = "acl-conformance-trace/1"
"""The format (and its version) a trace file names; ``trace_schema.py`` describes it."""


INLINE_LIMIT = 4096
"""Bytes of one value a trace file keeps inline, as hex; larger ones go to its data file."""


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
        side = _side_file(doc, path)
        calls = []
        for k, c in enumerate(doc["calls"]):
            try:
                name = str(c["name"])
                if name not in CALLS:
                    raise TraceError(
                        f"trace {path}: call {k + 1} is {name!r}, not a call of the contract"
                    )
                if side is not None:
                    c = _with_data(c, side, path, k)
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


def data_file(path: Path) -> Path:
    """The data file of the trace file at ``path``: its name with ``.data`` for ``.json``."""
    return path.with_name(path.name.removesuffix(".json") + ".data")


def dump(doc: dict[str, Any], path: Path) -> None:
    """Write the trace document ``doc`` to ``path``: values of bytes (raw, or as
    ``{"hex": ...}``) up to :data:`INLINE_LIMIT` inline as hex, larger ones into the data
    file beside it (each distinct value once)."""
    side = data_file(path)
    stored: dict[str, dict[str, Any]] = {}
    with side.open("wb") as f:

        def value(v: Any) -> Any:
            if isinstance(v, dict) and set(v) == {"hex"} and len(v["hex"]) > 2 * INLINE_LIMIT:
                v = bytes.fromhex(v["hex"])
            if not isinstance(v, (bytes, bytearray, memoryview)):
                return v
            raw = bytes(v)
            if len(raw) <= INLINE_LIMIT:
                return {"hex": raw.hex()}
            digest = hashlib.sha256(raw).hexdigest()
            ref = stored.get(digest)
            if ref is None:
                packed = zlib.compress(raw, 1)
                small = len(packed) < len(raw)
                body = packed if small else raw
                ref = {"at": f.tell(), "size": len(raw), "stored": len(body), "zlib": small}
                ref["sha256"] = digest
                f.write(body)
                stored[digest] = ref
            return {"data": dict(ref)}

        calls = [
            {
                **c,
                "args": {k: value(v) for k, v in dict(c.get("args") or {}).items()},
                "outputs": {k: value(v) for k, v in dict(c.get("outputs") or {}).items()},
            }
            for c in doc.get("calls") or []
        ]
    out = {k: v for k, v in doc.items() if k not in ("calls", "data_file")}
    if stored:
        out["data_file"] = side.name
    else:
        side.unlink()
    out["calls"] = calls
    path.write_text(json.dumps(out, indent=1), encoding="utf-8")


def _side_file(doc: dict[str, Any], path: str) -> bytes | None:
    """The bytes of the data file a trace document names (None: it names none)."""
    name = doc.get("data_file")
    if name is None:
        return None
    side = Path(path).parent / str(name)
    try:
        return side.read_bytes()
    except OSError as exc:
        raise TraceError(
            f"trace {path}: its data file {side} cannot be read ({exc.strerror or exc})"
        ) from None


def _with_data(call: Any, side: bytes, path: str, k: int) -> Any:
    """``call`` (a trace document's) with each value kept in the data file read back."""
    if not isinstance(call, dict):
        return call

    def value(v: Any) -> Any:
        if not (isinstance(v, dict) and set(v) == {"data"}):
            return v
        ref = v["data"]
        try:
            at, size, n = int(ref["at"]), int(ref["size"]), int(ref["stored"])
            body = side[at : at + n]
            raw = zlib.decompress(body) if ref.get("zlib") else body
            ok = len(raw) == size and hashlib.sha256(raw).hexdigest() == ref["sha256"]
        except (KeyError, TypeError, ValueError, zlib.error):
            ok = False
        if not ok:
            raise TraceError(
                f"trace {path}: call {k + 1} names bytes its data file does not hold "
                "(a data file of another trace, or one cut short)"
            )
        return raw

    return {
        **call,
        "args": {a: value(v) for a, v in dict(call.get("args") or {}).items()},
        "outputs": {a: value(v) for a, v in dict(call.get("outputs") or {}).items()},
    }


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
