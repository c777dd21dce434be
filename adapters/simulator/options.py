"""The simulator's options: defaults, validation, and parsing from strings (command line)."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import fields
from typing import Any

from .layout import DEFAULT_FIXTURES
from .streams import SCHEDULES

PINNED_READS = ("execute", "call")
"""When a pinned copy reads its source: when its task runs, or at the call (both legal)."""

PAGEABLE_WAITS = ("stream", "device")
"""What a pageable copy waits for before it copies: its own stream (CANN), or every
stream of its device (slower, and legal: the text only says it returns once the copy
is complete)."""


@dataclass(frozen=True)
class Options:
    """Validated simulator options."""

    devices: int = 2
    schedule: str = "eager"
    seed: int = 0
    pinned_read: str = "execute"
    max_delay_ms: float = 1.0
    """``random`` schedule: the largest delay before a task."""
    extra_fixtures: tuple[tuple[str, int], ...] = ()
    """Backend-declared variables beyond the standard ones, e.g. for benchmarks."""
    max_streams: int = 1984
    """Streams per device, the default stream included (CANN: 1984 on 950/A3/A2)."""
    host_limit: int = 1 << 32
    """The largest host allocation, in bytes; larger ones fail as out of memory."""
    host_reuse: bool = False
    """Hand freed host addresses out again (first fit), as malloc and pinned pools do."""
    pageable_waits: str = "stream"
    default_stream: bool = True
    """False: the backend has no default stream; NULL is rejected wherever a stream goes."""

    def describe(self) -> str:
        """The options that change behaviour, as ``name=value`` pairs."""
        parts = [
            f"devices={self.devices}",
            f"schedule={self.schedule}",
            f"pinned_read={self.pinned_read}",
        ]
        if self.schedule == "random":
            parts.append(f"seed={self.seed}")
        if self.host_reuse:
            parts.append("host_reuse=1")
        if self.pageable_waits != "stream":
            parts.append(f"pageable_waits={self.pageable_waits}")
        if not self.default_stream:
            parts.append("default_stream=0")
        return ", ".join(parts)


NAMES: tuple[str, ...] = tuple(f.name for f in fields(Options))


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"simulator option {name}={value!r}: expected an integer")
    try:
        return int(str(value), 0) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ValueError(f"simulator option {name}={value!r}: expected an integer") from None


def _float(name: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"simulator option {name}={value!r}: expected a number") from None


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    v = str(value).strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"simulator option {name}={value!r}: expected 1 or 0")


def _choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"simulator option {name}={value!r}: expected one of {', '.join(choices)}")
    return str(value)


def _fixtures(value: Any) -> tuple[tuple[str, int], ...]:
    """``"name:size,name:size"`` or a sequence of ``(name, size)`` pairs."""
    if isinstance(value, str):
        pairs: list[tuple[str, Any]] = []
        for item in value.split(","):
            if not item.strip():
                continue
            name, sep, size = item.strip().partition(":")
            if not sep:
                raise ValueError(
                    f"simulator option extra_fixtures={value!r}: expected name:size[,name:size...]"
                )
            pairs.append((name.strip(), size.strip()))
    else:
        pairs = [tuple(p) for p in value]
    out = tuple((str(n), _int("extra_fixtures", s)) for n, s in pairs)
    standard = {n for n, _ in DEFAULT_FIXTURES}
    for n, s in out:
        if n in standard:
            raise ValueError(f"simulator option extra_fixtures: {n!r} is a standard fixture")
        if s <= 0:
            raise ValueError(f"simulator option extra_fixtures: {n!r} has size {s}")
    return out


def parse(raw: Mapping[str, Any]) -> Options:
    """Validate options given as Python values or as strings; ValueError names the bad one."""
    unknown = sorted(set(raw) - set(NAMES))
    if unknown:
        raise ValueError(f"unknown simulator option {unknown[0]!r} (known: {', '.join(NAMES)})")
    d = Options()
    opts = Options(
        devices=_int("devices", raw.get("devices", d.devices)),
        schedule=_choice("schedule", raw.get("schedule", d.schedule), SCHEDULES),
        seed=_int("seed", raw.get("seed", d.seed)),
        pinned_read=_choice("pinned_read", raw.get("pinned_read", d.pinned_read), PINNED_READS),
        max_delay_ms=_float("max_delay_ms", raw.get("max_delay_ms", d.max_delay_ms)),
        extra_fixtures=_fixtures(raw.get("extra_fixtures", d.extra_fixtures)),
        max_streams=_int("max_streams", raw.get("max_streams", d.max_streams)),
        host_limit=_int("host_limit", raw.get("host_limit", d.host_limit)),
        host_reuse=_bool("host_reuse", raw.get("host_reuse", d.host_reuse)),
        pageable_waits=_choice(
            "pageable_waits", raw.get("pageable_waits", d.pageable_waits), PAGEABLE_WAITS
        ),
        default_stream=_bool("default_stream", raw.get("default_stream", d.default_stream)),
    )
    if opts.devices < 1:
        raise ValueError(f"simulator option devices={opts.devices}: at least 1")
    if opts.max_delay_ms < 0:
        raise ValueError(f"simulator option max_delay_ms={opts.max_delay_ms}: must be >= 0")
    if opts.max_streams < 1:
        raise ValueError(f"simulator option max_streams={opts.max_streams}: at least 1")
    if opts.host_limit < 0:
        raise ValueError(f"simulator option host_limit={opts.host_limit}: must be >= 0")
    return opts
