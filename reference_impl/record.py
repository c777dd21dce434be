"""One call as made: the record the trace, the harness and trace files share.

A :class:`CallRecord` is what was asked (the contract's snake_case name and its
arguments by parameter name, see :data:`~.calls.CALLS`), what came back (the
aclError code and the outputs by name), when, and from which host thread.  The
adapter wrapper writes one per call, the harness hands it back to the test that
made the call, failures keep them, and trace files store them as JSON (bytes
hex-encoded as ``{"hex": ...}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from .constants import ACL_SUCCESS

_JSON_FIELDS = ("seq", "name", "args", "code", "outputs", "thread", "started", "ended", "error")
"""The fields a trace file holds, in its order (``gates_open`` is the suite's own)."""


def _encode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"hex": bytes(value).hex()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"hex"}:
        return bytes.fromhex(value["hex"])
    return value


@dataclass
class CallRecord:
    """One call: what was asked, what came back, when, from which host thread."""

    seq: int
    name: str
    args: dict[str, Any]
    code: int | None = None
    """The aclError the call returned; None when the adapter raised instead."""
    outputs: dict[str, Any] = field(default_factory=dict)
    thread: int = 0
    """The host thread that made the call, as the harness (and the model) number them."""
    started: float = 0.0
    ended: float = 0.0
    error: str | None = None
    """Set when the adapter raised instead of answering."""
    gates_open: frozenset[int] = frozenset()
    """The gates the suite had opened when the call returned (for timing checks)."""

    def __getitem__(self, key: str) -> Any:
        return self.outputs[key]

    @property
    def ok(self) -> bool:
        return self.code == ACL_SUCCESS

    @property
    def acl_error(self) -> int:
        """The aclError of a call that answered (ValueError for one that raised)."""
        if self.code is None:
            raise ValueError(f"call #{self.seq} {self.name} raised: {self.error}")
        return self.code

    def to_json(self, raw: bool = False) -> dict[str, Any]:
        """The call as a trace file holds it (``raw``: bytes left as they are, for a document
        that ``traces.trace.dump`` writes, large ones into a side file)."""
        out: dict[str, Any] = {}
        for key in _JSON_FIELDS:
            value = getattr(self, key)
            if key in ("args", "outputs"):
                value = {k: v if raw else _encode(v) for k, v in value.items()}
            out[key] = value
        return out

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CallRecord:
        """The call a trace file holds (KeyError, TypeError or ValueError if malformed)."""
        return cls(
            int(doc["seq"]),
            str(doc["name"]),
            {a: _decode(v) for a, v in dict(doc["args"]).items()},
            None if doc.get("code") is None else int(doc["code"]),
            {a: _decode(v) for a, v in dict(doc.get("outputs") or {}).items()},
            int(doc.get("thread", 0)),
            float(doc.get("started", 0.0)),
            float(doc.get("ended", 0.0)),
            doc.get("error"),
        )
