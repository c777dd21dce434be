"""A small world for model tests: fixture variables, buffers and streams at fixed addresses.

The addresses are arbitrary integers: the model only needs them to be distinct.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from acl_conformance.reference_impl import CallRecord
from acl_conformance.reference_impl import Capabilities
from acl_conformance.reference_impl import Judgement
from acl_conformance.reference_impl import Model
from acl_conformance.reference_impl import Violation
from acl_conformance.reference_impl import judge
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.observation import observe
from acl_conformance.reference_impl.outcome import AllowedAnswers

SYMBOLS = {"g_u8": 1, "g_u32": 4, "g_u64": 8, "g_arr256": 256, "g_arr4k": 4096}
SYMBOL_BASE = 0x5555_0000_0000
PINNED = 0x7F00_0000_0000
PAGEABLE = 0x6000_0000_0000
BUF_SIZE = 8192


@dataclass
class Announced:
    """A call announced to the model, to settle with the backend's answer."""

    model: Model
    judgement: Judgement

    @property
    def allowed_answers(self) -> AllowedAnswers:
        return self.judgement.allowed_answers

    def settle(self, code: int, **outputs: Any) -> list[Violation]:
        return self.model.settle(self.judgement, code, **outputs)


def announce(model: Model, name: str, thread: int = 0, **args: Any) -> Announced:
    """Announce ``name(**args)`` made by host ``thread`` to ``model``."""
    return Announced(model, model.judge(name, thread, **args))


def call(
    model: Model,
    name: str,
    code: int,
    thread: int = 0,
    outputs: Mapping[str, Any] | None = None,
    **args: Any,
) -> list[Violation]:
    """The model's judgement of ``name(**args)`` made by host ``thread``, answered ``code``
    and ``outputs`` (``observed``: the bytes a read left in its destination), as the suite
    judges a recorded call."""
    out = dict(outputs or {})
    observed = out.pop("observed", None)
    record = CallRecord(len(model.history) + 1, name, dict(args), code, out, thread)
    return judge(model, record, observed).violations


def observe_now(model: Model, device: int, name: str, offset: int, data: bytes) -> list[Violation]:
    """The model's judgement of bytes of variable ``name`` on ``device`` read now, by no
    call (a host-time observation)."""
    sym = model.world.symbols_by_name[name]
    return observe(model, device, sym, offset, bytes(data), None)


def initial(name: str, size: int) -> bytes:
    seed = sum(name.encode())
    return bytes((seed + 7 * i + 0x5A) & 0xFF or 1 for i in range(size))


@dataclass
class W:
    """A model with its handles."""

    model: Model
    sym: dict[str, int] = field(default_factory=dict)
    pinned: int = PINNED
    pageable: int = PAGEABLE
    stream: int = 0x100
    other_stream: int = 0x200
    foreign_stream: int = 0x300
    """A stream created on device 1."""

    def ok(
        self, name: str, thread: int = 0, outputs: dict[str, object] | None = None, **args: object
    ) -> None:
        v = call(self.model, name, ACL_SUCCESS, thread, outputs, **args)
        assert not v, "\n".join(x.render() for x in v)

    def allowed(self, name: str, thread: int = 0, **args: object):
        return self.model.judge(name, thread, **args).allowed_answers

    def observe(self, name: str, data: bytes, offset: int = 0, device: int = 0) -> list[str]:
        return [v.render() for v in observe_now(self.model, device, name, offset, data)]


def make_world(profile: str = "cann", devices: int = 2, default_stream: bool = True) -> W:
    m = Model(profile, Capabilities(devices=devices, default_stream=default_stream))
    w = W(m)
    addr = SYMBOL_BASE
    for name, size in SYMBOLS.items():
        m.add_symbol(name, addr, size)
        w.sym[name] = addr
        for d in range(devices):
            observe_now(m, d, name, 0, initial(name, size))  # the contents before any copy
        addr += size
    w.ok("init", config_path=None)
    if devices > 1:
        w.ok("set_device", device_id=1)
        w.ok("create_stream", outputs={"stream": w.foreign_stream})
    w.ok("set_device", device_id=0)
    w.ok("create_stream", outputs={"stream": w.stream})
    w.ok("create_stream", outputs={"stream": w.other_stream})
    w.ok(
        "malloc_host",
        size=BUF_SIZE,
        outputs={"host_ptr": PINNED, "contents": bytes(range(256)) * 32},
    )
    w.ok(
        "malloc_pageable",
        size=BUF_SIZE,
        outputs={"ptr": PAGEABLE, "contents": bytes(255 - (i % 256) for i in range(BUF_SIZE))},
    )
    return w
