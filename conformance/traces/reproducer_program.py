"""The body of a reproducer being written: its statements, its data, its variables.

Each recorded call becomes one C statement, spelled by the one renderer of a
call (:func:`~acl_conformance.reference_impl.calls.render_call`, from the table
``CALLS``) with the program's own literals and variables; what is here is only
what the program adds: where out-parameters are received, the host buffers
(``posix_memalign``, ``memcpy`` of embedded data), the gates of the prelude, and
the checks of return codes and bytes.
"""

from __future__ import annotations

import hashlib
from typing import Any

from acl_conformance.conformance.harness.handles import CREATES
from acl_conformance.conformance.harness.handles import HANDLE_TYPES
from acl_conformance.conformance.harness.handles import Handles
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.calls import Param
from acl_conformance.reference_impl.calls import render_call
from acl_conformance.reference_impl.calls import render_value
from acl_conformance.reference_impl.outcome import AllowedAnswers
from acl_conformance.reference_impl.record import CallRecord

from .trace import Trace

EMBED_LIMIT = 8 << 20
"""Bytes of data (sources, expected values, starting contents) one program embeds in its
text; the rest goes to its data file."""

FILE_THRESHOLD = 64 << 10
"""An array larger than this goes to the program's data file, not its text."""

STATIC_TYPES = {
    "stream": ("aclrtStream", "NULL"),
    "event": ("aclrtEvent", "NULL"),
    "pinned": ("unsigned char *", "NULL"),
    "pageable": ("unsigned char *", "NULL"),
    "gate": ("gate_t", "GATE_INIT"),
}
"""Type of what a call creates -> the C type and initializer of the static holding it."""

_LOCAL_INIT = {"aclrtStreamStatus": "ACL_STREAM_STATUS_RESERVED", "char*": "{0}"}
"""Initializers of out-parameters received into locals (otherwise 0, NULL for pointers)."""

VERSION_SIZE = 128
"""Bytes of the buffer aclsysGetVersionStr writes the version into."""


class ReproducerError(Exception):
    """The trace cannot be turned into a program; the message is one line."""


def c_string(text: str) -> str:
    """``text`` as a C string literal on one line."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def c_comment(text: str) -> str:
    """``text`` safe inside a C comment, on one line."""
    return text.replace("*/", "* /").replace("\n", " ")


def bytes_literal(data: bytes) -> str:
    """A C initializer list, 24 bytes a line."""
    rows = []
    for i in range(0, len(data), 24):
        rows.append("    " + ", ".join(f"0x{b:02x}" for b in data[i : i + 24]))
    return "{\n" + ",\n".join(rows) + "\n}"


def allowed_codes(allowed: AllowedAnswers) -> tuple[list[int], bool, list[int]]:
    """(explicit codes, whether any non-zero code is allowed, the non-zero codes that are
    not: excluded by every "any error but" alternative, and not among the explicit)."""
    codes: set[int] = set()
    any_error = False
    excluded: set[int] | None = None
    for alt in allowed.alternatives:
        if alt.codes.values is None:
            any_error = True
            but = set(alt.codes.excluded)
            excluded = but if excluded is None else excluded & but
        else:
            codes |= set(alt.codes.values)
    return sorted(codes), any_error, sorted((excluded or set()) - codes)


class Program:
    """The C program being written, step by step."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.names = Handles(trace.fixtures, trace.invalid_handle)
        self.decls: list[str] = []
        """The statics holding what the calls create."""
        self.data: list[str] = []
        self.body: list[str] = []
        self.embedded = 0
        self.n_data = 0
        self.file_data: list[bytes] = []
        """The data file's contents, in order: arrays too large to embed (each once)."""
        self.file_size = 0
        self.loads: list[tuple[str, int]] = []
        """(C name, offset in the data file) of each array the program reads from it."""
        self._in_file: dict[bytes, str] = {}

    # -- data -------------------------------------------------------------
    def embed(self, data: bytes, what: str) -> str:
        """The name of a new array holding ``data`` (``what`` names it in a comment): a
        static one in the text, or, past :data:`FILE_THRESHOLD` or :data:`EMBED_LIMIT` in
        all, a pointer into the data file the program reads at its start (each distinct
        array once)."""
        if len(data) > FILE_THRESHOLD or self.embedded + len(data) > EMBED_LIMIT:
            return self._from_file(data, what)
        self.embedded += len(data)
        name = f"data{self.n_data}"
        self.n_data += 1
        self.data.append(f"static const unsigned char {name}[{len(data)}] = {bytes_literal(data)};")
        return name

    def _from_file(self, data: bytes, what: str) -> str:
        key = hashlib.sha256(data).digest()
        name = self._in_file.get(key)
        if name is not None:
            return name
        name = self._in_file[key] = f"data{self.n_data}"
        self.n_data += 1
        self.data.append(
            f"static const unsigned char *{name} = NULL; /* {len(data)} bytes at "
            f"{self.file_size} of the data file: {c_comment(what)} */"
        )
        self.loads.append((name, self.file_size))
        self.file_data.append(data)
        self.file_size += len(data)
        return name

    # -- values -----------------------------------------------------------
    def value(self, call: CallRecord, arg: str) -> str:
        """Argument ``arg`` of ``call`` as the program spells it."""
        param = next(p for p in CALLS[call.name].params if p.name == arg)
        return render_value(param, call.args.get(arg), self.names.name, exact=True)

    def gate(self, value: int) -> str:
        """The gate the recorded handle ``value`` stands for (a ``gate_t`` of the prelude)."""
        name = self.names.handle_name("gate", value)
        return name if name is not None else f"(void *)(uintptr_t)0x{value:x}ULL"

    # -- statements -------------------------------------------------------
    def add_call(self, call: CallRecord) -> str:
        """The C statement of recorded ``call``; returns the C expression of its
        destination for a read from a symbol (else "")."""
        created = self.names.learn(call)
        if created is not None:
            ctype, init = STATIC_TYPES[CREATES[call.name][1]]
            self.decls.append(f"static {ctype} {created} = {init};")
        self.body.append("    " + self._statement(call, created))
        if call.name in ("memcpy_from_symbol", "memcpy_from_symbol_async"):
            return self.value(call, "dst")
        return ""

    def _statement(self, call: CallRecord, created: str | None) -> str:
        a = call.args
        if call.name == "malloc_pageable":
            # Page-aligned, as the suite's backends give it: the suite registers
            # such buffers (aclrtHostRegisterV2 wants 4 KiB alignment).
            size = self.value(call, "size")
            return f"ret = posix_memalign((void **)&{created}, 4096, {size}) == 0 ? 0 : 1;"
        if call.name == "write_host":
            data = bytes(a["data"])
            src = self.embed(data, "a host write")
            return f"memcpy({self.value(call, 'dst')}, {src}, {len(data)}); ret = 0;"
        if call.name == "open_gate":
            return f"gate_open(&{self.gate(int(a['gate']))}); ret = 0;"
        locals_: list[str] = []

        def receive(out: Param) -> str:
            return self._receive(call, created, out, locals_)

        c = render_call(call.name, a, self.names.name, receive=receive, exact=True)
        statement = f"ret = {c};" if CALLS[call.name].acl else f"{c}; ret = 0;"
        return f"{{ {' '.join(locals_)} {statement} }}" if locals_ else statement

    @staticmethod
    def _receive(call: CallRecord, created: str | None, out: Param, locals_: list[str]) -> str:
        """Where the program receives out-parameter ``out`` of ``call``: the static holding
        what the call creates, else a local declared (into ``locals_``) for the call."""
        if created is not None:
            if call.name == "launch_gate":
                return f"gate_wait, &{created}"  # the prelude's host function, its gate
            if CREATES[call.name][1] in HANDLE_TYPES:
                return f"&{created}"
            return f"(void **)&{created}"  # a host buffer, held as unsigned char *
        init = _LOCAL_INIT.get(out.ctype, "NULL" if out.ctype.endswith("*") else "0")
        if out.ctype == "char*":
            # The C function also takes the package's name first (the contract's call
            # has no parameter for it): the runtime's version, as the suite asks.
            locals_.append(f"char {out.name}[{VERSION_SIZE}] = {init};")
            return f'(char *)"runtime", {out.name}'
        locals_.append(f"{out.ctype} {out.name} = {init};")
        return f"&{out.name}"

    # -- checks -----------------------------------------------------------
    def check_code(self, label: str, allowed: AllowedAnswers) -> None:
        codes, any_error, but = allowed_codes(allowed)
        arr = "{" + ", ".join(str(c) for c in codes) + "}" if codes else "{0}"
        not_arr = "{" + ", ".join(str(c) for c in but) + "}" if but else "{0}"
        self.body.append(
            f"    {{ static const aclError ok[] = {arr}; static const aclError but[] = {not_arr}; "
            f"check_code({c_string(label)}, ret, ok, {len(codes)}, {int(any_error)}, "
            f"but, {len(but)}); }}"
        )

    def check_bytes(
        self, label: str, dst: str, offset: int, allowed: list[tuple[int, int, Any]]
    ) -> None:
        for a, b, values in allowed:
            if values is None:
                continue
            arrays = [self.embed(bytes(v), label) for v in values]
            table = ", ".join(arrays)
            self.body.append(
                # Not static: an array read from the data file is known at run time only.
                f"    {{ const unsigned char *const v[] = {{{table}}}; "
                f"check_bytes({c_string(label)}, (const unsigned char *){dst} + {a - offset}, "
                f"{a}, {b - a}, v, {len(arrays)}); }}"
            )
