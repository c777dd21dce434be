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


DEVICE_LIKE_SETUP_MS = 200
"""``setup_ms`` under ``device_like`` unless given: a real device's context creation, roughly."""


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
    setup_ms: float = 0.0
    """Creating a device's context (a set_device that finds none live) takes this long."""
    frees_wait: bool = False
    """aclrtFreeHost and aclrtHostUnregister first wait until every stream of every device
    with a live context has run what was issued before the call (gates included)."""
    host_funcs_serial: bool = False
    """The host functions (gates) of all streams of one device run one at a time: a closed
    gate holds the gates of every other stream of its device."""
    zero_filled: bool = False
    """The variables start zero-filled (as CANN's loaded image has them), instead of the
    fixed pattern: bytes read from the wrong place then often look like contents a copy
    left untouched."""
    device_ids: tuple[int, ...] = ()
    """The devices this instance shows (a device group: ``--devices-per-worker``), of the
    ``devices`` it has, as devices 0 .. len-1 in that order; empty: all of them."""
    touch_log: str = ""
    """A file to which each device brought up (its first context) is appended, as a line
    ``WORKER PHYSICAL-DEVICE``: what the device-group tests check."""
    pageable_staged: bool = False
    """A pageable aclrtMemcpyToSymbolAsync copies its source at the call, issues the copy
    from that copy on the stream and returns once it has run (the device gets the source as
    at the call, not as at the moment the stream drained)."""

    @property
    def visible(self) -> tuple[int, ...]:
        """The physical device behind each device the instance shows, in order."""
        return self.device_ids or tuple(range(self.devices))

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
        if self.zero_filled:
            parts.append("zero_filled=1")
        if self.setup_ms:
            parts.append(f"setup_ms={self.setup_ms:g}")
        for flag in ("frees_wait", "host_funcs_serial", "pageable_staged"):
            if getattr(self, flag):
                parts.append(f"{flag}=1")
        return ", ".join(parts)


DEVICE_LIKE = "device_like"
"""A shorthand option, not a field: the four device-like options at once (``setup_ms``
``DEVICE_LIKE_SETUP_MS`` unless given, ``frees_wait``, ``host_funcs_serial``,
``pageable_staged``); each may still be given on its own."""

NAMES: tuple[str, ...] = (*(f.name for f in fields(Options)), DEVICE_LIKE)


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


def _ids(value: Any) -> tuple[int, ...]:
    """``"2,3"`` or a sequence of integers."""
    items = [v for v in value.split(",") if v.strip()] if isinstance(value, str) else list(value)
    return tuple(_int("device_ids", v.strip() if isinstance(v, str) else v) for v in items)


def parse(raw: Mapping[str, Any]) -> Options:
    """Validate options given as Python values or as strings; ValueError names the bad one."""
    unknown = sorted(set(raw) - set(NAMES))
    if unknown:
        raise ValueError(f"unknown simulator option {unknown[0]!r} (known: {', '.join(NAMES)})")
    d = Options()
    if _bool(DEVICE_LIKE, raw.get(DEVICE_LIKE, False)):
        d = Options(
            setup_ms=DEVICE_LIKE_SETUP_MS,
            frees_wait=True,
            host_funcs_serial=True,
            pageable_staged=True,
        )
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
        zero_filled=_bool("zero_filled", raw.get("zero_filled", d.zero_filled)),
        setup_ms=_float("setup_ms", raw.get("setup_ms", d.setup_ms)),
        frees_wait=_bool("frees_wait", raw.get("frees_wait", d.frees_wait)),
        host_funcs_serial=_bool(
            "host_funcs_serial", raw.get("host_funcs_serial", d.host_funcs_serial)
        ),
        pageable_staged=_bool("pageable_staged", raw.get("pageable_staged", d.pageable_staged)),
        device_ids=_ids(raw.get("device_ids", d.device_ids)),
        touch_log=str(raw.get("touch_log", d.touch_log)),
    )
    if opts.devices < 1:
        raise ValueError(f"simulator option devices={opts.devices}: at least 1")
    bad = [i for i in opts.device_ids if not 0 <= i < opts.devices]
    if bad:
        raise ValueError(
            f"simulator option device_ids: device {bad[0]} is not one of the "
            f"{opts.devices} devices (devices={opts.devices})"
        )
    if len(set(opts.device_ids)) != len(opts.device_ids):
        raise ValueError("simulator option device_ids: a device is named twice")
    if opts.max_delay_ms < 0:
        raise ValueError(f"simulator option max_delay_ms={opts.max_delay_ms}: must be >= 0")
    if opts.max_streams < 1:
        raise ValueError(f"simulator option max_streams={opts.max_streams}: at least 1")
    if not 0 <= opts.setup_ms <= 60_000:
        raise ValueError(f"simulator option setup_ms={opts.setup_ms:g}: 0 to 60000")
    if opts.host_limit < 0:
        raise ValueError(f"simulator option host_limit={opts.host_limit}: must be >= 0")
    return opts
