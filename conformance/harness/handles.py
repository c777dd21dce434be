"""The recorded run's handles and addresses: what each is called, and what it is now.

A trace holds the values one backend run gave: symbols (the fixture variables'
addresses), host buffers, streams, events, gates, and the handle it offered as
garbage.  :class:`Handles` learns them from the recorded calls (a buffer or a
handle from the outputs of the call that created it) and answers two questions
about a recorded value:

- :meth:`Handles.name`: its C expression, for a program that makes the calls
  again (the reproducer): ``&g_u32``, ``(const char *)&g_u32 + 2``, ``stream0``,
  ``pinned1 + 8``, ``(void *)garbage``;
- :meth:`Handles.now`: its value in the run at hand (replay): the same
  variable's address there, the buffer or stream the same call created there.

Values it does not know (a garbage integer, an address in nothing) keep their
recorded value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acl_conformance.reference_impl.record import CallRecord

HOST_POINTER_ARGS = ("src", "dst", "ptr", "host_ptr")
"""The arguments of the calls that are host addresses (mapped onto the run's buffers)."""

CREATES: Mapping[str, tuple[str, str]] = {
    "create_stream": ("stream", "stream"),
    "create_event": ("event", "event"),
    "launch_gate": ("gate", "gate"),
    "malloc_host": ("host_ptr", "pinned"),
    "malloc_pageable": ("ptr", "pageable"),
}
"""CallRecord -> (the output holding what it created, the stem of its C name: its handle
type, or the memory of a host buffer)."""

HANDLE_TYPES = ("stream", "event", "gate")
"""The types of handle, each also the name of the argument that passes one."""

_HANDLE_TYPE_OF_CTYPE = {"aclrtStream": "stream", "aclrtEvent": "event"}

GARBAGE = "(void *)garbage"
"""The C name of the handle the recorded backend offered as garbage (the prelude's)."""


@dataclass
class _Known:
    """Something a recorded call created."""

    name: str
    """Its C variable."""
    now: int | None
    """What the same call gave in the run at hand (None: not replaying)."""
    size: int = 0
    """For a host buffer: its size in bytes."""


class Handles:
    """The recorded run's handles and addresses (see the module's docstring)."""

    def __init__(
        self,
        fixtures: list[dict[str, Any]],
        invalid: int | None,
        fixtures_now: Mapping[str, int] | None = None,
        invalid_now: int | None = None,
    ) -> None:
        self.fixtures = fixtures
        """The recorded fixture variables: name, size, the address given as the symbol."""
        self.invalid = invalid
        self.fixtures_now = dict(fixtures_now or {})
        """Name -> the address the run at hand gives as the symbol."""
        self.invalid_now = invalid_now
        self._buffers: dict[int, _Known] = {}
        self._handles: dict[tuple[str, int], _Known] = {}
        self._counts: dict[str, int] = {}

    # -- learning ---------------------------------------------------------
    def learn(self, call: CallRecord, now: Mapping[str, Any] | None = None) -> str | None:
        """Note what ``call`` created; returns the C variable it is received into (None
        when the call creates nothing, or was passed NULL for it).

        ``now``: the outputs of the same call in the run at hand (replay).  What a
        call created is known only when it succeeded in the recorded run (and, when
        replaying, gave a value again).
        """
        created = CREATES.get(call.name)
        if created is None:
            return None
        key, stem = created
        if call.args.get(f"null_{key}"):
            return None
        n = self._counts.get(stem, 0)
        self._counts[stem] = n + 1
        name = f"{stem}{n}"
        old = call.outputs.get(key)
        new = None if now is None else now.get(key)
        if call.code != 0 or not old or (now is not None and not new):
            return name
        known = _Known(name, None if new is None else int(new))
        if stem in HANDLE_TYPES:
            self._handles[(stem, int(old))] = known
        else:
            known.size = int(call.args.get("size", 0))
            self._buffers[int(old)] = known
        return name

    # -- lookup -----------------------------------------------------------
    def _fixture(self, value: int) -> tuple[dict[str, Any], int] | None:
        for f in self.fixtures:
            base, size = int(f["address"]), int(f["size"])
            if base <= value < base + size:
                return f, value - base
        return None

    def _buffer(self, value: int) -> tuple[int, _Known, int] | None:
        for base, known in self._buffers.items():
            if base <= value < base + max(known.size, 1):
                return base, known, value - base
        return None

    def name(self, ctype: str, value: int) -> str | None:
        """The C expression of recorded ``value`` passed as a ``ctype`` (a name_of for
        :func:`~acl_conformance.reference_impl.calls.render_call`); None if it has none."""
        handle_type = _HANDLE_TYPE_OF_CTYPE.get(ctype)
        if handle_type is not None:
            return self.handle_name(handle_type, value)
        return self.address_name(value)

    def handle_name(self, handle_type: str, value: int) -> str | None:
        """The C variable a recorded stream, event or gate was received into."""
        if value == 0:
            return "NULL"
        if self.invalid is not None and value == self.invalid:
            return GARBAGE
        known = self._handles.get((handle_type, value))
        return None if known is None else known.name

    def address_name(self, value: int) -> str | None:
        """A recorded address as a C expression: in a variable, in a buffer, or garbage."""
        if value == 0:
            return "NULL"
        inside = self._fixture(value)
        if inside is not None:
            f, k = inside
            return f"&{f['name']}" if k == 0 else f"((const char *)&{f['name']} + {k})"
        buf = self._buffer(value)
        if buf is not None:
            _base, known, k = buf
            return known.name if k == 0 else f"({known.name} + {k})"
        if self.invalid is not None and value == self.invalid:
            return GARBAGE
        return None

    def now(self, arg: str, value: int) -> int:
        """What recorded ``value``, passed as argument ``arg``, is in the run at hand."""
        if arg in HANDLE_TYPES:
            if value == 0:
                return 0
            if self.invalid is not None and value == self.invalid:
                return self.invalid_now if self.invalid_now is not None else value
            known = self._handles.get((arg, value))
            return value if known is None or known.now is None else known.now
        if arg == "symbol":
            inside = self._fixture(value)
            if inside is not None and inside[0]["name"] in self.fixtures_now:
                f, k = inside
                return self.fixtures_now[f["name"]] + k
        if arg == "symbol" or arg in HOST_POINTER_ARGS:
            buf = self._buffer(value)
            if buf is not None and buf[1].now is not None:
                return buf[1].now + buf[2]
        return value

    def args_now(self, call: CallRecord) -> dict[str, Any]:
        """The arguments of recorded ``call`` for the run at hand."""
        out = dict(call.args)
        for key, value in call.args.items():
            if isinstance(value, int) and not isinstance(value, bool):
                out[key] = self.now(key, value)
        return out
