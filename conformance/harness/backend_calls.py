"""The raw path to the backend: a call made in its host thread's worker, with a time
limit, recorded, and what the harness remembers of it; host memory read back.  The
harness judges the answers (``Harness.call``); the suite's own reads go through here
alone."""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from acl_conformance.adapters.base import CallTimeout
from acl_conformance.reference_impl.calls import CALLS
from acl_conformance.reference_impl.constants import ACL_SUCCESS
from acl_conformance.reference_impl.constants import SIZE_MAX
from acl_conformance.reference_impl.constants import MemcpyKind
from acl_conformance.reference_impl.constants import error_name
from acl_conformance.reference_impl.record import CallRecord

from . import gates
from .failure import BackendCrash
from .failure import BackendTimeout
from .failure_evidence import gather

if TYPE_CHECKING:  # pragma: no cover
    from .harness import Harness

D2H = int(MemcpyKind.ACL_MEMCPY_DEVICE_TO_HOST)

CALL_TIMEOUT_SECONDS = 60.0
"""How long one call into the backend may take before it is reported as TIMEOUT, unless
the run says otherwise (``--acl-call-timeout``)."""

_C_RANGES = {
    "size_t": (0, SIZE_MAX),
    "uint64_t": (0, SIZE_MAX),
    "uint32_t": (0, 2**32 - 1),
    "int32_t": (-(2**31), 2**31 - 1),
    "aclrtMemcpyKind": (-(2**31), 2**31 - 1),
}


@dataclass(frozen=True)
class Written:
    """A copy to a symbol that the backend accepted: what it may have written."""

    device: int | None
    """The calling thread's current device (None when the harness cannot tell)."""
    symbol: int
    offset: int
    count: int


def check_c_ranges(name: str, args: dict[str, Any]) -> None:
    """A suite bug, not a backend failure: an argument C cannot represent."""
    for p in CALLS[name].params:
        lim = _C_RANGES.get(p.ctype)
        v = args.get(p.name)
        if lim is not None and isinstance(v, int) and not lim[0] <= v <= lim[1]:
            raise ValueError(f"{name}: {p.name}={v} does not fit {p.ctype}")


def raw(h: Harness, name: str, thread: int, args: dict[str, Any], label: str) -> CallRecord:
    """Make ``name(**args)`` on the backend as host ``thread``; its record.  A hang, a
    raise or an adapter's own time-out poisons the harness (BackendTimeout or
    BackendCrash, naming ``label``)."""
    if h.poisoned:
        kind = type(h.poison_error) if h.poison_error is not None else BackendCrash
        raise kind(f"the backend is unusable after an earlier failure: {h.poisoned}", gather(h))
    adapter = h.adapter

    def job(**kw: Any) -> CallRecord:
        with adapter.host_thread(thread):
            rec = adapter.record(name, kw)
        # Taken the moment the call returns: which gates were open by then.
        rec.gates_open = frozenset(h.open_gates)
        return rec

    token = h.releaser.enter() if gates.any_closed(h) else None
    try:
        if adapter.calls_may_hang:
            rec: CallRecord = h.worker(thread).run(job, h.call_timeout, **args)
        else:
            rec = job(**args)
    except concurrent.futures.TimeoutError:
        h.poisoned = f"{label} did not return within {h.call_timeout:g} s"
        h.poison_error = BackendTimeout(h.poisoned, gather(h))
        raise h.poison_error from None
    except CallTimeout as exc:  # the adapter's own limit
        h.poisoned = f"{label} did not return: {exc}"
        h.poison_error = BackendTimeout(h.poisoned, gather(h))
        raise h.poison_error from exc
    except Exception as exc:  # the backend raised instead of answering
        h.poisoned = f"{label} raised {type(exc).__name__}: {exc}"
        h.poison_error = BackendCrash(h.poisoned, gather(h))
        raise h.poison_error from exc
    finally:
        if token is not None:
            h.releaser.leave(token)
    return rec


def read_back(h: Harness, address: int, count: int, thread: int) -> bytes:
    """The ``count`` bytes at host ``address`` (a crash if the backend cannot say)."""
    r = raw(h, "read_host", thread, {"src": address, "count": count}, "read_host")
    if r.code != ACL_SUCCESS:
        raise BackendCrash(
            f"reading host memory at 0x{address:x} failed with {error_name(r.acl_error)}", gather(h)
        )
    data: bytes = r.outputs["data"]
    return bytes(data)


def remember(h: Harness, name: str, args: dict[str, Any], result: CallRecord, thread: int) -> None:
    """Note what a successful call made, undid or wrote, for the harness to clean up at
    close (and for a reset to rewrite, ``reset.py``)."""
    if not result.ok:
        return
    if name in ("memcpy_to_symbol_async", "memcpy_to_symbol"):
        if args.get("count"):
            # Where the copy went: the thread's current device as the backend accepted it
            # (None: not known, any device).
            h.writes.append(
                Written(h.thread_devices.get(thread), args["symbol"], args["offset"], args["count"])
            )
    elif name == "host_register":
        h.registrations.append(int(args["ptr"]))
    elif name == "host_unregister" and args["ptr"] in h.registrations:
        h.registrations.remove(args["ptr"])
    elif name == "set_device":
        h.devices_used.add(int(args["device_id"]))
        h.thread_devices[thread] = int(args["device_id"])
    elif name == "reset_device":
        h.devices_reset.add(int(args["device_id"]))
        h.thread_devices.pop(thread, None)
        # The device's streams died with it (the model knows which are left).
        h.streams = [s for s in h.streams if h.model.stream_device(s) is not None]
    elif name == "create_stream" and "stream" in result.outputs:
        h.streams.append(int(result.outputs["stream"]))
    elif name == "destroy_stream" and args["stream"] in h.streams:
        h.streams.remove(args["stream"])
    elif name == "create_event" and "event" in result.outputs:
        h.events.append(int(result.outputs["event"]))
    elif name == "destroy_event" and args["event"] in h.events:
        h.events.remove(args["event"])
    elif name == "launch_gate" and "gate" in result.outputs:
        h.gates.append(int(result.outputs["gate"]))
